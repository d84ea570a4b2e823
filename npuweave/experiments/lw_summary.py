"""The Layerweaver reproduction's summary: averages per scheduler and the thesis's headlines.

``averages(rows)`` gives per-scenario, per-scheduler means over pairs; ``headline(rows)`` the
numbers the thesis quotes (``THESIS``, at the end, has the thesis's own), computed the way the
thesis states them (see ``headline``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

#: The thesis's three baselines (IV.5.B); they all score STP 1 on a pair of streams.
BASELINES = ("compute-only", "memory-only", "fair")
#: Metrics of every run that ``averages`` condenses.
METRICS = ("stp", "antt", "fairness", "pe_utilization", "dram_utilization", "makespan_ratio")


def _mean(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values (a run that did nothing has no ANTT)."""
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def _geomean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    if not vals or min(vals) <= 0:
        return 0.0 if vals else None
    return float(np.exp(np.mean(np.log(vals))))


def _by(rows: Sequence[Mapping[str, Any]], scenario: str, scheduler: str) -> dict[str, Any]:
    return {r["pair"]: r for r in rows if r["scenario"] == scenario and r["scheduler"] == scheduler}


def averages(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per scenario and scheduler: arithmetic means over pairs (STP also as a geomean)."""
    out = []
    for scenario in dict.fromkeys(r["scenario"] for r in rows):
        for name in dict.fromkeys(r["scheduler"] for r in rows):
            group = list(_by(rows, scenario, name).values())
            if not group:
                continue
            row: dict[str, Any] = {"scenario": scenario, "scheduler": name, "pairs": len(group)}
            for m in METRICS:
                row[m] = _mean(g[m] for g in group)
            row["stp_geomean"] = _geomean(g["stp"] for g in group)
            out.append(row)
    return out


def _ratios(rows: Sequence[Mapping[str, Any]], scenario: str, base: Sequence[str]) -> list[float]:
    """Per pair: STP of Layerweaver over the mean STP of the ``base`` runs that did work."""
    lw = _by(rows, scenario, "layerweaver")
    refs = [_by(rows, scenario, b) for b in base]
    out = []
    for pair, row in lw.items():
        # A baseline that ran nothing (memory-only when the cost model finds no memory-bound
        # model in the pair) is not a baseline for that pair.
        stps = [ref[pair]["stp"] for ref in refs if pair in ref and ref[pair]["stp"]]
        if stps:
            out.append(row["stp"] / float(np.mean(stps)))
    return out


def headline(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """The thesis's summary numbers from our rows, by scenario (keys as in ``THESIS``).

    STP gain over the baselines is the mean over pairs of ``STP_LW / mean(STP_baselines) - 1``
    (the thesis: "by 60.1% on average"), leaving out baselines that ran nothing; over AI-MT it
    is the geomean ratio minus 1 ("21.6% higher geomean throughput"). Utilizations and ANTT
    are arithmetic means over pairs; maximum slowdown is the geomean over pairs of each run's
    largest NTT ("the geomean of maximum slowdown"); ``bound_share`` is the mean of
    Layerweaver's STP over the pair's fluid upper bound.
    """
    out: dict[str, dict[str, float]] = {}
    for scenario in dict.fromkeys(r["scenario"] for r in rows):
        lw = list(_by(rows, scenario, "layerweaver").values())
        if not lw:
            continue
        res: dict[str, float] = {}
        base = _ratios(rows, scenario, BASELINES)
        if base:
            res["stp_gain_vs_baselines"] = float(np.mean(base)) - 1
            res["stp_gain_vs_baselines_max"] = float(np.max(base)) - 1
        vs_aimt = _ratios(rows, scenario, ("aimt",))
        if vs_aimt:
            res["stp_gain_vs_aimt"] = float(np.exp(np.mean(np.log(vs_aimt)))) - 1
        for m in ("pe_utilization", "dram_utilization", "antt"):
            res[m] = float(np.mean([r[m] for r in lw]))
        aimt = list(_by(rows, scenario, "aimt").values())
        if aimt:
            res["antt_aimt"] = float(np.mean([r["antt"] for r in aimt]))
        for name, group in (("max_slowdown", lw), ("max_slowdown_aimt", aimt)):
            vals = [r.get("max_slowdown") for r in group]
            if group and all(v is not None for v in vals):
                res[name] = _geomean(vals) or 0.0
        shares = [r["bound_share"] for r in lw if r.get("bound_share") is not None]
        if shares:
            res["bound_share"] = float(np.mean(shares))
        out[scenario] = res
    return out


#: What the thesis reports (IV.5.C), by scenario.
THESIS = {
    "single-batch": {"stp_gain_vs_baselines": 0.601, "stp_gain_vs_baselines_max": 0.752,
                     "stp_gain_vs_aimt": 0.216, "pe_utilization": 0.997,
                     "dram_utilization": 0.913, "antt": 1.27, "antt_aimt": 1.55,
                     "max_slowdown": 1.40, "max_slowdown_aimt": 1.89},
    "multi-batch": {"stp_gain_vs_baselines": 0.539, "stp_gain_vs_baselines_max": 0.902,
                    "stp_gain_vs_aimt": 0.163, "pe_utilization": 0.999,
                    "dram_utilization": 0.707, "antt": 1.36, "antt_aimt": 1.58,
                    "max_slowdown": 1.61, "max_slowdown_aimt": 1.90},
}
