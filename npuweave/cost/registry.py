"""Cost models by name, and the front door: ``layer_cost``, ``profile``, ``unschedulable``.

A cost model is a pure function ``(layer, npu, batch, weight_bits) -> LayerCost``. The front
door resolves the layer's weight width from ``formats`` first, so the cached call sees only
hashable arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache

from npuweave.cost.maestro import maestro, maestro_pooled
from npuweave.cost.prema import prema
from npuweave.cost.roofline import roofline
from npuweave.cost.systolic import systolic_ws, systolic_ws_db
from npuweave.cost.traffic import Formats, weight_bits, weight_bytes, weight_tiles
from npuweave.cost.types import LayerCost
from npuweave.errors import unknown_name
from npuweave.hardware.npu import NPU
from npuweave.workload.layer import Layer, LayerKind, check_batch

CostModel = Callable[[Layer, NPU, int, int], LayerCost]

_MODELS: dict[str, tuple[CostModel, str]] = {
    "systolic-ws": (systolic_ws, "weight-stationary systolic array, SCALE-Sim v3 fold cycles"
                                 " (default)"),
    "systolic-ws-db": (systolic_ws_db, "weight-stationary with double-buffered weights: next"
                                       " fold's weights load while the current one streams"),
    "prema": (prema, "PREMA Algorithm 1: inner/outer tiles, compute overlapped with next fetch"),
    "maestro": (maestro, "MAESTRO kcp_ws (NVDLA-like weight-stationary), NoC unconstrained,"
                         " each array (NNP-I's ICEs) an engine: the thesis's layer times"),
    "maestro-pooled": (maestro_pooled, "maestro with all arrays pooled into one MAESTRO array"),
    "roofline": (roofline, "max(MACs / peak, bytes / bandwidth): the sanity lower bound"),
}


def cost_models() -> dict[str, str]:
    """Registered cost models: name -> one-line description.

    Examples
    --------
    >>> sorted(cost_models())
    ['maestro', 'maestro-pooled', 'prema', 'roofline', 'systolic-ws', 'systolic-ws-db']
    """
    return {name: desc for name, (_, desc) in _MODELS.items()}


def register_cost_model(name: str, fn: CostModel, description: str) -> None:
    """Add (or replace) a cost model under ``name``; ``fn`` must be pure and hashable-argument."""
    _MODELS[name] = (fn, description)
    clear_cache()


def get_cost_model(name: str) -> CostModel:
    """The model function registered as ``name``; unknown names raise ``UnknownNameError``."""
    try:
        return _MODELS[name][0]
    except KeyError:
        raise unknown_name("cost model", name, list(_MODELS)) from None


@cache
def _cached(layer: Layer, npu: NPU, batch: int, bits: int, model: str) -> LayerCost:
    return _MODELS[model][0](layer, npu, batch, bits)


def clear_cache() -> None:
    """Forget cached layer costs (benchmarks use it to time cold profiles)."""
    _cached.cache_clear()


def layer_cost(layer: Layer, npu: NPU, batch: int = 1, formats: Formats = None,
               model: str = "systolic-ws") -> LayerCost:
    """Cost of one layer on ``npu`` for a whole batch (pure; results are cached).

    Parameters
    ----------
    layer, npu : the frozen layer and NPU.
    batch : samples per inference, >= 1.
    formats : None (the NPU's precision), an int weight width, or a mapping from
        ``"<layer>.weight"`` / ``"<layer>"`` to a number format with ``.bits``.
    model : a name from ``cost_models()``.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> layer_cost(fc, preset("prema"), formats=8).weight_bytes
    2570
    """
    batch = check_batch(batch)
    get_cost_model(model)
    return _cached(layer, npu, batch, weight_bits(layer, npu, formats), model)


def profile(layers: Iterable[Layer], npu: NPU, batch: int = 1, formats: Formats = None,
            model: str = "systolic-ws") -> list[LayerCost]:
    """``layer_cost`` of every layer, in order; ``sum(result)`` is the model's total.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> [c.macs for c in profile([fc, fc], preset("prema"), batch=4)]
    [10240, 10240]
    """
    batch = check_batch(batch)
    get_cost_model(model)
    return [_cached(layer, npu, batch, weight_bits(layer, npu, formats), model)
            for layer in layers]


def _size(nbytes: int) -> str:
    """``102.8 MiB``, ``2.9 KiB``, ``1000 B``: one decimal, a trailing ``.0`` dropped."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            text = f"{nbytes / scale:.1f}"
            return f"{text[:-2] if text.endswith('.0') else text} {unit}"
    return f"{nbytes} B"


def unschedulable(layers: Iterable[Layer], npu: NPU, batch: int = 1,
                  formats: Formats = None) -> list[tuple[str, str]]:
    """Layers whose weights exceed the weight buffer, each with the reason and the way out.

    Such layers still profile (their weights stream in tiles); a scheduler that keeps a layer's
    weights resident needs to know. Embedding tables are gathered, never held, so never listed.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import Layer, LayerKind
    >>> fc = Layer("fc6", LayerKind.GEMM, ("Gemm",), (1, 1, 9216, 4096), 9216 * 4096, 0,
    ...            9216 * 4096, 9216, 4096)
    >>> unschedulable([fc], preset("prema"))
    [('fc6', 'weights 72 MiB > weight buffer 4 MiB: split into 18 weight tiles')]
    """
    check_batch(batch)
    out = []
    for layer in layers:
        bits = weight_bits(layer, npu, formats)
        tiles = weight_tiles(layer, npu, bits)
        if tiles <= 1:
            continue
        why = (f"weights {_size(weight_bytes(layer, bits))} > weight buffer "
               f"{_size(npu.weight_buffer)}: split into {tiles} weight tiles")
        if layer.kind is LayerKind.RECURRENT:
            why += ", fetched again at every time step"
        out.append((layer.name, why))
    return out
