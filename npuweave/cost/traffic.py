"""DRAM traffic of one layer, shared by every cost model.

Rules (all sizes in bytes; ``b`` = batch, ``e`` = ``npu.element_bytes`` for activations):

* **Weights** are fetched once per inference at the layer's weight width ``bits``:
  ``ceil(weight_elems * bits / 8)``. Weights that exceed the weight buffer are fetched in
  ``ceil(weight_bytes / weight_buffer)`` weight tiles, still once each, because the activations
  stay on chip while the tiles take turns. A recurrent layer re-uses its weights every time step
  only while they fit; split weights are fetched again at every step.
* **Embedding** tables stay in DRAM: the layer gathers ``min(table, b * gather_elems)`` elements.
* **Spill**: a layer needs its input and output activations on chip, ``act = (in + out) * b * e``.
  The part of the output that does not fit next to the input,
  ``min(out, max(0, act - act_buffer))``, is written to DRAM and read back by its consumer, so it
  counts twice. The producer carries the whole round trip.
* **Transfers**: one DMA stream pays ``npu.dram_latency_cycles`` once. A layer has one stream per
  weight tile (per tile and time step when a recurrent layer re-fetches), one for an embedding
  gather, and two for a spill (the write and the read back).

``memory_s = dram_bytes / dram_bw + transfers * latency``.
"""

from __future__ import annotations

from collections.abc import Mapping

from npuweave.cost.types import LayerCost
from npuweave.errors import ConfigError
from npuweave.hardware.npu import NPU
from npuweave.workload.layer import Layer, LayerKind

Formats = Mapping[str, object] | int | None


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative integers (folds, tiles, whole bytes)."""
    return -(-a // b)


def weight_bytes(layer: Layer, bits: int) -> int:
    """The layer's weights at ``bits`` per element, rounded up to whole bytes."""
    return cdiv(layer.weight_elems * bits, 8)


def _bits_of(value: object, where: str) -> int:
    bits = value if isinstance(value, int) else getattr(value, "bits", None)
    if not isinstance(bits, int) or isinstance(bits, bool) or bits < 1:
        raise ConfigError(f"weight format for {where} has no positive integer bit width "
                          f"(got {value!r}); give a format with .bits >= 1 or an int")
    return bits


def weight_bits(layer: Layer, npu: NPU, formats: Formats = None) -> int:
    """Bit width of ``layer``'s weights.

    ``formats`` is None (the NPU's ``precision_bits``), an int (one width for every layer) or a
    mapping from ``"<layer>.weight"`` or ``"<layer>"`` to a format with ``.bits`` (or an int).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> weight_bits(fc, preset("prema"), {"fc.weight": 4})
    4
    """
    if formats is None:
        return npu.precision_bits
    if isinstance(formats, int) and not isinstance(formats, bool):
        return _bits_of(formats, "every layer")
    if not isinstance(formats, Mapping):
        raise ConfigError(f"formats must be None, an int bit width or a mapping of layer names "
                          f"to formats, got {type(formats).__name__}")
    for key in (f"{layer.name}.weight", layer.name):
        if key in formats:
            return _bits_of(formats[key], repr(key))
    return npu.precision_bits


def weight_tiles(layer: Layer, npu: NPU, bits: int) -> int:
    """Weight-buffer loads the layer's weights need: ``ceil(bytes / weight_buffer)``, at least 1.

    Embedding tables are gathered, never held, and attention has no weights: both give 0.
    """
    if layer.kind is LayerKind.EMBEDDING or layer.weight_elems == 0:
        return 0
    return max(1, cdiv(weight_bytes(layer, bits), max(1, npu.weight_buffer)))


def weight_traffic(layer: Layer, npu: NPU, batch: int, bits: int) -> tuple[int, int]:
    """``(weight_bytes, transfers)`` fetched from DRAM for weights or an embedding gather."""
    if layer.kind is LayerKind.EMBEDDING:
        elems = min(layer.weight_elems, batch * layer.gather_elems) if layer.weight_elems \
            else batch * layer.gather_elems
        return cdiv(elems * bits, 8), int(elems > 0)
    tiles = weight_tiles(layer, npu, bits)
    nbytes = weight_bytes(layer, bits)
    if tiles > 1 and layer.kind is LayerKind.RECURRENT and layer.gemm is not None:
        steps = layer.gemm[0]
        return nbytes * steps, tiles * steps
    return nbytes, tiles


def act_bytes(layer: Layer, npu: NPU, batch: int) -> int:
    """Input plus output activation bytes of the whole batch."""
    return (layer.in_elems + layer.out_elems) * batch * npu.element_bytes


def spill_bytes(layer: Layer, npu: NPU, batch: int) -> int:
    """Output bytes that do not fit the activation buffer next to the input, times two.

    Examples
    --------
    >>> from npuweave.hardware import NPU
    >>> from npuweave.workload.layer import Layer, LayerKind
    >>> npu = NPU("toy", 4, 4, 1e9, 1e9, weight_buffer=1024, act_buffer=1000)
    >>> v = Layer("v", LayerKind.VECTOR, ("Relu",), None, 0, 400, 0, 400, 400)
    >>> spill_bytes(v, npu, 1)  # 800 + 800 bytes at 16 bit, 600 over: written and read back
    1200
    """
    out = layer.out_elems * batch * npu.element_bytes
    over = act_bytes(layer, npu, batch) - npu.act_buffer
    return 2 * min(out, max(0, over))


def memory_seconds(npu: NPU, dram_bytes: int, transfers: int) -> float:
    """DRAM busy time: bytes over bandwidth plus one latency per transfer."""
    return dram_bytes / npu.dram_bw + transfers * npu.dram_latency_s


def assemble(layer: Layer, npu: NPU, batch: int, bits: int, cycles: float) -> LayerCost:
    """Build the ``LayerCost`` of a layer whose compute takes ``cycles`` array/vector cycles.

    Examples
    --------
    >>> from npuweave.hardware import NPU
    >>> from npuweave.workload.layer import Layer, LayerKind
    >>> npu = NPU("toy", 4, 4, 1e9, 1e9, weight_buffer=1024, act_buffer=1 << 20)
    >>> fc = Layer("fc", LayerKind.GEMM, ("Gemm",), (1, 1, 8, 4), 32, 0, 32, 8, 4)
    >>> assemble(fc, npu, 1, 16, 10).weight_bytes  # 32 weights x 2 bytes
    64
    """
    wbytes, transfers = weight_traffic(layer, npu, batch, bits)
    spill = spill_bytes(layer, npu, batch)
    transfers += 2 if spill else 0
    macs = layer.macs * batch
    util = macs / (npu.macs_per_cycle * cycles) if macs and cycles else 0.0
    return LayerCost(
        compute_s=cycles / npu.clock_hz,
        memory_s=memory_seconds(npu, wbytes + spill, transfers),
        dram_bytes=wbytes + spill,
        weight_bytes=wbytes,
        spill_bytes=spill,
        act_bytes=act_bytes(layer, npu, batch),
        macs=macs,
        utilization=min(1.0, util),
    )
