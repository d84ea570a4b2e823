"""Wall and CPU time of ``npuweave reproduce layerweaver --aimt-sweep`` (1,824 runs since issue 21).

Runs the command as a subprocess (so worker processes' CPU is counted) in several modes and
prints one row each: median wall seconds over ``--repeats``, CPU seconds (user + system, the
children included) and the ratio of wall time to the baseline measured in the same run::

    python benchmarks/bench_reproduce.py --baseline-tree /tmp/npuweave-before --repeats 1

``--baseline-tree`` is a copy of the package before this change (``git archive <commit> |
tar -x -C DIR``); without it the baseline is this tree at ``--jobs 1``. ``--jobs2`` times only
the default command with ``--jobs 2``, on the baseline tree and then on this one. The machine is
shared: wall times move with the load (printed), CPU seconds much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def run(tree: Path, args: list[str]) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of one ``python -m npuweave`` call from ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "npuweave", *args], cwd=tree, check=True,
                   env={**os.environ, "PYTHONPATH": str(tree)}, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-tree", type=Path)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--jobs2", action="store_true",
                    help="only the default command with --jobs 2, baseline tree then this one")
    args = ap.parse_args()
    cmd = ["reproduce", "layerweaver", "--aimt-sweep"]
    modes = []
    if args.jobs2:
        jobs2 = [*cmd, "--jobs", "2"]
        modes = [("baseline tree --jobs 2", args.baseline_tree or HERE, jobs2),
                 ("this tree --jobs 2", HERE, jobs2)]
    elif args.baseline_tree:
        modes.append(("before (systolic-ws, serial)", args.baseline_tree, cmd))
    modes += [] if args.jobs2 else [
        ("--config systolic --jobs 1", HERE, [*cmd, "--config", "systolic", "--jobs", "1"]),
        ("--config systolic --jobs 2", HERE, [*cmd, "--config", "systolic", "--jobs", "2"]),
        ("thesis (default) --jobs 1", HERE, [*cmd, "--jobs", "1"]),
        ("thesis (default) --jobs 2", HERE, [*cmd, "--jobs", "2"]),
    ]
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'mode':<32}{'wall s':>9}{'cpu s':>9}{'x base':>8}{'load':>6}")
    base = None
    for name, tree, argv in modes:
        walls, cpus = [], []
        for _ in range(args.repeats):
            wall, cpu = run(tree, argv)
            walls.append(wall)
            cpus.append(cpu)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        base = base or wall
        print(f"{name:<32}{wall:>9.1f}{cpu:>9.1f}{wall / base:>8.2f}{os.getloadavg()[0]:>6.1f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
