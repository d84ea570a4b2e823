"""The front door: ``compile_groups(layers, npu)`` -> ``GroupPlan``.

Passes, in order: ``analyze_layers`` (tensor graph, heights, unsupported layers), run every
layer alone at its fastest (its cheapest slicing, or streaming its weights from DRAM when
that is faster: the layer-by-layer baseline, which also proves that each layer's smallest
slice fits), the group search named by ``method``, then attach each group's baseline.
"""

from __future__ import annotations

from dataclasses import replace

from npuweave.compile.layergroup.choose import plan_group
from npuweave.compile.layergroup.cost import (
    ComputeCache,
    ComputeFn,
    SliceWork,
    compute_model,
    pipeline_seconds,
)
from npuweave.compile.layergroup.evaluate import Context, Failure, try_slicing
from npuweave.compile.layergroup.model import GroupPlan, GroupStatus, LayerGroup
from npuweave.compile.layergroup.search import SEARCHES, finalize
from npuweave.compile.layergroup.span import make_span
from npuweave.compile.layergroup.tensors import analyze_layers
from npuweave.errors import ConfigError, InfeasibleError, unknown_name
from npuweave.hardware import NPU
from npuweave.workload.layer import Layer

STREAM_FASTER = "streaming its weights is faster than any LMEM slicing"


def check_npu(npu: NPU) -> None:
    """Reject NPUs the compiler cannot allocate on (no LMEM, zero banks, tiny banks)."""
    if npu.lmem_banks <= 0:
        raise ConfigError(f"NPU {npu.name!r}: lmem_banks must be > 0 (got {npu.lmem_banks})")
    if npu.lmem_bytes <= 0:
        raise ConfigError(f"NPU {npu.name!r} has no local memory (lmem_bytes = "
                          f"{npu.lmem_bytes}); use a preset with LMEM such as 'lmem-16m'")
    if npu.lmem_bytes < npu.lmem_banks:
        raise ConfigError(f"NPU {npu.name!r}: {npu.lmem_banks} banks do not fit in "
                          f"lmem_bytes = {npu.lmem_bytes}")
    if npu.dram_bw <= 0:
        raise ConfigError(f"NPU {npu.name!r}: dram_bw must be > 0 (got {npu.dram_bw})")


def run_ungrouped(ctx: Context, i: int, reason: str) -> LayerGroup:
    """Layer ``i`` alone with DRAM operands, its weights streaming through LMEM.

    The same pipeline formula as a group with one slice whose weights all arrive while it
    computes: fill = its inputs, then max(compute, weight load), drain = its output.
    """
    view, eb = ctx.view, ctx.eb
    layer = view.layers[i]
    ins = sum(view.tensors[t].elems for t in set(view.inputs[i])) * ctx.batch * eb
    out = view.output(i).elems * ctx.batch * eb
    w = layer.weight_elems * eb
    work = [SliceWork(ctx.compute(i, ctx.batch), ins, out)]
    seconds = pipeline_seconds(work, 0, w, ctx.npu.dram_bw)
    return LayerGroup((layer.name,), i, GroupStatus.UNGROUPED, reason, dram_bytes=w + ins + out,
                      seconds=seconds, inputs=tuple(dict.fromkeys(view.inputs[i])),
                      outputs=(layer.name,))


def run_alone(ctx: Context, i: int) -> tuple[LayerGroup, bool]:
    """Layer ``i`` alone at its fastest: its cheapest slicing, or streaming its weights.

    Returns the run and whether the layer is a barrier (it cannot join any group: the
    grouping does not understand it, or its weights do not fit LMEM beside its smallest
    slice). Raises ``InfeasibleError`` when even one sample and one output row (plus the
    input rows that row reads) do not fit the LMEM.
    """
    reason = ctx.view.unsupported[i]
    if reason:
        return run_ungrouped(ctx, i, reason), True
    g = plan_group(ctx, i, i)
    if isinstance(g, LayerGroup):
        streamed = run_ungrouped(ctx, i, STREAM_FASTER)
        return (streamed if streamed.seconds < g.seconds else g), False
    span = make_span(ctx.view, i, i)
    h_min = 1 if span.whole_h else max(ctx.view.output(i).h, 1)
    bare = try_slicing(ctx, span, ctx.batch, h_min, check_dup=False, place=False, weights=False)
    if isinstance(bare, LayerGroup):
        w = ctx.view.layers[i].weight_elems * ctx.eb
        return run_ungrouped(ctx, i, f"weights ({w} B) do not fit LMEM beside its smallest "
                                     "slice; weights stream from DRAM"), True
    name = ctx.view.layers[i].name
    assert isinstance(bare, Failure)
    raise InfeasibleError(
        f"layer {name!r} needs at least {bare.min_bytes} bytes of local memory for its "
        f"smallest slice (1 sample, {h_min} H slices) but NPU {ctx.npu.name!r} has "
        f"{ctx.npu.lmem_bytes}; use an NPU with a larger LMEM")


def compile_groups(layers: tuple[Layer, ...] | list[Layer], npu: NPU, *, batch: int = 1,
                   method: str = "dp", cost_model: str | ComputeFn = "systolic-ws",
                   model: str = "") -> GroupPlan:
    """Partition ``layers`` into layer groups that run out of ``npu``'s local memory.

    Parameters
    ----------
    layers : the model's layers in topological order (``load_layers``).
    npu : an NPU with ``lmem_bytes`` and ``lmem_banks``.
    batch : samples per inference (N is sliced first, down to one sample).
    method : ``"dp"`` (cheapest estimated time) or ``"greedy"`` (the seed's tail-to-head).
    cost_model : a ``layer_cost`` model name (``npuweave.cost.cost_models()``) or a callable
        ``(layer, npu, n) -> compute seconds``.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload import load_layers
    >>> plan = compile_groups(load_layers("resnet50"), preset("lmem-16m"))  # doctest: +SKIP
    >>> plan.dram_bytes < plan.baseline_dram_bytes                          # doctest: +SKIP
    True
    """
    check_npu(npu)
    if batch < 1:
        raise ConfigError(f"batch must be >= 1 (got {batch})")
    if method not in SEARCHES:
        raise unknown_name("layer-group search", method, list(SEARCHES))
    view = analyze_layers(layers)
    ctx = Context(view, npu, batch, ComputeCache(view.layers, npu, compute_model(cost_model)))
    runs = [run_alone(ctx, i) for i in range(len(view.layers))]
    alone = [g for g, _ in runs]
    barrier = [b for _, b in runs]
    groups = []
    for g in finalize(ctx, method, barrier, alone):
        base = alone[g.first:g.first + len(g.layers)]
        groups.append(replace(g, baseline_dram_bytes=sum(b.dram_bytes for b in base),
                              baseline_seconds=sum(b.seconds for b in base)))
    return GroupPlan(model, npu.name, batch, method, npu.clock_hz, npu.lmem_bytes,
                     npu.lmem_banks, tuple(groups))
