"""H7 of docs/REPRODUCTION.md ("The ANTT gap"): how much the *distribution* of task lengths
inside PREMA's stated 0.5-45 ms range moves the ANTT gain, without our cost model.

Synthetic task sets (rows with ``layer_latencies_s``: 20 equal layers per task, no DMA), 8
tasks per run, priorities uniform over 1/3/9, dispatch times uniform over [0, span x the summed
lengths], 25 seeded runs, served by np-fcfs, p-sjf and p-prema (``paper`` reading, dynamic
mechanism, estimates = the exact lengths, preemption at layer boundaries). Lengths drawn:

* ``ours``: the isolated times of the default PREMA workloads (``draw_tasks``), for reference;
* ``log-uniform``: log-uniform over 0.5-45 ms;
* ``two-point``: 0.5 ms or 45 ms with equal odds.

Printed: ``E[p]E[1/p]``, NP-FCFS's ANTT (the bound on any policy's gain), the P-SJF and
P-PREMA gains (ratio of averages). These distributions illustrate what the stated range
allows; none is a reading of the paper.

Run: ``python benchmarks/prema_length_spread.py [--runs 25] [--span 1]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from npuweave.experiments.prema_workload import draw_tasks  # noqa: E402
from npuweave.hardware import preset  # noqa: E402
from npuweave.sim.tasksets import serve_tasks, task_set_from_rows  # noqa: E402

LAYERS = 20
POLICIES = (("fcfs", "np-fcfs", {}), ("sjf", "p-sjf", {"mechanism": "dynamic"}),
            ("prema", "p-prema", {"mechanism": "dynamic"}))


def ours(rng: np.random.Generator, run: int) -> np.ndarray:
    return np.array([t.iso_s for t in draw_tasks(preset("prema"), 8, 0, run)])


def log_uniform(rng: np.random.Generator, run: int) -> np.ndarray:
    return np.exp(rng.uniform(np.log(0.5e-3), np.log(45e-3), 8))


def two_point(rng: np.random.Generator, run: int) -> np.ndarray:
    return np.where(rng.random(8) < 0.5, 0.5e-3, 45e-3)


def one_run(lengths: np.ndarray, rng: np.random.Generator, span: float) -> dict[str, np.ndarray]:
    arrive = np.sort(rng.uniform(0.0, span * lengths.sum(), lengths.size))
    prio = rng.choice([1, 3, 9], lengths.size)
    rows = [{"id": i, "model": f"t{i}", "arrival_s": float(a), "priority": int(p),
             "layer_latencies_s": [float(x) / LAYERS] * LAYERS}
            for i, (a, p, x) in enumerate(zip(arrive, prio, lengths))]
    ts = task_set_from_rows(rows, "synthetic")
    out = {}
    for key, pol, opts in POLICIES:
        res = serve_tasks(ts, pol, **opts)
        lat = np.array([r["finish_s"] - r["arrival_s"] for r in res.requests])
        out[key] = lat / lengths
    return out


def study(draw: Callable[[np.random.Generator, int], np.ndarray], runs: int, span: float
          ) -> dict[str, float]:
    ntt: dict[str, list[np.ndarray]] = {k: [] for k, _, _ in POLICIES}
    ps = []
    for run in range(runs):
        rng = np.random.default_rng([7, run])
        p = draw(rng, run)
        ps.append(p)
        for k, v in one_run(p, rng, span).items():
            ntt[k].append(v)
    antt = {k: float(np.mean(np.concatenate(v))) for k, v in ntt.items()}
    p = np.concatenate(ps)
    return {"spread": float(p.mean() * (1 / p).mean()), "bound": antt["fcfs"],
            "sjf_x": antt["fcfs"] / antt["sjf"], "prema_x": antt["fcfs"] / antt["prema"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--span", type=float, default=1.0)
    args = ap.parse_args()
    print(f"{'lengths':12} {'E[p]E[1/p]':>10} {'bound':>6} {'SJF x':>6} {'PREMA x':>7}")
    for name, draw in (("ours", ours), ("log-uniform", log_uniform), ("two-point", two_point)):
        r = study(draw, args.runs, args.span)
        print(f"{name:12} {r['spread']:10.2f} {r['bound']:6.2f} {r['sjf_x']:6.2f} "
              f"{r['prema_x']:7.2f}", flush=True)


if __name__ == "__main__":
    main()
