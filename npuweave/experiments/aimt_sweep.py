"""Sweep AI-MT's two thresholds and keep the best setting, as the thesis did for its baseline.

The grid is AI-MT's memory threshold ``mem`` (fraction of the weight buffer) times its distance
threshold ``dist`` (fraction of the buffer fill time), ``MEMS x DISTS`` by default: 49
settings, each rule switched off at 0 (docs/REPRODUCTION.md, "AI-MT, NCF and NNP-I").

The score of a run is its weighted throughput (thesis IV.5.B "Metric"): every finished request
counts its model's standalone time, and the sum is divided by the makespan. Higher is better;
it is the system throughput (STP) measured over the whole run instead of the common window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from npuweave.cost.types import LayerCost
from npuweave.hardware.npu import NPU
from npuweave.schedule.base import Tenant
from npuweave.sim.result import SimResult
from npuweave.sim.streams import alone_time, run_tenants
from npuweave.sim.tenants import tenants_for

MEMS = (0.0, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
DISTS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


@dataclass(frozen=True, slots=True)
class AimtSweep:
    """Every ``(mem, dist, score)`` tried, the best setting, and the best run."""

    rows: tuple[tuple[float, float, float], ...]
    mem: float
    dist: float
    score: float
    result: SimResult


def weighted_throughput(tenants: Sequence[Tenant], buffer_bytes: int,
                        dram_bw: float) -> Callable[[SimResult], float]:
    """Score: sum of standalone times of the finished requests per second of makespan.

    Standalone times are the steady-state ones of ``standalone_time``, the normalizer of STP.
    """
    alone = {t.label: alone_time(t, buffer_bytes, dram_bw) for t in tenants}

    def score(res: SimResult) -> float:
        work = sum(alone[r.tenant] for r in res.requests)
        return work / res.makespan_s if res.makespan_s > 0 else 0.0

    return score


def sweep_aimt(models: list[str | tuple[str, list[LayerCost]]], npu: NPU,
               batch: int | list[int] = 1, mems: Sequence[float] = MEMS,
               dists: Sequence[float] = DISTS, requests: int = 10,
               window_s: float | None = None, seed: int = 0, cost_model: str = "systolic-ws",
               score: Callable[[SimResult], float] | None = None) -> AimtSweep:
    """Run ``aimt`` for every ``(mem, dist)`` setting and report the best-scoring one
    (ties: the first in grid order).

    Examples
    --------
    >>> from npuweave.cost import toy_models
    >>> from npuweave.hardware import toy_npu
    >>> s = sweep_aimt(toy_models(), toy_npu(), mems=(0.0, 0.1), dists=(0.5,), requests=2)
    >>> len(s.rows), s.dist
    (2, 0.5)
    """
    tenants = tenants_for(models, npu, batch, cost_model)
    buf, bw = npu.weight_buffer, npu.dram_bw
    score = score or weighted_throughput(tenants, buf, bw)
    rows: list[tuple[float, float, float]] = []
    best: tuple[float, float, float, SimResult] | None = None
    for mem in mems:
        for dist in dists:
            res = run_tenants(tenants, buf, bw, "aimt", requests, window_s, seed,
                              mem=mem, dist=dist)
            s = score(res)
            rows.append((mem, dist, s))
            if best is None or s > best[2]:
                best = (mem, dist, s, res)
    if best is None:
        from npuweave.errors import ConfigError

        raise ConfigError("sweep_aimt: empty grid; give at least one mem and one dist")
    return AimtSweep(tuple(rows), best[0], best[1], best[2], best[3])
