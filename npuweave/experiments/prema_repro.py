"""The whole PREMA reproduction in one call, plus the two-task mechanism study (Figs 5-6).

``reproduce_prema(npu, runs, n, seed, reading)`` returns a plain dict (JSON-ready) with every
figure's data and a ``versus`` table: our number beside the paper's for each headline.
``total_steps`` says how many simulations it will run (for a progress bar).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from npuweave.experiments.prema import (
    PAPER,
    configs,
    evaluate,
    improvements,
    improvements_per_run,
    predictor_stats,
    sla_summary,
    tails,
    task_sets,
)
from npuweave.experiments.prema_sim import cold_isolated, simulate, task_key
from npuweave.experiments.prema_workload import PremaTask, draw_tasks
from npuweave.hardware.npu import NPU
from npuweave.metrics.prema import ntt, stp
from npuweave.schedule.prema.readings import PRESETS
from npuweave.schedule.prema.readings import reading as get_reading

Step = Callable[[str], None]
TAIL_CFGS = [("NP-FCFS", "np-fcfs", "none"), ("P-SJF dynamic", "p-sjf", "dynamic"),
             ("P-PREMA dynamic", "p-prema", "dynamic")]
PAIR_MECHS = ("kill", "checkpoint", "drain")


def total_steps(runs: int, pairs: int, kill: bool = True, readings: bool = True) -> int:
    """Simulations ``reproduce_prema`` runs (one progress step each)."""
    main = len(configs(kill)) + len(TAIL_CFGS) + 1
    extra = 2 * (len(PRESETS) - 1) if readings else 0
    return runs * (main + extra) + pairs * (1 + len(PAIR_MECHS))


def two_task(npu: NPU, pairs: int, seed: int, step: Step | None = None) -> dict[str, Any]:
    """Figs 5-6: a low-priority task runs; a high-priority one arrives uniformly during it.

    Under P-HPF with each mechanism against NP-FCFS: the preempting task's NTT gain, the pair's
    STP, the preemption latency (checkpoint store time) and the preempting task's wait.
    """
    rng = np.random.default_rng([seed, 5])
    rows: dict[str, list[tuple[float, float, float, float]]] = {m: [] for m in PAIR_MECHS}
    for p in range(pairs):
        lo, hi = draw_tasks(npu, 2, seed, 100_000 + p)
        lo = replace(lo, level=0, dispatch_s=0.0)
        hi = replace(hi, level=2, dispatch_s=float(rng.uniform(0.0, lo.iso_s)))
        base = simulate((lo, hi), npu, "np-fcfs")
        if step:
            step("two-task NP-FCFS")
        n0 = ntt(base.dispatch, base.finish, base.isolated)
        for mech in PAIR_MECHS:
            run = simulate((lo, hi), npu, "p-hpf", mech)
            n = ntt(run.dispatch, run.finish, run.isolated)
            latency = run.overhead_s / 2 if run.preemptions else float("nan")
            rows[mech].append((n0[1] / n[1], stp(n) / stp(n0), latency,
                               float(run.start[1] - run.dispatch[1])))
            if step:
                step(f"two-task P-HPF {mech}")
    out = {}
    for mech, vals in rows.items():
        a = np.array(vals)
        out[mech] = {"ntt_gain": float(a[:, 0].mean()), "stp_x": float(a[:, 1].mean()),
                     "latency_us_mean": _nanstat(np.nanmean, a[:, 2]) * 1e6,
                     "latency_us_p50": _nanstat(lambda v: np.nanpercentile(v, 50), a[:, 2]) * 1e6,
                     "latency_us_p95": _nanstat(lambda v: np.nanpercentile(v, 95), a[:, 2]) * 1e6,
                     "latency_us_max": _nanstat(np.nanmax, a[:, 2]) * 1e6,
                     "preempted_pairs": int(np.isfinite(a[:, 2]).sum()),
                     "wait_ms_mean": float(a[:, 3].mean() * 1e3)}
    return out


def _nanstat(fn: Callable[[np.ndarray], float], a: np.ndarray) -> float:
    """``fn`` over the finite entries (0 when there is none)."""
    return float(fn(a)) if np.isfinite(a).any() else 0.0


def _isolated(sets: list[tuple[PremaTask, ...]], npu: NPU, reading: str) -> list[float]:
    rd = get_reading(reading)
    return [cold_isolated(task_key(t), npu, rd.preempt_at, rd.ckpt_cost)
            for tasks in sets for t in tasks]


def _reading_headlines(npu: NPU, sets: list[tuple[PremaTask, ...]], main: dict[str, Any],
                       reading: str, step: Step | None, jobs: int, dask: str | None = None
                       ) -> dict[str, dict[str, float]]:
    out = {}
    for name in PRESETS:
        if name == reading:
            res = {"NP-FCFS": main["NP-FCFS"], "P-PREMA": main["P-PREMA dynamic"]}
        else:
            res = evaluate(sets, npu, [("NP-FCFS", "np-fcfs", "none"),
                                       ("P-PREMA", "p-prema", "dynamic")], name, step=step,
                           jobs=jobs, dask=dask)
        out[name] = improvements(res)["P-PREMA"]
    return out


def reproduce_prema(npu: NPU, runs: int = 25, n: int = 8, seed: int = 0, reading: str = "paper",
                    pairs: int = 40, kill: bool = True, readings: bool = True,
                    step: Step | None = None, jobs: int = 1, span: float = 1.0,
                    dask: str | None = None
                    ) -> dict[str, Any]:
    """Every figure of PREMA's evaluation; see the module docstring of ``experiments.prema``."""
    sets = task_sets(npu, runs, n, seed, span=span)
    main = evaluate(sets, npu, configs(kill), reading, step=step, jobs=jobs, dask=dask)
    tail_sets = task_sets(npu, runs, n, seed, batches=(1,), span=span)
    tail_res = evaluate(tail_sets, npu, TAIL_CFGS, reading, step=step, jobs=jobs, dask=dask)
    oracle = evaluate(sets, npu, [("P-PREMA oracle", "p-prema", "dynamic")], reading,
                      oracle=True, step=step, jobs=jobs, dask=dask)["P-PREMA oracle"]
    imp = improvements(main)
    sla = sla_summary(main)
    fig14 = tails(tail_res, tail_sets)
    pred = predictor_stats(sets, _isolated(sets, npu, reading))
    prema = main["P-PREMA dynamic"]
    oracle_ratio = {"stp": prema["stp"] / oracle["stp"], "antt": oracle["antt"] / prema["antt"],
                    "sla": (1 - np.mean(prema["sla"])) / (1 - np.mean(oracle["sla"]))}
    result: dict[str, Any] = {
        "config": {"npu": npu.name, "runs": runs, "tasks": n, "seed": seed, "reading": reading,
                   "reading_options": get_reading(reading).to_dict(), "pairs": pairs,
                   "span": span},
        "improvements": imp, "improvements_per_run": improvements_per_run(main),
        "sla_curves": {k: v["sla"] for k, v in main.items()},
        "sla": sla, "tails": fig14, "predictor": pred, "oracle": oracle_ratio,
        "means": {k: {m: v[m] for m in ("antt", "stp", "fairness", "preemptions", "drains",
                                        "overhead_s")} for k, v in main.items()},
        "two_task": two_task(npu, pairs, seed, step),
    }
    if readings:
        result["readings"] = _reading_headlines(npu, sets, main, reading, step, jobs, dask)
    result["versus"] = versus(result, kill)
    return result


def _ratio(imp: dict[str, dict], a: str, b: str, key: str) -> float:
    return imp[a][key] / imp[b][key]


def versus(r: dict[str, Any], kill: bool = True) -> list[dict[str, Any]]:
    """Our headline numbers beside the paper's."""
    imp, tl, two = r["improvements"], r["tails"], r["two_task"]
    fcfs_t = list(tl["NP-FCFS"].values()) or [float("nan")]
    sjf_t = list(tl["P-SJF dynamic"].values()) or [float("nan")]
    pre_t = list(tl["P-PREMA dynamic"].values()) or [float("nan")]
    rows = [
        ("NP-PREMA ANTT / NP-SJF ANTT (Fig. 11)", _ratio(imp, "NP-PREMA", "NP-SJF", "antt_x"),
         "np_prema_vs_sjf_antt"),
        ("P-PREMA dynamic ANTT x (Fig. 12)", imp["P-PREMA dynamic"]["antt_x"], "dyn_prema_antt_x"),
        ("P-PREMA dynamic fairness x", imp["P-PREMA dynamic"]["fairness_x"],
         "dyn_prema_fairness_x"),
        ("P-PREMA dynamic STP x", imp["P-PREMA dynamic"]["stp_x"], "dyn_prema_stp_x"),
        ("P-PREMA dynamic ANTT x, per-run ratios",
         r["improvements_per_run"]["P-PREMA dynamic"]["antt_x"], "dyn_prema_antt_x_per_run"),
        ("P-PREMA dynamic fairness x, per-run ratios",
         r["improvements_per_run"]["P-PREMA dynamic"]["fairness_x"],
         "dyn_prema_fairness_x_per_run"),
        ("P-PREMA SLA violation at m = 4", r["sla"]["P-PREMA dynamic"]["at_4"],
         "sla_prema_at_4"),
        ("NP-FCFS SLA violation at m = 4", r["sla"]["NP-FCFS"]["at_4"], "sla_fcfs_at_4"),
        ("P-PREMA SLA violation, m > 4 (Fig. 13)", r["sla"]["P-PREMA dynamic"]["beyond_4"],
         "sla_prema_beyond_4"),
        ("NP-FCFS SLA violation, m > 4", r["sla"]["NP-FCFS"]["beyond_4"], "sla_fcfs"),
        ("NP-FCFS high-prio p95 NTT, max over models (Fig. 14)", max(fcfs_t), "tail_fcfs_max"),
        ("NP-FCFS high-prio p95 NTT, mean over models", float(np.mean(fcfs_t)), "tail_fcfs_mean"),
        ("P-SJF high-prio p95 NTT, max", max(sjf_t), "tail_psjf_max"),
        ("P-PREMA high-prio p95 NTT, mean", float(np.mean(pre_t)), "tail_prema_mean"),
        ("P-PREMA high-prio p95 NTT, max", max(pre_t), "tail_prema_max"),
        ("predictor mean |error|", r["predictor"]["mean_abs_rel_error"], "pred_error"),
        ("predictor Pearson r", r["predictor"]["pearson_r"], "pred_corr"),
        ("PREMA / oracle STP", r["oracle"]["stp"], "oracle_stp"),
        ("PREMA / oracle ANTT", r["oracle"]["antt"], "oracle_antt"),
        ("PREMA / oracle SLA satisfaction", r["oracle"]["sla"], "oracle_sla"),
        ("two-task P-HPF KILL: NTT gain (Fig. 6)", two["kill"]["ntt_gain"], "kill_ntt_x"),
        ("two-task P-HPF CHECKPOINT: NTT gain", two["checkpoint"]["ntt_gain"], "ckpt_ntt_x"),
        ("CHECKPOINT latency mean, us (Fig. 5)", two["checkpoint"]["latency_us_mean"],
         "ckpt_latency_us"),
        ("CHECKPOINT latency max, us", two["checkpoint"]["latency_us_max"],
         "ckpt_latency_max_us"),
        ("DRAIN wait mean, ms", two["drain"]["wait_ms_mean"], "drain_wait_ms"),
    ]
    if kill:
        for key, name in (("antt_x", "ANTT"), ("stp_x", "STP"), ("fairness_x", "fairness")):
            ck = np.mean([imp[f"P-{p} {m}"][key] for p in ("HPF", "TOKEN", "SJF", "PREMA")
                          for m in ("static-checkpoint", "dynamic")])
            kl = np.mean([imp[f"P-{p} {m}"][key] for p in ("HPF", "TOKEN", "SJF", "PREMA")
                          for m in ("static-kill", "dynamic-kill")])
            rows.append((f"CHECKPOINT / KILL {name} (Fig. 15)", float(ck / kl),
                         f"ckpt_vs_kill_{key[:-2]}"))
    return [{"metric": m, "ours": float(v), "paper": PAPER.get(k, float("nan"))}
            for m, v, k in rows]
