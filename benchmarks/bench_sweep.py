"""Sweep executors: a 200-point sweep serial vs a 2-process pool vs a 2-worker Dask cluster.

Run: ``python benchmarks/bench_sweep.py [--points 200] [--repeats 3]``. Each point is one
closed-loop run of RN + BB under one of four schedulers (seeds vary), the row of ``npuweave
schedule``. Prints, per executor (median of repeats, all in this run): wall seconds, speed-up
over serial, start-up seconds (pool spawn or cluster start, timed on a one-point sweep) and
per-point overhead = (wall x workers - serial wall) / points, i.e. the extra CPU time each
point costs on the executor beyond its own work (start-up excluded).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from npuweave.experiments.sweep import run_sweep, sweep_from_dict


def spec(points: int) -> object:
    schedulers = ["sequential", "layerweaver", "fair", "compute-only"]
    return sweep_from_dict({
        "kind": "schedule", "fixed": {"models": "RN,BB", "requests": 8, "npu": "memory-centric"},
        "axes": {"scheduler": schedulers, "seed": list(range(points // len(schedulers)))}})


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()
    big, one = spec(args.points), spec(4)
    n = len(big.points)
    run_sweep(big, jobs=1)  # warm caches (zoo, costs) in this process
    runs = {"serial": dict(jobs=1), "pool x2": dict(jobs=2)}
    if not args.no_dask:
        try:
            import dask.distributed  # noqa: F401
            runs["dask local:2"] = dict(dask="local:2")
        except ImportError:
            print("(dask not installed: skipping the Dask row)")
    rows = []
    for name, kw in runs.items():
        walls = [timed(lambda kw=kw: run_sweep(big, **kw)) for _ in range(args.repeats)]
        startup = statistics.median(timed(lambda kw=kw: run_sweep(one, **kw))
                                    for _ in range(args.repeats))
        rows.append((name, statistics.median(walls), startup, kw.get("jobs", 2)))
    serial = rows[0][1]
    print(f"{n} points, {os.cpu_count()} cores, median of {args.repeats}")
    print(f"{'executor':<14}{'wall s':>9}{'speed-up':>10}{'start-up s':>12}"
          f"{'ms/point overhead':>19}")
    for name, wall, startup, workers in rows:
        over = ((wall - startup) * workers - serial) / n * 1e3 if name != "serial" else 0.0
        print(f"{name:<14}{wall:>9.2f}{serial / wall:>9.2f}x{startup:>12.2f}{over:>19.2f}")


if __name__ == "__main__":
    main()
