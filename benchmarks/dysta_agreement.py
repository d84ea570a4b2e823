"""How often npuweave's runs equal Dysta's decisions on generated task sets (issue 20, item 2).

For each load (tasks/s) and seed, a task set of ``--tasks`` requests (1-10 layers of 0.01-2 ms,
priorities 1/3/9) runs under np-fcfs, p-sjf and p-prema (``reading=dysta`` for the last two)
and under ``tests/prema/dysta_ref.py``, a re-implementation of Dysta's per-layer loop. A set
agrees when the PE segments are equal float for float. Printed per policy: agreement against
the re-implementation with a monotone clock, against Dysta's own clock, and the number of sets
where Dysta's clock ran backwards; and, for reference, how often the ``paper`` reading of
p-prema agrees (it is a different scheduler).

Run: ``python benchmarks/dysta_agreement.py [--sets 100] [--tasks 8]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "prema"))

from dysta_ref import dysta_run, random_task_set  # noqa: E402

from npuweave.sim.tasksets import serve_tasks, task_set_from_rows  # noqa: E402

SCHEDS = (("fcfs", "np-fcfs", {}), ("sjf", "p-sjf", {"reading": "dysta"}),
          ("prema", "p-prema", {"reading": "dysta"}), ("prema", "p-prema", {"reading": "paper"}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=100)
    ap.add_argument("--tasks", type=int, default=8)
    args = ap.parse_args()
    print(f"{'load/s':>7} {'policy':22} {'sane':>6} {'dysta':>6} {'backwards':>9}")
    for rate in (50.0, 150.0, 400.0):
        for key, sched, opts in SCHEDS:
            sane = raw = back = 0
            for seed in range(args.sets):
                rows = random_task_set(seed, args.tasks, rate)
                res = serve_tasks(task_set_from_rows(rows, "generated"), sched, **opts)
                ours = [[s["id"], s["start_s"], s["end_s"]] for s in res.segments]
                sane += ours == dysta_run(rows, key)[1]
                _, segs, went_back = dysta_run(rows, key, sane=False)
                raw += ours == segs
                back += went_back
            label = f"{sched} {opts.get('reading', '')}".strip()
            print(f"{rate:>7.0f} {label:22} {sane:>6} {raw:>6} {back:>9}  of {args.sets}")


if __name__ == "__main__":
    main()
