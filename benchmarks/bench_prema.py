"""How long ``npuweave reproduce prema`` takes, and what one simulation costs.

Run from the repository root: ``python benchmarks/bench_prema.py [--repeats 3]``. Prints a
table: median wall seconds per case and the ratio against the baseline (one NP-FCFS
simulation of one 8-task workload, measured in the same run). The machine is shared and
noisy: compare ratios, not absolute seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import median_seconds  # noqa: E402

from npuweave.experiments.prema import configs, evaluate, task_sets  # noqa: E402
from npuweave.experiments.prema_repro import reproduce_prema  # noqa: E402
from npuweave.experiments.prema_sim import simulate  # noqa: E402
from npuweave.hardware import preset  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--full", action="store_true", help="also time the full defaults once")
    args = ap.parse_args()
    npu = preset("prema")
    sets = task_sets(npu, args.runs, 8, 0)
    grid = configs(kill=False)  # 6 non-preemptive + 4 static CHECKPOINT + 4 dynamic
    for tasks in sets:  # warm the per-task caches (tenants, cold isolated times)
        simulate(tasks, npu, "np-fcfs", "none")
        simulate(tasks, npu, "p-prema", "dynamic")
    rows = []
    base = median_seconds(lambda: simulate(sets[0], npu, "np-fcfs", "none"), 10 * args.repeats)
    rows.append(("one simulation, NP-FCFS (baseline)", base, 10 * args.repeats))
    one = median_seconds(lambda: simulate(sets[0], npu, "p-prema", "dynamic"), 10 * args.repeats)
    rows.append(("one simulation, P-PREMA dynamic", one, 10 * args.repeats))
    for jobs in (1, 2):
        t = median_seconds(lambda j=jobs: evaluate(sets, npu, grid, jobs=j), args.repeats)
        rows.append((f"grid 14 configs x {args.runs} runs, jobs={jobs}", t, args.repeats))
    if args.full:
        t = median_seconds(lambda: reproduce_prema(npu, args.runs, jobs=2), 1)
        rows.append((f"reproduce prema defaults ({args.runs} runs), jobs=2", t, 1))
    print(f"{'case':<48} {'median s':>10} {'repeats':>8} {'x baseline':>11}")
    for name, sec, rep in rows:
        print(f"{name:<48} {sec:>10.3f} {rep:>8} {sec / base:>11.1f}")


if __name__ == "__main__":
    main()
