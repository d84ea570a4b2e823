"""``reproduce_prema``: PREMA's evaluation (section VI, Figs 11-15) on npuweave's engine.

One seeded workload per run (``prema_workload.draw_tasks``), every configuration on the same
workloads. Per configuration the metrics of each run (Eq. 1-2 with cold isolated times) are
averaged over the runs; improvements are the averages' ratios against NP-FCFS
(``ANTT_fcfs / ANTT``, ``fairness / fairness_fcfs``, ``STP / STP_fcfs``).

* Fig. 11: the six policies, non-preemptive.
* Fig. 12: HPF, TOKEN, SJF, PREMA preemptive with static CHECKPOINT and with dynamic
  (Algorithm 3: DRAIN or CHECKPOINT).
* Fig. 13: SLA violation rate of all tasks for targets ``m x T_isolated``, m = 2..20.
* Fig. 14: p95 NTT of high-priority tasks per model, on batch-1 workloads.
* Fig. 15: the same four with static KILL and dynamic (DRAIN or KILL).
* Predictor: mean |estimate - isolated| / isolated over all tasks, Pearson r; an oracle
  P-PREMA with exact isolated times.
* Readings: P-PREMA (dynamic) under each preset, against NP-FCFS under the same preset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from npuweave.experiments.prema_sim import TaskRun, simulate, warm
from npuweave.experiments.prema_workload import DEFAULT_BATCHES, PremaTask, draw_tasks
from npuweave.hardware.npu import NPU
from npuweave.metrics.prema import SLA_MULTS, antt, fairness, ntt, sla_violation, stp, tail_by_model

NP = [("NP-FCFS", "np-fcfs", "none"), ("RRB", "rrb", "none"), ("HPF", "np-hpf", "none"),
      ("TOKEN", "token", "none"), ("SJF", "np-sjf", "none"), ("PREMA", "prema", "none")]
PREEMPTIVE = [("HPF", "p-hpf"), ("TOKEN", "p-token"), ("SJF", "p-sjf"), ("PREMA", "p-prema")]
MECHS = {"static-checkpoint": "checkpoint", "dynamic": "dynamic", "static-kill": "kill",
         "dynamic-kill": "dynamic-kill"}

PAPER: dict[str, float] = {
    "np_prema_vs_sjf_antt": 0.92, "dyn_prema_antt_x": 7.8, "dyn_prema_fairness_x": 19.6,
    "dyn_prema_stp_x": 1.4, "sla_prema_beyond_4": 0.10, "sla_fcfs": 0.36,
    "dyn_prema_antt_x_per_run": 7.8, "dyn_prema_fairness_x_per_run": 19.6,
    "sla_prema_at_4": 0.10, "sla_fcfs_at_4": 0.36,
    "tail_fcfs_max": 85.0, "tail_fcfs_mean": 21.0, "tail_psjf_max": 2.6,
    "tail_prema_mean": 1.4, "tail_prema_max": 1.6, "ckpt_vs_kill_antt": 1.87,
    "ckpt_vs_kill_stp": 1.24, "ckpt_vs_kill_fairness": 1.77, "pred_error": 0.016,
    "pred_corr": 0.98, "oracle_stp": 0.99, "oracle_antt": 0.99, "oracle_sla": 0.99,
    "kill_ntt_x": 3.08, "ckpt_ntt_x": 3.06, "ckpt_latency_us": 12.0,
    "ckpt_latency_max_us": 59.0, "drain_wait_ms": 5.3,
}
"""The paper's numbers (sections IV-D and VI), for the side-by-side table."""

Step = Callable[[str], None]


def configs(kill: bool = True) -> list[tuple[str, str, str]]:
    """(label, policy, mechanism) of every task-set configuration of Figs 11, 12 and 15."""
    out = [(f"NP-{lab}" if not lab.startswith("NP-") else lab, pol, mech)
           for lab, pol, mech in NP]
    mechs = MECHS if kill else {k: v for k, v in MECHS.items() if "kill" not in k}
    for key, mech in mechs.items():
        out += [(f"P-{lab} {key}", pol, mech) for lab, pol in PREEMPTIVE]
    return out


def run_metrics(run: TaskRun) -> dict[str, Any]:
    """Eq. 1-2 and the SLA curve of one simulated workload."""
    n = ntt(run.dispatch, run.finish, run.isolated)
    return {"antt": antt(n), "stp": stp(n), "fairness": fairness(n, run.priority),
            "sla": sla_violation(n).tolist(), "ntt": n, "preemptions": run.preemptions,
            "drains": run.drains, "overhead_s": run.overhead_s}


def _mean(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    keys = ("antt", "stp", "fairness", "preemptions", "drains", "overhead_s")
    out: dict[str, Any] = {k: float(np.mean([r[k] for r in rows])) for k in keys}
    out["sla"] = np.mean([r["sla"] for r in rows], axis=0).tolist()
    return out


def task_sets(npu: NPU, runs: int, n: int, seed: int,
              batches: tuple[int, ...] = DEFAULT_BATCHES, span: float = 1.0
              ) -> list[tuple[PremaTask, ...]]:
    """The ``runs`` seeded workloads every configuration shares."""
    return [draw_tasks(npu, n, seed, r, batches, span) for r in range(runs)]


def _one(job: tuple[tuple[PremaTask, ...], NPU, str, str, str, bool]) -> dict[str, Any]:
    tasks, npu, policy, mech, reading, oracle = job
    return run_metrics(simulate(tasks, npu, policy, mech, reading, oracle))


def _one_labeled(item: tuple[str, Any]) -> dict[str, Any]:
    return _one(item[1])


def evaluate(sets: Sequence[tuple[PremaTask, ...]], npu: NPU, cfgs: Sequence[tuple[str, str, str]],
             reading: str = "paper", oracle: bool = False, step: Step | None = None,
             jobs: int = 1, dask: str | None = None) -> dict[str, dict[str, Any]]:
    """Mean metrics of each configuration over the workloads, plus per-run rows.

    ``jobs > 1`` spreads the simulations over that many processes (``dask``: a Dask cluster,
    ``local:N`` or an address) with ``npuweave.experiments.executor``; results do not depend
    on it (every simulation is deterministic).
    """
    work = [(tasks, npu, policy, mech, reading, oracle) for _, policy, mech in cfgs
            for tasks in sets]
    labels = [label for label, _, _ in cfgs for _ in sets]
    from npuweave.experiments.executor import run_map

    if jobs > 1 and dask is None:  # forked workers inherit the caches instead of each
        warm(sets, npu, reading)   # building its own, for every pool again

    def done(item: tuple[str, Any], _row: dict[str, Any]) -> None:
        if step:
            step(item[0])

    rows: list[dict[str, Any]] = run_map(_one_labeled, list(zip(labels, work)), jobs, done,
                                         dask=dask)
    out: dict[str, dict[str, Any]] = {}
    n = len(sets)
    for k, (label, _, _) in enumerate(cfgs):
        mine = rows[k * n:(k + 1) * n]
        out[label] = {**_mean(mine), "runs": mine}
    return out


def improvements(res: dict[str, dict[str, Any]], base: str = "NP-FCFS") -> dict[str, dict]:
    """ANTT, fairness and STP of each configuration normalized to ``base`` (higher = better)."""
    b = res[base]
    return {k: {"antt_x": b["antt"] / v["antt"], "fairness_x": v["fairness"] / b["fairness"],
                "stp_x": v["stp"] / b["stp"]} for k, v in res.items()}


def improvements_per_run(res: dict[str, dict[str, Any]], base: str = "NP-FCFS"
                         ) -> dict[str, dict]:
    """The same ratios taken per workload (run k against the base's run k), then averaged:
    the alternative to ``improvements``' ratio of averages (docs/REPRODUCTION.md)."""
    b = res[base]["runs"]

    def mean(v: dict[str, Any], f: Any) -> float:
        return float(np.mean([f(r, q) for r, q in zip(v["runs"], b)]))

    return {k: {"antt_x": mean(v, lambda r, q: q["antt"] / r["antt"]),
                "fairness_x": mean(v, lambda r, q: r["fairness"] / q["fairness"]),
                "stp_x": mean(v, lambda r, q: r["stp"] / q["stp"])} for k, v in res.items()}


def tails(res: dict[str, dict[str, Any]], sets: Sequence[tuple[PremaTask, ...]]
          ) -> dict[str, dict[str, float]]:
    """Fig. 14: per model, the p95 NTT of the high-priority tasks over all runs."""
    out = {}
    names = [t.name for tasks in sets for t in tasks]
    high = [t.level == 2 for tasks in sets for t in tasks]
    for label, v in res.items():
        n = np.concatenate([r["ntt"] for r in v["runs"]])
        out[label] = tail_by_model(n, names, high)
    return out


def predictor_stats(sets: Sequence[tuple[PremaTask, ...]], isolated: Sequence[float]
                    ) -> dict[str, float]:
    """Mean relative error and Pearson correlation of the estimates against the engine's
    cold isolated times, over every task of every run."""
    est = np.array([t.est_s for tasks in sets for t in tasks])
    iso = np.asarray(isolated, dtype=float)
    err = np.abs(est - iso) / iso
    corr = float(np.corrcoef(est, iso)[0, 1]) if est.size > 1 else 1.0
    return {"mean_abs_rel_error": float(err.mean()), "max_abs_rel_error": float(err.max()),
            "pearson_r": corr, "tasks": int(est.size)}


def sla_summary(res: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Fig. 13 headline: violation rate averaged over m > 4, and over all m."""
    mults = np.array(SLA_MULTS)
    return {k: {"beyond_4": float(np.mean(np.array(v["sla"])[mults > 4])),
                "at_4": float(np.array(v["sla"])[mults == 4][0]),
                "all": float(np.mean(v["sla"]))} for k, v in res.items()}


__all__ = ["PAPER", "configs", "evaluate", "improvements", "improvements_per_run",
           "predictor_stats", "sla_summary", "tails", "task_sets"]
