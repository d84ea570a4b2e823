"""Where PREMA's ANTT gain comes from: the hypotheses of docs/REPRODUCTION.md ("The ANTT gap").

For each workload variant (25 seeded runs of 8 tasks, as ``reproduce prema``), NP-FCFS, P-SJF
dynamic and P-PREMA dynamic (``paper`` reading; ``--strict`` adds P-PREMA with the printed
``token > threshold``) run on the same workloads. Printed per variant:

* ``bound``: NP-FCFS's ANTT, the most any policy can gain (every NTT is at least 1);
* the gains (ratio of averages, as the reproduction) and P-PREMA's gain as a share of the bound;
  P-PREMA's gain as the mean of per-task ratios (``task x``) and of per-run ratios (``run x``);
* ``depth``: other tasks present (dispatched, unfinished) when a task is dispatched, NP-FCFS;
* ``E[W]``: NP-FCFS's mean wait from dispatch to start; ``E[p]E[1/p]``: the length spread;
* NP-FCFS's SLA violation at N = 4 and its high-priority p95 NTT (max / mean over models), the
  two baseline statistics the paper states (36%; 85x / 21x at batch 1).

Run: ``python benchmarks/prema_antt_gap.py [--runs 25] [--strict]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from npuweave.experiments.prema_sim import simulate  # noqa: E402
from npuweave.experiments.prema_workload import draw_tasks  # noqa: E402
from npuweave.hardware import preset  # noqa: E402
from npuweave.metrics.prema import ntt, sla_violation, tail_by_model  # noqa: E402

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("default (mix 1/4/16, span 1)", {}),
    ("H6 former RNN-SA (to 45 ms)", {"sa_cap": "profile"}),
    ("H1 batch 1 only", {"batches": (1,)}),
    ("H1 batch 16 only", {"batches": (16,)}),
    ("H2 each model once", {"draw": "permutation"}),
    ("H3 span 0.5", {"span": 0.5}),
    ("H3 span 0.25", {"span": 0.25}),
    ("H3 span 0.1", {"span": 0.1}),
    ("H3 all at once", {"span": 1e-9}),
    ("H1+H3 batch 1, span 0.25", {"batches": (1,), "span": 0.25}),
]


def depth(dispatch: np.ndarray, finish: np.ndarray) -> np.ndarray:
    """Per task: how many other tasks are dispatched and unfinished at its dispatch."""
    d, f = dispatch[:, None], finish[None, :]
    present = (dispatch[None, :] <= d) & (f > d)
    return present.sum(axis=1) - 1


def variant(npu: Any, runs: int, strict: bool, **kw: Any) -> dict[str, float]:
    sets = [draw_tasks(npu, 8, 0, r, **kw) for r in range(runs)]
    pols = [("fcfs", "np-fcfs", "none", None), ("sjf", "p-sjf", "dynamic", None),
            ("prema", "p-prema", "dynamic", None)]
    if strict:
        pols.append(("strict", "p-prema", "dynamic", {"strict_threshold": True}))
    ntts: dict[str, list[np.ndarray]] = {k: [] for k, *_ in pols}
    waits, deps, inv, sla4 = [], [], [], []
    for tasks in sets:
        for key, pol, mech, opts in pols:
            run = simulate(tasks, npu, pol, mech, options=opts)
            n = ntt(run.dispatch, run.finish, run.isolated)
            ntts[key].append(n)
            if key == "fcfs":
                waits.append(run.start - run.dispatch)
                deps.append(depth(run.dispatch, run.finish))
                inv.append(run.isolated)
                sla4.append(float(sla_violation(n, (4.0,))[0]))
    antt = {k: float(np.mean(np.concatenate(v))) for k, v in ntts.items()}
    p = np.concatenate(inv)
    high = [t.level == 2 for tasks in sets for t in tasks]
    names = [t.name for tasks in sets for t in tasks]
    tail = list(tail_by_model(np.concatenate(ntts["fcfs"]), names, high).values()) or [np.nan]
    out = {"bound": antt["fcfs"], "depth": float(np.mean(np.concatenate(deps))),
           "wait_ms": float(np.mean(np.concatenate(waits))) * 1e3,
           "spread": float(p.mean() * (1 / p).mean()), "sla4": float(np.mean(sla4)),
           "tail_max": float(max(tail)), "tail_mean": float(np.mean(tail))}
    for k in ntts:
        out[f"{k}_x"] = antt["fcfs"] / antt[k]
        out[f"{k}_antt"] = antt[k]
    fcfs, prema = np.concatenate(ntts["fcfs"]), np.concatenate(ntts["prema"])
    out["prema_x_task"] = float(np.mean(fcfs / prema))  # H5: mean of per-task ratios
    out["prema_x_run"] = float(np.mean([f.mean() / q.mean()
                                        for f, q in zip(ntts["fcfs"], ntts["prema"])]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--strict", action="store_true", help="add P-PREMA with token > threshold")
    ap.add_argument("--only", default="", help="run the variants whose name contains this")
    args = ap.parse_args()
    npu = preset("prema")
    head = (f"{'variant':30} {'bound':>6} {'SJF x':>6} {'PREMA x':>7} {'share':>6} "
            f"{'PREMA':>6} {'depth':>5} {'E[W]ms':>7} {'E[p]E[1/p]':>10} {'SLA@4':>6} "
            f"{'tail max/mean':>13} {'task x':>6} {'run x':>6}" + (f" {'strict x':>8}" if args.strict else ""))
    print(head)
    for name, kw in (v for v in VARIANTS if args.only in v[0]):
        r = variant(npu, args.runs, args.strict, **kw)
        line = (f"{name:30} {r['bound']:6.2f} {r['sjf_x']:6.2f} {r['prema_x']:7.2f} "
                f"{r['prema_x'] / r['bound']:6.2f} {r['prema_antt']:6.2f} {r['depth']:5.2f} "
                f"{r['wait_ms']:7.1f} {r['spread']:10.2f} {r['sla4']:6.1%} "
                f"{r['tail_max']:6.1f}/{r['tail_mean']:5.1f} {r['prema_x_task']:6.2f} "
                f"{r['prema_x_run']:6.2f}")
        if args.strict:
            line += f" {r['strict_x']:8.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
