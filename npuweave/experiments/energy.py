"""Energy of scheduling and serving runs: per-request dynamic energy plus the timeline's static.

A request of model ``M`` at batch ``b`` costs the dynamic energy of ``M``'s layers at ``b``
(``Profile.energies``: compute, SRAM, DRAM); the run adds the static energy of its whole span
(``npuweave.metrics.energy.static_energy``: idle time costs static power, gated components save
it). A scheduler that finishes the same work sooner therefore spends less energy.

Per-model rows share the run's static energy in proportion to each model's standalone busy
time (requests served times the model's time alone). Peak power is the static power plus the
largest dynamic power of any one layer running alone (its dynamic energy over its time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from npuweave.cost.energy import LayerEnergy, energy_spec
from npuweave.cost.profiles import profile_model
from npuweave.errors import NpuweaveError
from npuweave.hardware.npu import NPU
from npuweave.metrics.energy import busy_union, energy_row, static_energy
from npuweave.workload import load_layers


@cache
def model_energy(model: str, npu: NPU, batch: int = 1,
                 cost_model: str = "systolic-ws") -> tuple[LayerEnergy, float, float]:
    """``(dynamic energy, peak dynamic power W, time alone s)`` of one inference of ``model``
    at ``batch``.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> dyn, peak_w, alone_s = model_energy("ncf", preset("prema"))
    >>> dyn.static_j == 0 and peak_w > 0 and alone_s > 0
    True
    """
    prof = profile_model(load_layers(model), npu, batch=batch, cost_model=cost_model,
                         name=model)
    energies, _ = prof.energies()
    dyn = sum((LayerEnergy(e.compute_j, e.sram_j, e.dram_j) for e in energies), LayerEnergy())
    peak = max((e.dynamic_j / c.time_s for e, c in zip(energies, prof.costs, strict=True)
                if c.time_s > 0), default=0.0)
    return dyn, peak, sum(c.time_s for c in prof.costs)


def _split(dyn: LayerEnergy) -> dict[str, float]:
    return {"compute_j": dyn.compute_j, "sram_j": dyn.sram_j, "dram_j": dyn.dram_j}


def run_static(npu: NPU, span_s: float, intervals: Any = ()) -> float:
    """Static joules of a run over ``span_s``; gating needs the run's busy ``intervals``."""
    spec, _ = energy_spec(npu)
    if spec.gated_power_w <= 0 or (span_s > 0 and not intervals):
        # without a timeline the gated parts are priced as always on (an upper bound)
        return static_energy([], span_s, spec.static_power_w)
    busy = busy_union((iv.start_s, iv.end_s) for iv in intervals)
    return static_energy(busy, span_s, spec.static_power_w, spec.gated_power_w, spec.wake_up_s)


def result_energy(result: Any, npu: NPU, cost_model: str = "systolic-ws") -> dict[str, float]:
    """Energy columns of one closed-loop ``SimResult`` (``npuweave schedule``).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.sim import run_streams
    >>> npu = preset("memory-centric")
    >>> res = run_streams(["ncf"], npu, requests=2, scheduler="fcfs")
    >>> result_energy(res, npu)["energy_j"] > 0
    True
    """
    spec, _ = energy_spec(npu)
    dyn, peak, lat, n = LayerEnergy(), 0.0, 0.0, 0
    for rec in result.requests:
        d, p, _ = model_energy(rec.model, npu, rec.batch, cost_model)
        dyn, peak, lat, n = dyn + d, max(peak, p), lat + rec.latency_s, n + rec.batch
    static = run_static(npu, result.makespan_s, result.intervals)
    mean_lat = lat / len(result.requests) if result.requests else 0.0
    return energy_row(_split(dyn), static, result.makespan_s, n, mean_lat,
                      spec.static_power_w + peak)


def serve_energy(models: Sequence[str], table: Any, span_s: float, npu: NPU,
                 cost_model: str = "systolic-ws", intervals: Any = ()) -> list[dict[str, float]]:
    """Energy columns for a serving run: the whole run first, then one per model.

    Each served request is costed at batch 1 (under dynamic batching an upper bound: a batch
    fetches its weights once). Killed requests are not counted; their partial work is.
    """
    spec, _ = energy_spec(npu)
    done = np.isfinite(table.finish_s)
    per = [model_energy(m, npu, 1, cost_model) for m in models]
    served = [int(np.sum(done & (table.model == k))) for k in range(len(models))]
    lat = [float(np.mean((table.finish_s - table.arrival_s)[done & (table.model == k)]))
           if served[k] else 0.0 for k in range(len(models))]
    static = run_static(npu, span_s, intervals)
    weight = [s * p[2] for s, p in zip(served, per, strict=True)]
    whole_w = sum(weight) or 1.0
    rows = []
    for k in range(len(models)):
        dyn = _split(LayerEnergy(*(served[k] * v for v in _split(per[k][0]).values())))
        rows.append(energy_row(dyn, static * weight[k] / whole_w, span_s, served[k], lat[k],
                               spec.static_power_w + per[k][1]))
    total_dyn = {key: sum(r[f"{key[:-2]}_energy_j"] for r in rows)
                 for key in ("compute_j", "sram_j", "dram_j")}
    n = sum(served)
    mean_lat = sum(s * la for s, la in zip(served, lat, strict=True)) / n if n else 0.0
    whole = energy_row(total_dyn, static, span_s, n, mean_lat,
                       spec.static_power_w + max((p[1] for p in per), default=0.0))
    return [whole, *rows]


def unit_power(npu: NPU, batch: int = 1, cost_model: str = "systolic-ws"
               ) -> Callable[[str, str], float]:
    """``(tenant, unit) -> dynamic watts`` of a layer running alone (0 for unknown units).

    A tenant label ``"model#2"`` is the model ``"model"``; a unit is one of its layers.
    """
    def watts(tenant: str, unit: str) -> float:
        model = tenant.split("#", 1)[0]
        try:
            return _layer_watts(model, npu, batch, cost_model).get(unit, 0.0)
        except NpuweaveError:
            return 0.0
    return watts


@cache
def _layer_watts(model: str, npu: NPU, batch: int, cost_model: str) -> dict[str, float]:
    prof = profile_model(load_layers(model), npu, batch=batch, cost_model=cost_model,
                         name=model)
    energies, _ = prof.energies()
    return {la.name: e.dynamic_j / c.time_s for la, e, c
            in zip(prof.layers, energies, prof.costs, strict=True) if c.time_s > 0}


def power_track(runs: dict[str, Any], npu: NPU, batch: int = 1,
                cost_model: str = "systolic-ws") -> list[dict[str, Any]]:
    """Power counter events for ``runs`` (name -> intervals), one process id per run in order,
    as ``npuweave.report.chrome_trace`` numbers them."""
    from npuweave.report.power import power_counter

    spec, _ = energy_spec(npu)
    watts = unit_power(npu, batch, cost_model)
    out: list[dict[str, Any]] = []
    for pid, intervals in enumerate(runs.values(), start=1):
        out += power_counter(intervals, watts, spec.static_power_w, pid)
    return out
