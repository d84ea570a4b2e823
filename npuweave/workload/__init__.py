"""Workloads: the graph IR, ONNX import, lowering to ``Layer``s, and the built-in zoo.

The front door is ``load_layers(spec)``: ``spec`` is a zoo name (``"resnet50"``, ``"bert-base"``,
see ``zoo_names()``) or a path to an ``.onnx`` file. Layers are per sample; the cost model
applies the batch size.

Examples
--------
>>> from npuweave.workload import load_layers
>>> layers = load_layers("resnet50")          # doctest: +SKIP
>>> sum(l.macs for l in layers) / 1e9         # doctest: +SKIP
4.1
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from npuweave.errors import ConfigError, ModelImportError
from npuweave.workload.graph import Graph, Op, Tensor
from npuweave.workload.layer import Geometry, Layer, LayerKind

# Imported eagerly and last-bound on purpose: the submodule ``lower`` would otherwise shadow the
# function of the same name on this package the first time it is imported.
from npuweave.workload.lower import lower

__all__ = [
    "Geometry", "Graph", "Layer", "LayerKind", "Op", "Tensor",
    "load_graph", "load_layers", "lower", "parse_model_spec", "zoo_names",
]


def zoo_names() -> list[str]:
    """Names of the built-in models (aliases such as ``RN`` resolve too)."""
    from npuweave.workload import zoo

    return zoo.names()


def _is_path(spec: str | Path) -> bool:
    s = str(spec)
    return isinstance(spec, Path) or s.endswith(".onnx") or "/" in s or Path(s).is_file()


def _value(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None if text.lower() == "none" else text


def parse_model_spec(spec: str) -> tuple[str, dict[str, object]]:
    """Split ``"bert-base:seq_len=32:..."`` into the zoo name and its builder parameters.

    Examples
    --------
    >>> parse_model_spec("bert-base:seq_len=32")
    ('bert-base', {'seq_len': 32})
    >>> parse_model_spec("resnet50")
    ('resnet50', {})

    A key given twice is an error (``key_values``), not "the last one wins".
    """
    from npuweave.fileio.pairs import key_values

    name, *pairs = spec.split(":")
    raw = key_values(pairs, f"model spec {spec[:80]!r}", "bert-base:seq_len=32")
    return name, {key: _value(value) for key, value in raw.items()}


def load_graph(spec: str | Path, **params: object) -> Graph:
    """Build a ``Graph`` from a zoo spec, an ONNX path or a SCALE-Sim topology ``.csv``.

    A zoo spec is a name with optional builder parameters, ``"bert-base:seq_len=32"``;
    keyword ``params`` add to (and override) them. For ONNX files ``params`` go to
    ``import_onnx`` (``batch=``, ``dims=``).
    """
    if str(spec).lower().endswith(".csv"):
        from npuweave.workload.scalesim import read_topology

        if params:
            raise ConfigError(f"{spec}: a SCALE-Sim topology takes no parameters, got "
                              f"{sorted(params)}")
        return read_topology(spec)
    if _is_path(spec):
        from npuweave.workload.onnx_import import import_onnx

        return import_onnx(spec, **params)  # type: ignore[arg-type]
    from npuweave.workload import zoo

    name, inline = parse_model_spec(str(spec))
    return zoo.build(name, **{**inline, **params})


@cache
def _cached_layers(spec: str, params: tuple[tuple[str, object], ...]) -> tuple[Layer, ...]:
    layers = tuple(lower(load_graph(spec, **dict(params))))
    if not layers:
        raise ModelImportError(f"{spec}: the model has no layers to cost (only pass-through "
                               "ops such as Identity or Reshape); give a model that computes")
    return layers


def load_layers(spec: str | Path, **params: object) -> tuple[Layer, ...]:
    """Layers of a zoo model or ONNX file (cached per spec and parameters)."""
    return _cached_layers(str(spec), tuple(sorted(params.items())))
