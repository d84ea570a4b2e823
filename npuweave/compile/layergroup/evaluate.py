"""Try one candidate group at one slicing: ranges, h/2 rule, buffers, allocation, cost.

``try_slicing`` is the unit of work of both searches; ``choose.plan_group`` costs several
slicings of a candidate group with it and keeps the cheapest that allocates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from npuweave.compile.layergroup.allocate import allocate, peak_of
from npuweave.compile.layergroup.backward import propagate_ranges, too_much_duplication
from npuweave.compile.layergroup.cost import ComputeCache, SliceWork, pipeline_seconds
from npuweave.compile.layergroup.model import Buffer, GroupStatus, LayerGroup
from npuweave.compile.layergroup.slicing import Rows, n_pieces, rows, split_range
from npuweave.compile.layergroup.span import GroupSpan
from npuweave.compile.layergroup.tensors import ModelView
from npuweave.compile.layergroup.timestep import lifetimes
from npuweave.hardware import NPU

SCRATCH_BYTES_PER_ELEM = 4  # 32-bit partial sums


@dataclass
class Context:
    """Everything a compile run shares: the model, the NPU, the batch, memoized results."""

    view: ModelView
    npu: NPU
    batch: int
    compute: ComputeCache
    memo: dict[tuple[int, int, bool], LayerGroup | Failure] = field(default_factory=dict)
    no_h: dict[int, int] = field(default_factory=dict)  # last -> first: H slicing breaks h/2

    @property
    def eb(self) -> int:
        return self.npu.element_bytes


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a candidate group (or one slicing of it) cannot run; ``min_bytes`` = peak live."""

    reason: str
    min_bytes: int = 0


def _sizes(ctx: Context, span: GroupSpan, ranges: list[dict[str, Rows]], n: int,
           weights: bool) -> tuple[dict[str, int], dict[int, int], dict[int, int]]:
    view, eb = ctx.view, ctx.eb
    act = {t: max(rows(r.get(t)) for r in ranges) * view.tensors[t].row_elems * n * eb
           for t in ranges[0]}
    wts = {i: view.layers[i].weight_elems * eb if weights else 0 for i in span.indices}
    scratch = {i: n * view.output(i).row_elems * SCRATCH_BYTES_PER_ELEM
               for i in span.indices if view.layers[i].macs > 0}
    return act, wts, scratch


def _slice_work(ctx: Context, span: GroupSpan, r: dict[str, Rows], n: int,
                h_slices: int, k: int) -> SliceWork:
    view, eb = ctx.view, ctx.eb
    compute = sum(ctx.compute(i, n, rows(r.get(view.layers[i].name)), view.output(i).h)
                  for i in span.indices)
    load = sum(rows(r.get(t)) * view.tensors[t].row_elems for t in span.inputs)
    store = sum(rows(split_range(view.tensors[t].h, h_slices, k)) * view.tensors[t].row_elems
                for t in span.outputs)
    return SliceWork(compute, load * n * eb, store * n * eb)


def _grouped(ctx: Context, span: GroupSpan, ranges: list[dict[str, Rows]], n_count: int,
             buffers: tuple[Buffer, ...], weights: dict[int, int]) -> LayerGroup:
    h = len(ranges)
    per_n = {n: [_slice_work(ctx, span, r, n, h, k) for k, r in enumerate(ranges)]
             for n in set(n_pieces(ctx.batch, n_count))}  # N slices of equal size work alike
    work = [w for n in n_pieces(ctx.batch, n_count) for w in per_n[n]]
    first_w = weights[span.first]
    other_w = sum(weights.values()) - first_w
    seconds = pipeline_seconds(work, first_w, other_w, ctx.npu.dram_bw)
    dram = sum(w.load_bytes + w.store_bytes for w in work) + first_w + other_w
    names = tuple(ctx.view.layers[i].name for i in span.indices)
    return LayerGroup(names, span.first, GroupStatus.GROUPED, "", n_count,
                      -(-ctx.batch // n_count), h, span.timesteps, buffers, span.inputs,
                      span.outputs, dram, seconds)


def try_slicing(ctx: Context, span: GroupSpan, n_count: int, h_slices: int, *,
                check_dup: bool = True, place: bool = True,
                weights: bool = True) -> LayerGroup | Failure:
    """Run one slicing of ``span`` through every rule; a ``LayerGroup`` when it works.

    ``place=False`` stops before allocation: only the peak-live bound is checked and the
    returned group has no buffers (its cost and DRAM bytes are exact). ``weights=False`` leaves weights out.
    """
    view = ctx.view
    ranges = [propagate_ranges(view, span, h_slices, k) for k in range(h_slices)]
    if check_dup and h_slices > 1:
        bad = too_much_duplication(view, span, ranges)
        if bad:
            return Failure(f"backward-H duplication of {bad!r} exceeds h/2")
    n = -(-ctx.batch // n_count)
    act, wts, scratch = _sizes(ctx, span, ranges, n, weights)
    lives = lifetimes(view, span, act, wts, scratch, sliced=n_count * h_slices > 1)
    peak = peak_of((start, end, size) for _, _, size, start, end, _ in lives)
    if peak > ctx.npu.lmem_bytes:
        return Failure("LMEM too small", peak)
    buffers: tuple[Buffer, ...] = ()
    if place:
        unplaced = tuple(Buffer(i, *life) for i, life in enumerate(lives))
        placed = allocate(unplaced, ctx.npu.lmem_bytes, ctx.npu.lmem_banks)
        if placed is None:
            return Failure("allocation failed", peak)
        buffers = placed
    return _grouped(ctx, span, ranges, n_count, buffers, wts)
