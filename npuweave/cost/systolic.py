"""``systolic-ws``: cycle counts of a weight-stationary systolic array, as SCALE-Sim v3 counts them.

An ``R x C`` array holds an ``R x C`` block of the (k x n) weight operand: rows of the array
index the reduction dimension k, columns the output dimension n. A GEMM of an (m x k)
activation matrix with a (k x n) weight matrix is cut into ``ceil(k/R) * ceil(n/C)`` *folds*
that run one after another. One fold costs

* ``R`` cycles to shift the weights into the array,
* ``m`` cycles to stream the activation rows in,
* ``R - 1`` cycles of skew (row ``r`` of the array starts ``r`` cycles late),
* ``C - 1`` cycles for the last partial sums to leave through the columns,

that is ``2R + C + m - 2`` cycles, whether or not the fold fills the array. SCALE-Sim reports
the index of the last busy cycle counted from zero, one less than the cycle count, so a GEMM
that it simulates alone takes ``folds * (2R + C + m - 2) - 1`` "Total Cycles" (checked against
``scalesim==3.0.0`` by ``benchmarks/scalesim_crosscheck.py``; see ``docs/COST_MODEL.md``).

A layer's ``count`` independent products (conv groups, depthwise channels, attention heads,
recurrent time steps) are ``count`` such GEMMs back to back, each its own SCALE-Sim layer run.
With ``A = arrays * cores`` arrays the layer's folds are dealt round-robin, so ``rounds =
ceil(count * folds / A)`` fold times pass; the per-run "- 1" is kept once per run, at most once
per round.

Vector work (standalone vector layers and the ops fused into a weighted layer) runs on the
vector unit after the array, ``ceil(batch * vector_ops / lanes)`` cycles, not overlapped: a
conservative rule that keeps the compute time an upper bound of both units' work.
"""

from __future__ import annotations

from npuweave.cost.traffic import assemble, cdiv
from npuweave.cost.types import LayerCost
from npuweave.hardware.npu import NPU
from npuweave.workload.layer import Layer, LayerKind


def ws_fold_cycles(m: int, rows: int, cols: int) -> int:
    """Cycles of one weight-stationary fold that streams ``m`` activation rows.

    Examples
    --------
    >>> ws_fold_cycles(10, 4, 4)  # 4 fill + 10 stream + 3 skew + 3 drain
    20
    """
    return 2 * rows + cols + m - 2


def ws_gemm_cycles(m: int, k: int, n: int, rows: int, cols: int) -> int:
    """SCALE-Sim v3 WS "Total Cycles" of one (m x k) @ (k x n) GEMM on one ``rows x cols`` array.

    Examples
    --------
    >>> ws_gemm_cycles(10, 9, 6, 4, 4)  # 3 x 2 folds of 20 cycles, minus one
    119
    """
    return cdiv(k, rows) * cdiv(n, cols) * ws_fold_cycles(m, rows, cols) - 1


def batched_gemm(layer: Layer, batch: int) -> tuple[int, int, int, int] | None:
    """The layer's ``(count, m, k, n)`` for a whole batch.

    The batch streams more rows through the same weights (``m * batch``), except for attention,
    whose second operand differs per sample: there the batch multiplies ``count``.

    Examples
    --------
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> batched_gemm(fc, 8)
    (1, 8, 256, 10)
    """
    if layer.gemm is None:
        return None
    count, m, k, n = layer.gemm
    if layer.kind is LayerKind.MATMUL:
        return count * batch, m, k, n
    return count, m * batch, k, n


def gemm_cycles(layer: Layer, npu: NPU, batch: int = 1) -> int:
    """Array cycles of the layer's GEMMs over all ``npu`` arrays (0 for layers without one).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> gemm_cycles(fc, preset("prema"))  # 2 x 1 folds of (256 + 128 + 1 - 2) cycles, minus one
    765
    """
    plan = _fold_plan(layer, npu, batch)
    if plan is None:
        return 0
    count, m, rounds = plan
    return rounds * ws_fold_cycles(m, npu.pe_rows, npu.pe_cols) - min(count, rounds)


def _fold_plan(layer: Layer, npu: NPU, batch: int) -> tuple[int, int, int] | None:
    """``(count, m, rounds)``: GEMM runs, streamed rows per fold, fold times over all arrays."""
    shape = batched_gemm(layer, batch)
    if shape is None:
        return None
    count, m, k, n = shape
    if count * m * k * n == 0:
        return None
    folds = count * cdiv(k, npu.pe_rows) * cdiv(n, npu.pe_cols)
    return count, m, cdiv(folds, npu.arrays * npu.cores)


def gemm_cycles_db(layer: Layer, npu: NPU, batch: int = 1) -> int:
    """Array cycles with TPU-style double-buffered weights (``systolic-ws-db``).

    The array holds a second weight register per PE, so the next fold's weights shift in while
    the current fold streams: a fold costs ``max(m, R)`` (a fold shorter than ``R`` rows waits
    for its successor's weights), and the pipeline's first weight load, skew and drain
    (``R + (R - 1) + (C - 1)``) are paid once per layer instead of once per fold. With a single
    fold this equals SCALE-Sim's count exactly; with more it is never larger.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> gemm_cycles_db(fc, preset("prema"))  # 2 x max(1, 128) + 128 + 127 + 127, minus one
    637
    """
    plan = _fold_plan(layer, npu, batch)
    if plan is None:
        return 0
    _, m, rounds = plan
    r, c = npu.pe_rows, npu.pe_cols
    if rounds == 1:
        return ws_fold_cycles(m, r, c) - 1
    return rounds * max(m, r) + 2 * r + c - 2 - 1


def vector_cycles(layer: Layer, npu: NPU, batch: int = 1) -> int:
    """Vector-unit cycles: ``ceil(batch * vector_ops / npu.lanes)``.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import Layer, LayerKind
    >>> pool = Layer("pool", LayerKind.VECTOR, ("MaxPool",), None, 0, 1000, 0, 4000, 1000)
    >>> vector_cycles(pool, preset("prema"), batch=2)  # 2000 ops on 128 lanes
    16
    """
    return cdiv(batch * layer.vector_ops, npu.lanes)


def serial_cost(layer: Layer, npu: NPU, batch: int, weight_bits: int,
                array_cycles: float) -> LayerCost:
    """The ``LayerCost`` of a layer whose GEMMs take ``array_cycles`` on the PE array, with its
    ``vector_cycles`` after them, not overlapped (the module docstring's rule). Every registered
    model but ``roofline`` ends here, and ``idle_pe_cycles`` in ``npuweave.cost.energy``
    subtracts the vector cycles again to find the array's.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import Layer, LayerKind
    >>> pool = Layer("pool", LayerKind.VECTOR, ("MaxPool",), None, 0, 1000, 0, 4000, 1000)
    >>> round(serial_cost(pool, preset("prema"), 1, 16, 0).compute_s * 1e9)  # 8 cycles at 700 MHz
    11
    """
    return assemble(layer, npu, batch, weight_bits,
                    array_cycles + vector_cycles(layer, npu, batch))


def systolic_ws(layer: Layer, npu: NPU, batch: int, weight_bits: int) -> LayerCost:
    """Cost of ``layer`` on a weight-stationary ``npu``: SCALE-Sim array cycles plus vector cycles.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> round(systolic_ws(fc, preset("prema"), 1, 16).compute_s * 1e9)  # 765 cycles at 700 MHz
    1093
    """
    return serial_cost(layer, npu, batch, weight_bits, gemm_cycles(layer, npu, batch))


def systolic_ws_db(layer: Layer, npu: NPU, batch: int, weight_bits: int) -> LayerCost:
    """Like ``systolic_ws`` but with double-buffered weights (see ``gemm_cycles_db``)."""
    return serial_cost(layer, npu, batch, weight_bits, gemm_cycles_db(layer, npu, batch))
