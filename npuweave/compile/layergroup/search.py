"""Group search: split the layer sequence into contiguous groups.

``plan_group`` finds the slicing of one candidate group: N first (fewest slices that fit,
down to one sample per slice), then H (the fewest H slices whose peak-live bound fits, found
by doubling then bisection, then up to ``H_RETRIES`` more slices if allocation fails). More
H slices only add duplication, so a group that breaks the h/2 rule at its fewest fitting H
slices fails.

Two searches share it (registered by name in ``SEARCHES``):

* ``greedy``: the seed's tail-to-head walk. Start a group at the last layer and grow it
  toward the head while it stays feasible; then start the next group just before it.
* ``dp``: dynamic programming over contiguous groups. ``best[j]`` is the cheapest plan of
  layers ``0..j``; the last group ``i..j`` is grown from ``j`` toward the head, at most
  ``DP_MAX_LAYERS`` layers, and the growth stops at the first infeasible ``i`` (a longer
  group is assumed infeasible too). The greedy groups (allocated, so costed exactly)
  are candidates as well, so the DP plan is never slower than the greedy one. Cost =
  estimated seconds, ties broken by DRAM bytes.

Both searches judge feasibility by the peak-live bound (cheap); the groups they pick are then
allocated for real, and a group whose allocation fails is marked infeasible and the search
runs again (``finalize``).

Layers the grouping does not understand, and layers whose weights cannot sit in LMEM next to
their smallest slice, are barriers: they run alone, ungrouped, with DRAM operands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from npuweave.compile.layergroup.evaluate import Context, Failure, try_slicing
from npuweave.compile.layergroup.model import LayerGroup
from npuweave.compile.layergroup.slicing import n_slice_counts
from npuweave.compile.layergroup.span import GroupSpan, make_span

H_RETRIES = 8
DP_MAX_LAYERS = 64
DUPLICATION = "backward-H duplication"


def _probe(ctx: Context, span: GroupSpan, h: int, check_dup: bool) -> str:
    """"fits", "big" (needs more H slices) or "dup" (needs fewer) at ``h`` H slices."""
    r = try_slicing(ctx, span, ctx.batch, h, check_dup=check_dup, place=False)
    if isinstance(r, LayerGroup):
        return "fits"
    return "dup" if r.reason.startswith(DUPLICATION) else "big"


def _fewest_fitting_h(ctx: Context, span: GroupSpan, h_max: int, check_dup: bool) -> int:
    """Smallest H-slice count that is not "big" (assumes "big" is monotone); 0 if none."""
    lo, h = 1, 2
    while True:
        h = min(h, h_max)
        if _probe(ctx, span, h, check_dup) != "big":
            break
        if h == h_max:
            return 0
        lo, h = h, 2 * h
    hi = h
    while hi - lo > 1:  # invariant: lo is "big", hi is not
        mid = (lo + hi) // 2
        if _probe(ctx, span, mid, check_dup) == "big":
            lo = mid
        else:
            hi = mid
    return hi


def slicings(ctx: Context, span: GroupSpan, check_dup: bool) -> Iterator[tuple[int, int]]:
    """Candidate (N slice count, H slice count) pairs, in the order they are tried."""
    for count in n_slice_counts(ctx.batch):
        yield count, 1
    h_max = 1 if span.whole_h else ctx.view.output(span.last).h
    if h_max < 2:
        return
    h = _fewest_fitting_h(ctx, span, h_max, check_dup)
    if h:
        yield from ((ctx.batch, hh) for hh in range(h, min(h + H_RETRIES, h_max) + 1))


def plan_group(ctx: Context, first: int, last: int, place: bool = True) -> LayerGroup | Failure:
    """The group ``first .. last`` with its slicing, or why it cannot run (memoized).

    With ``place=False`` the LMEM is checked by the peak-live bound only (buffers unplaced).
    """
    key = (first, last, place)
    if key not in ctx.memo:
        span = make_span(ctx.view, first, last)
        check_dup = last > first  # a lone layer re-reads halos but recomputes nothing
        result: LayerGroup | Failure = Failure("does not fit LMEM at any slicing")
        for count, h in slicings(ctx, span, check_dup):
            r = try_slicing(ctx, span, count, h, check_dup=check_dup, place=place)
            if isinstance(r, LayerGroup) or r.reason.startswith(DUPLICATION):
                result = r
                break
            result = r
        ctx.memo[key] = result
    return ctx.memo[key]


Spans = list[tuple[int, int]]


def _feasible(ctx: Context, first: int, last: int) -> LayerGroup | None:
    g = plan_group(ctx, first, last, place=False)
    return g if isinstance(g, LayerGroup) else None


def search_greedy(ctx: Context, barrier: list[bool], alone: list[LayerGroup]) -> Spans:
    """Tail-to-head greedy: each group as long as it stays feasible."""
    spans: Spans = []
    j = len(barrier) - 1
    while j >= 0:
        i = j
        while not barrier[j] and i > 0 and not barrier[i - 1] and _feasible(ctx, i - 1, j):
            i -= 1
        spans.append((i, j))
        j = i - 1
    return spans[::-1]


def search_dp(ctx: Context, barrier: list[bool], alone: list[LayerGroup]) -> Spans:
    """Dynamic programming over contiguous groups, minimizing (seconds, DRAM bytes)."""
    n = len(barrier)
    # the greedy plan, allocated and costed exactly, is a candidate path: DP never loses to it
    greedy_start = {g.first + len(g.layers) - 1: g.first
                    for g in finalize(ctx, "greedy", barrier, alone)}
    best: list[tuple[float, int]] = [(0.0, 0)] * (n + 1)  # best[j + 1]: layers 0..j
    start = [0] * n
    for j in range(n):
        best[j + 1] = (best[j][0] + alone[j].seconds, best[j][1] + alone[j].dram_bytes)
        start[j] = j
        starts = []
        i = j - 1
        while not barrier[j] and i >= max(0, j - DP_MAX_LAYERS + 1) and not barrier[i]:
            if not _feasible(ctx, i, j):
                break
            starts.append(i)
            i -= 1
        if j in greedy_start and greedy_start[j] < j:
            starts.append(greedy_start[j])
        for i in starts:
            g = _feasible(ctx, i, j)
            assert g is not None
            cand = (best[i][0] + g.seconds, best[i][1] + g.dram_bytes)
            if cand < best[j + 1]:
                best[j + 1], start[j] = cand, i
    spans: Spans = []
    j = n - 1
    while j >= 0:
        spans.append((start[j], j))
        j = start[j] - 1
    return spans[::-1]


SEARCHES: dict[str, Callable[[Context, list[bool], list[LayerGroup]], Spans]] = {
    "greedy": search_greedy,
    "dp": search_dp,
}


def finalize(ctx: Context, method: str, barrier: list[bool],
             alone: list[LayerGroup]) -> list[LayerGroup]:
    """Run the search and allocate its groups for real.

    When a picked group cannot be allocated, or only at another slicing than its peak-live
    estimate (so another cost), the estimate is replaced by the real outcome and the search
    runs again, until every picked group is exactly what the search costed.
    """
    while True:
        groups: list[LayerGroup] = []
        for first, last in SEARCHES[method](ctx, barrier, alone):
            if first == last:
                groups.append(alone[first])
                continue
            placed = plan_group(ctx, first, last, place=True)
            probe = ctx.memo[(first, last, False)]
            assert isinstance(probe, LayerGroup)
            if isinstance(placed, Failure) or (placed.n_slices, placed.h_slices) != (
                    probe.n_slices, probe.h_slices):
                ctx.memo[(first, last, False)] = placed
                break
            groups.append(placed)
        else:
            return groups
