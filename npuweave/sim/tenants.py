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
from npuweave.sim.units import Footprint

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


def _footprint(tenant: Tenant, layers: Sequence[object] | None, costs: Sequence[LayerCost],
               npu: NPU, batch: int) -> Footprint:
    """Per-unit live and spill bytes of ``tenant`` (tiles split their layer's footprint)."""
    from npuweave.cost.preemption import live_bytes

    e = npu.element_bytes
    by_name: dict[str, tuple[int, int, int]] = {}  # layer -> (live done, live mid-tile, spill)
    for j, c in enumerate(costs):
        if layers is not None:
            lay = layers[j]
            done = live_bytes(lay.out_elems, lay.in_elems, batch, e)  # type: ignore[attr-defined]
            mid = live_bytes(lay.out_elems, lay.in_elems, batch, e,  # type: ignore[attr-defined]
                             tile_done=False)
            name = lay.name  # type: ignore[attr-defined]
        else:  # plain costs: half of the on-chip footprint is the output
            done = mid = c.act_bytes // 2
            name = f"L{j}"
        by_name[name] = (done, mid, c.spill_bytes)
    live, spill, mids = [], [], []
    for unit in tenant.units:
        base, _, tile = unit.rpartition("#t")
        last = True
        if base and "/" in tile:
            k, _, n = tile.partition("/")
            last = k == n
        else:
            base = unit
        done, mid, sp = by_name.get(base, (0, 0, 0))
        live.append(done if last else mid)
        spill.append(sp if last else 0)
        mids.append(mid)
    return Footprint(tuple(live), tuple(spill), tuple(mids))


def costed_tenants(models: Sequence[ModelSpec], npu: NPU, sizes: Sequence[tuple[int, int]],
                   cost_model: str = "systolic-ws") -> tuple[list[Tenant], list[Footprint]]:
    """One tenant (and footprint) per ``(model index, batch)`` in ``sizes``.

    Labels are the model's name, with ``@<batch>`` appended for batches above 1.

    Examples
    --------
    >>> from npuweave.hardware import toy_npu
    >>> m = ("m", [LayerCost(compute_s=1.0, act_bytes=8)])
    >>> ts, fs = costed_tenants([m], toy_npu(), [(0, 1)])
    >>> ts[0].label, fs[0].live
    ('m', (4,))
    """
    from npuweave.workload import load_layers

    min_tile = npu.pe_rows * npu.pe_cols * npu.element_bytes
    tenants, feet = [], []
    layer_cache: dict[int, list[object] | None] = {}
    for k, b in sizes:
        spec = models[k]
        batches([spec], b)
        if isinstance(spec, tuple):
            label, costs, names, layers = str(spec[0]), list(spec[1]), None, None
        else:
            from npuweave.cost import profile

            if k not in layer_cache:
                layer_cache[k] = list(load_layers(spec))
            layers = layer_cache[k]
            costs = profile(layers, npu, batch=b, model=cost_model)  # type: ignore[arg-type]
            label, names = str(spec), [lay.name for lay in layers]  # type: ignore[union-attr]
        t = make_tenant(label if b == 1 else f"{label}@{b}", [c.compute_s for c in costs],
                        [c.weight_bytes for c in costs], npu.weight_buffer, names, label, b,
                        min_tile)
        tenants.append(t)
        feet.append(_footprint(t, layers, costs, npu, b))
    return tenants, feet
