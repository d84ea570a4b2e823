"""``prema``: the tile-level latency model of PREMA (Choi and Rhu, HPCA 2020), Algorithm 1.

PREMA sees a layer as a product of a weight matrix (``m x k``: output features by reduction)
with an activation matrix (``k x n``: reduction by activation columns). In npuweave's
``(count, m, k, n)`` GEMM convention that is PREMA ``m`` = our ``n``, PREMA ``n`` = our ``m``
(times the batch). The weight matrix is cut into ``SH x SW`` tiles (``SH`` = array rows along the
reduction, ``SW`` = array columns along the outputs) and the activation columns into blocks of
``ACC``, the depth of the accumulator queue. One GEMM_OP multiplies a weight tile with one block:

* compute ``C = a + SH + 2 * SW`` cycles for a block of ``a`` columns (fill, stream, drain),
* fetch ``M = (SH * SW * wbytes + SH * a * ebytes) / (bytes per cycle)`` for the next op's tiles,
* the op takes ``max(C, M)``: compute overlaps the next fetch (double buffering).

Full blocks (``a = ACC``) are *inner* tiles; the remainder ``a = n mod ACC``, when nonzero, is an
*outer* tile. A layer takes ``tiles * (floor(n/ACC) * T_inner + phi * T_outer)`` cycles.

Choices (documented in ``docs/COST_MODEL.md``):

* ``ACC = 2048``: TPUv1 has 4096-deep accumulators, double-buffered, so one GEMM_OP fills half.
* Weight tiles are counted with ``ceil`` on both weight dimensions. The algorithm as printed
  floors them, which gives zero time to layers smaller than the array; the paper's Fig. 3 treats
  the ragged edge tiles as (smaller) outer tiles, which occupy the array as long as full ones.
* ``count`` products run back to back; with ``A`` arrays the weight tiles are dealt round-robin
  and the ``A`` concurrent fetches of a round share the DRAM bandwidth.
* Vector work is added as in ``systolic-ws``. DRAM bytes and ``memory_s`` come from the shared
  traffic model; ``compute_s`` carries Algorithm 1's time, which already includes fetch stalls.
"""

from __future__ import annotations

from npuweave.cost.systolic import batched_gemm, serial_cost
from npuweave.cost.traffic import cdiv
from npuweave.cost.types import LayerCost
from npuweave.hardware.npu import NPU
from npuweave.workload.layer import Layer

PREMA_ACC = 2048
"""Accumulator-queue depth: activation columns per GEMM_OP."""


def tile_cycles(cols: int, npu: NPU, weight_bits: int, sharers: int = 1) -> float:
    """``max(C, M)`` of one GEMM_OP over ``cols`` activation columns (0 when ``cols`` is 0).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> tile_cycles(2048, preset("prema"), 16)  # C = 2048 + 128 + 256; M = 557056 B / 511.4 B/cycle
    2432
    """
    if cols == 0:
        return 0
    sh, sw = npu.pe_rows, npu.pe_cols
    compute = cols + sh + 2 * sw
    fetch = sh * sw * weight_bits / 8 + sh * cols * npu.element_bytes
    memory = sharers * fetch * npu.clock_hz / npu.dram_bw
    return max(compute, memory)


def prema_cycles(layer: Layer, npu: NPU, batch: int, weight_bits: int,
                 acc: int = PREMA_ACC) -> float:
    """Algorithm 1's array cycles for the layer's GEMMs (0 for layers without one).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> prema_cycles(fc, preset("prema"), 1, 16)  # 2 tiles x outer tile of 1 column (1 + 384)
    770
    """
    shape = batched_gemm(layer, batch)
    if shape is None or 0 in shape:
        return 0
    count, m, k, n = shape
    tiles = count * cdiv(n, npu.pe_cols) * cdiv(k, npu.pe_rows)
    arrays = npu.arrays * npu.cores
    rounds = cdiv(tiles, arrays)
    sharers = min(arrays, tiles)
    full, rem = divmod(m, acc)
    per_round = (full * tile_cycles(acc, npu, weight_bits, sharers)
                 + tile_cycles(rem, npu, weight_bits, sharers))
    return rounds * per_round


def prema(layer: Layer, npu: NPU, batch: int, weight_bits: int) -> LayerCost:
    """Cost of ``layer`` under PREMA's Algorithm 1 plus vector cycles.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> round(prema(fc, preset("prema"), 1, 16).compute_s * 1e9)  # 770 cycles at 700 MHz
    1100
    """
    return serial_cost(layer, npu, batch, weight_bits,
                       prema_cycles(layer, npu, batch, weight_bits))
