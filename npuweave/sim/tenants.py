"""From what a user names (zoo models, ONNX files, or ready per-layer costs) to ``Tenant``s.

Zoo names and ONNX paths are lowered (``npuweave.workload.load_layers``) and costed
(``npuweave.cost.profile``) at each stream's batch size; ``(label, [LayerCost, ...])`` pairs are
used as given. Layers larger than the weight buffer become weight tiles
(``npuweave.schedule.tiling``); the smallest usable tile is one fill of the PE array's weights.
"""

from __future__ import annotations

from collections.abc import Sequence

from npuweave.cost.types import LayerCost
from npuweave.errors import ConfigError
from npuweave.hardware.npu import NPU
from npuweave.schedule.base import Tenant
from npuweave.schedule.tiling import make_tenant

ModelSpec = str | tuple[str, Sequence[LayerCost]]


def batches(models: Sequence[object], batch: int | Sequence[int]) -> list[int]:
    """One batch size per model, validated."""
    out = [batch] * len(models) if isinstance(batch, int) else list(batch)
    if len(out) != len(models):
        raise ConfigError(f'"batch" lists {len(out)} sizes for {len(models)} models; give one '
                          "per model or a single integer")
    for b in out:
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise ConfigError(f'"batch" must be an integer >= 1, got {b!r}')
    return out


def _costs(spec: ModelSpec, npu: NPU, batch: int,
           cost_model: str) -> tuple[str, str, list[str] | None, list[LayerCost]]:
    if isinstance(spec, tuple):
        label, costs = spec
        return str(label), str(label), None, list(costs)
    from npuweave.cost import profile
    from npuweave.workload import load_layers

    layers = load_layers(spec)
    costs = profile(layers, npu, batch=batch, model=cost_model)
    return str(spec), str(spec), [layer.name for layer in layers], costs


def tenants_for(models: Sequence[ModelSpec], npu: NPU, batch: int | Sequence[int],
                cost_model: str = "systolic-ws") -> list[Tenant]:
    """One tenant per model; a label used twice gets ``#2``, ``#3``, ... appended."""
    if not models:
        raise ConfigError("no models to run; give at least one model")
    sizes = batches(models, batch)
    min_tile = npu.pe_rows * npu.pe_cols * npu.element_bytes
    out: list[Tenant] = []
    seen: dict[str, int] = {}
    for spec, b in zip(models, sizes):
        label, model, names, costs = _costs(spec, npu, b, cost_model)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        out.append(make_tenant(label, [c.compute_s for c in costs],
                               [c.weight_bytes for c in costs], npu.weight_buffer, names,
                               model, b, min_tile))
    return out
