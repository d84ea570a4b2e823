"""Group cost: DMA and compute per slice, overlapped as a load/compute/store pipeline.

Slices run one after another. While slice ``s`` computes, the DMA engine stores slice
``s - 1``'s outputs and loads slice ``s + 1``'s inputs, so

    time = fill + sum_s max(compute_s, dma_s) + drain

with ``fill`` = loading slice 0's inputs and the first layer's weights (nothing to overlap
with yet), ``dma_s`` = load of slice ``s + 1`` + store of slice ``s - 1`` (+ the remaining
weights during slice 0, loaded one step ahead as the timestep rules say), and ``drain`` = the
last slice's store. Compute per slice comes from the cost model (``npuweave.cost.layer_cost``)
at the slice's sample count, scaled by the fraction of output rows the slice computes
(halo rows included, so duplicated work is paid for).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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


@dataclass
class ComputeCache:
    """Memoizes compute seconds per (layer index, samples) for one compile run."""

    layers: tuple[Layer, ...]
    npu: NPU
    fn: ComputeFn
    memo: dict[tuple[int, int], float] = field(default_factory=dict)

    def __call__(self, i: int, n: int) -> float:
        key = (i, n)
        if key not in self.memo:
            self.memo[key] = self.fn(self.layers[i], self.npu, n)
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
