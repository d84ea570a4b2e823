"""Sweep executors: a 200-point sweep serial vs a 2-process pool vs a 2-worker Dask cluster.

Run: ``python benchmarks/bench_sweep.py [--points 200] [--repeats 3]``. Each point is one
closed-loop run of RN + BB under one of four schedulers (seeds vary), the row of ``npuweave
schedule``. Prints, per executor (median of repeats, all in this run): wall seconds, speed-up
over serial, start-up seconds (pool spawn or cluster start, timed on a one-point sweep) and
per-point overhead = (wall x workers - serial wall) / points, i.e. the extra time each point
costs on the executor beyond its own work (start-up excluded). The wall clock of a shared
machine moves with the other processes on it, so the table also gives each executor's CPU
seconds (this process plus its waited-for children: the pool's workers, Dask's processes) and
the CPU overhead per point against serial, which load barely moves; the load average is
printed before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
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


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed_cpu(fn) -> tuple[float, float]:
    c = cpu_seconds()
    wall = timed(fn)
    return wall, cpu_seconds() - c


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
    load = os.getloadavg()[0]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(args.repeats):  # executors alternate, so load changes hit each alike
        for name, kw in runs.items():
            times[name].append(timed_cpu(lambda kw=kw: run_sweep(big, **kw)))
    rows = []
    for name, kw in runs.items():
        startup = statistics.median(timed(lambda kw=kw: run_sweep(one, **kw))
                                    for _ in range(args.repeats))
        walls = [w for w, _ in times[name]]
        rows.append((name, statistics.median(walls), startup, kw.get("jobs", 2),
                     statistics.median(c for _, c in times[name]), walls))
    serial, serial_cpu = rows[0][1], rows[0][4]
    print(f"{n} points, {os.cpu_count()} cores, median of {args.repeats}, "
          f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    print(f"{'executor':<14}{'wall s':>9}{'speed-up':>10}{'start-up s':>12}"
          f"{'ms/point overhead':>19}{'CPU s':>8}{'CPU ms/point over':>19}  each round")
    for name, wall, startup, workers, cpu, walls in rows:
        over = ((wall - startup) * workers - serial) / n * 1e3 if name != "serial" else 0.0
        spread = " ".join(f"{s / w:.2f}" for s, w in zip(rows[0][5], walls))  # same round
        print(f"{name:<14}{wall:>9.2f}{serial / wall:>9.2f}x{startup:>12.2f}{over:>19.2f}"
              f"{cpu:>8.2f}{(cpu - serial_cpu) / n * 1e3:>19.2f}  {spread}")


if __name__ == "__main__":
    main()
