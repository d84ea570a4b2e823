"""Group cost: DMA and compute per slice, overlapped as a load/compute/store pipeline.

Slices run one after another. While slice ``s`` computes, the DMA engine stores slice
``s - 1``'s outputs and loads slice ``s + 1``'s inputs, so

    time = fill + sum_s max(compute_s, dma_s) + drain

with ``fill`` = loading slice 0's inputs and the first layer's weights (nothing to overlap
with yet), ``dma_s`` = load of slice ``s + 1`` + store of slice ``s - 1`` (+ the remaining
weights during slice 0, loaded one step ahead as the timestep rules say), and ``drain`` = the
last slice's store. Compute per slice comes from the cost model (``npuweave.cost.layer_cost``)
run on the slice itself: the layer cut to the output rows the slice computes (halo rows
included, so duplicated work is paid for) at the slice's sample count. Per-call overheads of
the model (a systolic array's weight fill and drain per fold) are therefore paid once per
slice, which is what stops the slicing search from cutting a layer into single rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from npuweave.hardware import NPU
from npuweave.workload.layer import Layer

ComputeFn = Callable[[Layer, NPU, int], float]


def compute_model(model: str | ComputeFn) -> ComputeFn:
    """Resolve a cost-model name (``npuweave.cost.cost_models()``) or pass a callable through.

    Examples
    --------
    >>> compute_model("roofline").__name__
    'compute'
    """
    if callable(model):
        return model
    from npuweave.cost import get_cost_model, layer_cost

    get_cost_model(model)  # unknown names fail here, once, with the list of valid ones

    def compute(layer: Layer, npu: NPU, n: int) -> float:
        return layer_cost(layer, npu, n, model=model).compute_s

    return compute


def _part(value: int, rows: int, h: int) -> int:
    return max(1, -(-value * rows // h)) if value else 0


def slice_layer(layer: Layer, rows: int, h: int) -> Layer:
    """``layer`` cut to ``rows`` of its ``h`` output rows: the per-row work scales down.

    The GEMM's streamed rows ``m`` (output pixels), MACs, vector ops and activation sizes
    shrink by ``rows / h`` (rounded up); weights do not. With ``rows >= h`` the layer itself.

    Examples
    --------
    >>> from npuweave.workload.layer import Layer, LayerKind
    >>> c = Layer("c", LayerKind.CONV, ("Conv",), (1, 64, 9, 4), 2304, 256, 40, 576, 256)
    >>> slice_layer(c, 2, 8).gemm, slice_layer(c, 2, 8).macs
    ((1, 16, 9, 4), 576)
    """
    if rows >= h:
        return layer
    gemm = layer.gemm
    if gemm is not None:
        gemm = (gemm[0], _part(gemm[1], rows, h), gemm[2], gemm[3])
    geometry = layer.geometry
    if geometry is not None:
        c, _, w = geometry.out_chw
        geometry = replace(geometry, out_chw=(c, rows, w))
    return replace(layer, gemm=gemm, macs=_part(layer.macs, rows, h),
                   vector_ops=_part(layer.vector_ops, rows, h),
                   in_elems=_part(layer.in_elems, rows, h),
                   out_elems=_part(layer.out_elems, rows, h), geometry=geometry)


@dataclass
class ComputeCache:
    """Memoizes compute seconds per (layer index, samples, output rows) for one compile run."""

    layers: tuple[Layer, ...]
    npu: NPU
    fn: ComputeFn
    memo: dict[tuple[int, int, int], float] = field(default_factory=dict)
    prefix: dict[int, list[float]] = field(default_factory=dict)

    def span_sum(self, first: int, last: int, n: int) -> float:
        """Whole-layer seconds of layers ``first .. last`` at ``n`` samples (prefix sums)."""
        if n not in self.prefix:
            acc = [0.0]
            for i in range(len(self.layers)):
                acc.append(acc[-1] + self(i, n))
            self.prefix[n] = acc
        return self.prefix[n][last + 1] - self.prefix[n][first]

    def __call__(self, i: int, n: int, rows: int = 1, h: int = 1) -> float:
        """Seconds of layer ``i`` for ``n`` samples and ``rows`` of its ``h`` output rows."""
        if rows <= 0:
            return 0.0
        rows = min(rows, h)
        key = (i, n, rows if rows < h else 0)
        if key not in self.memo:
            self.memo[key] = self.fn(slice_layer(self.layers[i], rows, h), self.npu, n)
        return self.memo[key]


@dataclass(frozen=True, slots=True)
class SliceWork:
    """One slice: compute seconds, bytes loaded before it and stored after it."""

    compute_s: float
    load_bytes: int
    store_bytes: int


def pipeline_seconds(work: list[SliceWork], first_weights: int, other_weights: int,
                     dram_bw: float) -> float:
    """Fill, then per slice max(compute, DMA), then drain (see the module docstring).

    Examples
    --------
    One slice, 100 B in, 50 B weights, 20 B out at 10 B/s, 3 s compute:
    fill (100+50)/10 = 15, max(3, 0) = 3, drain 20/10 = 2 -> 20 s.

    >>> pipeline_seconds([SliceWork(3.0, 100, 20)], 50, 0, 10.0)
    20.0
    """
    fill = (work[0].load_bytes + first_weights) / dram_bw
    total = fill
    for s, w in enumerate(work):
        dma = work[s + 1].load_bytes if s + 1 < len(work) else 0
        dma += work[s - 1].store_bytes if s > 0 else 0
        dma += other_weights if s == 0 else 0
        total += max(w.compute_s, dma / dram_bw)
    return total + work[-1].store_bytes / dram_bw
