"""Group search: split the layer sequence into contiguous groups.

``choose.plan_group`` gives one candidate group at its cheapest slicing (several N and H
slice counts are costed, see ``choose``). Two searches share it (registered by name in ``SEARCHES``):

* ``greedy``: the seed's tail-to-head walk. Start a group at the last layer and grow it
  toward the head while it stays feasible; then start the next group just before it.
* ``dp``: dynamic programming over contiguous groups. ``best[j]`` is the cheapest plan of
  layers ``0..j``; the last group ``i..j`` is grown from ``j`` toward the head, at most
  ``DP_MAX_LAYERS`` layers, and the growth stops at the first infeasible ``i`` (a longer
  group is assumed infeasible too). The greedy groups (allocated, so costed exactly)
  are candidates as well, so the DP plan is never slower than the greedy one; every layer
  alone is a candidate, so it is never slower than layer by layer either. Cost = estimated
  seconds, ties broken by DRAM bytes.

Both searches judge feasibility by the peak-live bound (cheap); the groups they pick are then
allocated for real, and a group whose allocation fails is marked infeasible and the search
runs again (``finalize``).

Layers the grouping does not understand, and layers whose weights cannot sit in LMEM next to
their smallest slice, are barriers: they run alone, ungrouped, with DRAM operands.
"""

from __future__ import annotations

from collections.abc import Callable

from npuweave.compile.layergroup.choose import plan_group
from npuweave.compile.layergroup.evaluate import Context, Failure
from npuweave.compile.layergroup.model import LayerGroup

DP_MAX_LAYERS = 64


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
