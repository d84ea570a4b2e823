"""Where the 2-process pool loses time on cheap sweep points, against serial, in one run.

Run: ``PYTHONPATH=$PWD python benchmarks/sweep_pool_breakdown.py [--points 200] [--rounds 5]``.

The sweep of ``bench_sweep.py`` (RN + BB closed loops, four schedulers, about 10 ms a point)
runs serially, on the pool as it is (``executor.chunk_sizes``: chunks of ``points / 16`` that
shrink towards the end) and on the pool as it was before (fixed chunks of ``points / 16``),
round by round. Per executor (medians over rounds):

* wall seconds and the speed-up over serial (moves with the machine's load);
* CPU seconds of this process and its workers, and CPU ms per point beyond serial's;
* minor page faults in the workers (pages copied after the fork);
* tail: how long one worker still runs after the other has finished its last point;
* first: ms from the call to the (later worker's) first point: set-up, and the fork;
* model: serial CPU / (first + the busier worker's CPU), the speed-up two idle cores would give
  with the measured per-worker work (load still moves CPU time a little);
* chunking: the speed-up the chunk rule alone allows: serial's own CPU seconds per point,
  handed out in the rule's chunks to two workers that each take the next chunk when free,
  total work over the later finish (no start-up, no per-task cost: a bound that no machine's
  load moves).

Every round checks that the rows equal serial's (all but ``elapsed_s``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sweep import spec  # noqa: E402

import npuweave.experiments.executor as ex  # noqa: E402
from npuweave.experiments.sweep import executors as points  # noqa: E402
from npuweave.experiments.sweep import run_sweep  # noqa: E402

LOG = Path(tempfile.gettempdir()) / f"sweep_pool_breakdown.{os.getpid()}.log"
_run_point = points.run_point


def logged_point(point: Any, standalone: Any = None) -> dict[str, Any]:
    """``run_point`` that appends (pid, start, end, the process's CPU so far, the point's CPU)
    to ``LOG``."""
    start, cpu = time.perf_counter(), time.process_time()
    row = _run_point(point, standalone)
    now = time.process_time()
    with LOG.open("a") as f:
        f.write(json.dumps([os.getpid(), start, time.perf_counter(), now, now - cpu]) + "\n")
    return row


logged_point.__module__, logged_point.__qualname__ = points.__name__, "run_point"


def fixed_chunks(todo: Sequence[Any], workers: int) -> Iterator[tuple[int, Sequence[Any]]]:
    """The rule before: about eight tasks per worker, 1 to 64 items each."""
    size = max(1, min(64, len(todo) // (8 * workers)))
    for lo in range(0, len(todo), size):
        yield lo, todo[lo:lo + size]


NOW = ex._chunks
EXECUTORS = {"serial": None, "pool x2": NOW, "pool x2 before": fixed_chunks}


def chunking(costs: Sequence[float], rule: Any, workers: int = 2) -> float:
    """Total of ``costs`` over the makespan of ``rule``'s chunks on ``workers`` (list order)."""
    free = [0.0] * workers
    for lo, part in rule(list(range(len(costs))), workers):
        k = free.index(min(free))
        free[k] += sum(costs[lo:lo + len(part)])
    return sum(costs) / max(free)


def usage() -> tuple[float, int]:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime, kids.ru_minflt


def one(name: str, big: Any) -> tuple[list[dict[str, Any]], dict[str, float]]:
    rule = EXECUTORS[name]
    if rule is not None:
        ex._chunks = rule  # type: ignore[assignment]
    points.run_point = logged_point  # type: ignore[assignment]
    LOG.write_text("")
    cpu0, faults0 = usage()
    t0 = time.perf_counter()
    rows = list(run_sweep(big, jobs=1 if rule is None else 2).rows)
    wall = time.perf_counter() - t0
    cpu1, faults1 = usage()
    got = {"wall": wall, "cpu": cpu1 - cpu0, "faults": faults1 - faults0}
    log = [json.loads(line) for line in LOG.read_text().splitlines()]
    if rule is None:  # serial: the CPU seconds of each point, in point order
        costs = [entry[4] for entry in log]
        got["first"] = log[0][1] - t0
        got["chunking"] = chunking(costs, NOW)
        got["chunking before"] = chunking(costs, fixed_chunks)
    else:
        ends: dict[int, float] = {}
        busy: dict[int, float] = {}
        starts: dict[int, float] = {}
        for pid, a, b, c, _ in log:
            ends[pid], busy[pid] = max(ends.get(pid, 0.0), b), max(busy.get(pid, 0.0), c)
            starts[pid] = min(starts.get(pid, float("inf")), a)
        got["tail"] = max(ends.values()) - min(ends.values())
        got["first"] = max(starts.values()) - t0
        got["busiest"] = max(busy.values())
    return [{k: v for k, v in r.items() if k != "elapsed_s"} for r in rows], got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    big = spec(args.points)
    run_sweep(big, jobs=1)  # warm caches (zoo, costs, numba) in this process
    reference = one("serial", big)[0]
    load = os.getloadavg()[0]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in EXECUTORS}
    for _ in range(args.rounds):
        for name in EXECUTORS:
            rows, got = one(name, big)
            assert rows == reference, f"{name}: rows differ from serial"
            runs[name].append(got)
    LOG.unlink(missing_ok=True)
    n = len(big.points)
    serial = runs["serial"]
    print(f"{n} points, {os.cpu_count()} cores, median of {args.rounds} rounds, load average "
          f"{load:.2f} -> {os.getloadavg()[0]:.2f}; rows equal serial's in every round")
    print(f"{'executor':<16}{'wall s':>8}{'speed-up':>10}{'CPU s':>8}{'CPU ms/pt over':>16}"
          f"{'faults':>8}{'tail ms':>9}{'first ms':>10}{'model':>7}")
    for name, got in runs.items():
        med = {k: statistics.median(g[k] for g in got) for k in got[0]}
        speed = statistics.median(s["wall"] / g["wall"] for s, g in zip(serial, got))
        over = (med["cpu"] - statistics.median(s["cpu"] for s in serial)) / n * 1e3
        extra = f"{'':>9}{med['first'] * 1e3:>10.0f}"
        if "tail" in med:
            model = statistics.median(s["cpu"] / (g["first"] + g["busiest"])
                                      for s, g in zip(serial, got))
            extra = f"{med['tail'] * 1e3:>9.0f}{med['first'] * 1e3:>10.0f}{model:>6.2f}x"
        print(f"{name:<16}{med['wall']:>8.2f}{speed:>9.2f}x{med['cpu']:>8.2f}{over:>16.2f}"
              f"{med['faults']:>8.0f}{extra}")
    cut = {k: statistics.median(s[k] for s in serial) for k in ("chunking", "chunking before")}
    print(f"chunking alone (serial's per-point CPU on 2 workers, no overheads): now "
          f"{cut['chunking']:.3f}x, before {cut['chunking before']:.3f}x")


if __name__ == "__main__":
    main()
