"""Choose a candidate group's slicing for speed: the cheapest slicing that fits LMEM.

A group's time depends on its slicing (``cost.pipeline_seconds``): one slice serializes load,
compute and store; more slices overlap the next slice's load and the previous slice's store
with the current compute and shrink the unhidden fill and drain, but add halo rows (loaded,
and recomputed inside the group), per-slice overheads of the compute model and, once the
group is sliced at all, keep every weight resident. ``slicing_candidates`` therefore costs
several slicings and ``plan_group`` keeps the cheapest that allocates:

* every N slice count (``n_slice_counts``: one per distinct samples-per-slice) with whole H;
* at one sample per slice, H slice counts from the fewest whose peak-live bound fits (doubling
  then bisection) up the ladder ``H_LADDER`` (every count to 8, then about x1.25 per step),
  stopping once ``PATIENCE`` fitting counts in a row do not beat the best H slicing so far
  (pipelining stopped helping), or at the first count that breaks the h/2 rule (more slices
  only add duplication).

The same function slices every group, one-layer groups (the layer-by-layer baseline)
included, so the baseline and the grouped plan get the same slicing freedom.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from npuweave.compile.layergroup.allocate import align
from npuweave.compile.layergroup.evaluate import Context, Failure, try_slicing
from npuweave.compile.layergroup.model import LayerGroup
from npuweave.compile.layergroup.slicing import n_pieces, n_slice_counts
from npuweave.compile.layergroup.span import GroupSpan, make_span

H_RETRIES = 8  # extra H counts tried, one by one, when no costed slicing allocates
PATIENCE = 2
DUPLICATION = "backward-H duplication"


def h_ladder(start: int, h_max: int) -> Iterator[int]:
    """``start``, then the ladder 2..8, 10, 13, 17, ... above it, up to ``h_max``.

    Examples
    --------
    >>> list(h_ladder(5, 30))
    [5, 6, 7, 8, 10, 13, 17, 22, 28, 30]
    """
    yield start
    h = 2
    while h < h_max:
        if h > start:
            yield h
        h = h + 1 if h < 8 else -(-h * 5 // 4)
    if h_max > start:
        yield h_max


Evaluate = Callable[[int, int], "LayerGroup | Failure"]


def _evaluator(ctx: Context, span: GroupSpan, check_dup: bool) -> Evaluate:
    """``at(n_count, h)``: ``try_slicing`` without placement, memoized for this span."""
    seen: dict[tuple[int, int], LayerGroup | Failure] = {}

    def at(count: int, h: int) -> LayerGroup | Failure:
        if (count, h) not in seen:
            seen[count, h] = try_slicing(ctx, span, count, h, check_dup=check_dup, place=False)
        return seen[count, h]

    return at


def _big(r: LayerGroup | Failure) -> bool:
    """Needs more H slices (not a fit, and not a duplication failure that needs fewer)."""
    return isinstance(r, Failure) and not r.reason.startswith(DUPLICATION)


def fewest_fitting_h(at: Evaluate, n_count: int, h_max: int) -> int:
    """Smallest H-slice count that is not "big" (assumes "big" is monotone); 0 if none."""
    lo, h = 1, 2
    while True:
        h = min(h, h_max)
        if not _big(at(n_count, h)):
            break
        if h == h_max:
            return 0
        lo, h = h, 2 * h
    hi = h
    while hi - lo > 1:  # invariant: lo is "big", hi is not
        mid = (lo + hi) // 2
        if _big(at(n_count, mid)):
            lo = mid
        else:
            hi = mid
    return hi


def _h_walk(ctx: Context, span: GroupSpan, at: Evaluate,
            found: list[LayerGroup]) -> Failure | None:
    """Append the fitting H slicings of the ladder walk to ``found``; the last failure."""
    h_max = 1 if span.whole_h else ctx.view.output(span.last).h
    if h_max < 2:
        return None
    start = fewest_fitting_h(at, ctx.batch, h_max)
    if not start:
        return Failure("LMEM too small")
    best, stale, failure = float("inf"), 0, None
    for h in h_ladder(start, h_max):
        r = at(ctx.batch, h)
        if isinstance(r, Failure):
            failure = r
            if r.reason.startswith(DUPLICATION):
                break
            continue
        found.append(r)
        stale = 0 if r.seconds < best else stale + 1
        best = min(best, r.seconds)
        if stale >= PATIENCE:
            break
    return failure


def lower_bound(ctx: Context, span: GroupSpan, n_count: int, h_slices: int) -> float:
    """Seconds no slicing with ``n_count`` N slices (and ``h_slices`` > 1: any H slicing)
    can beat: the compute of every slice back to back plus the unhidden first weight load,
    and for whole-height slices the first load and the last store as well.

    Cutting a layer into H slices never lowers its summed compute (each slice pays the
    model's per-call overheads), so the whole layer's compute bounds its H slices.
    """
    view, eb = ctx.view, ctx.eb
    pieces = n_pieces(ctx.batch, n_count)
    seconds = sum(pieces.count(n) * ctx.compute.span_sum(span.first, span.last, n)
                  for n in set(pieces))
    nbytes = view.layers[span.first].weight_elems * eb
    if h_slices == 1:
        nbytes += sum(view.tensors[t].elems for t in span.inputs) * pieces[0] * eb
        nbytes += sum(view.tensors[t].elems for t in span.outputs) * pieces[-1] * eb
    return seconds + nbytes / ctx.npu.dram_bw


def slicing_candidates(ctx: Context, span: GroupSpan, check_dup: bool,
                       prune: bool = False) -> tuple[list[LayerGroup], Failure]:
    """Slicings whose peak-live bound fits, cheapest first (ties: fewer DRAM bytes, then
    fewer slices), and the failure to report when there is none. ``prune`` skips the
    slicings whose ``lower_bound`` cannot beat the best found (the first entry is the same).
    """
    at = _evaluator(ctx, span, check_dup)
    found: list[LayerGroup] = []
    failure = Failure("does not fit LMEM at any slicing")
    # a sliced group keeps every weight resident: when they alone overflow LMEM, only the
    # unsliced run can fit (a cheap bound that skips most slicings of long groups)
    resident = sum(align(ctx.view.layers[i].weight_elems * ctx.eb) for i in span.indices)
    counts = n_slice_counts(ctx.batch) if resident <= ctx.npu.lmem_bytes else [1]
    best = float("inf")
    bound = lower_bound if prune else (lambda *_: -1.0)
    for count in counts:
        if bound(ctx, span, count, 1) >= best:
            continue  # cannot beat a slicing already found
        r = at(count, 1)
        if isinstance(r, LayerGroup):
            found.append(r)
            best = min(best, r.seconds)
        else:
            failure = r
    if (resident <= ctx.npu.lmem_bytes and ctx.no_h.get(span.last, -1) < span.first
            and bound(ctx, span, ctx.batch, 2) < best):
        failure = _h_walk(ctx, span, at, found) or failure
        two = at(ctx.batch, 2) if not span.whole_h and check_dup else None
        if isinstance(two, Failure) and two.reason.startswith(DUPLICATION):
            # growing the group toward the head only adds halo: no H slicing of any
            # longer group with this last layer passes the h/2 rule either
            ctx.no_h[span.last] = max(ctx.no_h.get(span.last, -1), span.first)
    found.sort(key=lambda g: (g.seconds, g.dram_bytes, g.slices))
    return found, failure


def _allocate_first(ctx: Context, span: GroupSpan, check_dup: bool,
                    candidates: list[LayerGroup]) -> LayerGroup | Failure:
    """Allocate the candidates in cost order; if none fits, try more H slices one by one."""
    failure: Failure = Failure("allocation failed")
    for c in candidates:
        r = try_slicing(ctx, span, c.n_slices, c.h_slices, check_dup=check_dup)
        if isinstance(r, LayerGroup):
            return r
        failure = r
    h_max = 1 if span.whole_h else ctx.view.output(span.last).h
    h_top = max((c.h_slices for c in candidates if c.n_slices == ctx.batch), default=1)
    for h in range(h_top + 1, min(h_top + H_RETRIES, h_max) + 1):
        r = try_slicing(ctx, span, ctx.batch, h, check_dup=check_dup)
        if isinstance(r, LayerGroup) or r.reason.startswith(DUPLICATION):
            return r
        failure = r
    return failure


def plan_group(ctx: Context, first: int, last: int, place: bool = True) -> LayerGroup | Failure:
    """The group ``first .. last`` at its cheapest slicing, or why it cannot run (memoized).

    With ``place=False`` the LMEM is checked by the peak-live bound only (buffers unplaced)
    and slicings that cannot beat the best one found are skipped; with ``place=True`` (only
    for the groups a search picked) every candidate is costed and allocated in cost order,
    and the cheapest that really allocates is returned.
    """
    key = (first, last, place)
    if key not in ctx.memo:
        span = make_span(ctx.view, first, last)
        check_dup = last > first  # a lone layer re-reads halos but recomputes nothing
        found, failure = slicing_candidates(ctx, span, check_dup, prune=not place)
        if not found:
            ctx.memo[key] = failure
        elif not place:
            ctx.memo[key] = found[0]
        else:
            ctx.memo[key] = _allocate_first(ctx, span, check_dup, found)
    return ctx.memo[key]
