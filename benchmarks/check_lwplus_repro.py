"""Re-run random Figure V.5 points of a Layerweaver+ reproduction on the Python serving loop
and compare them with the rows the compiled loop wrote.

Run from the repository root (the reproduction's defaults: windows 0 and 2 ms, 4,000
requests)::

    PYTHONPATH=$PWD python benchmarks/check_lwplus_repro.py docs/results/lwplus/lwplus.csv \
        --seed 7 --points 16

Prints one line per point (SAME or DIFF) and exits 1 when any row differs.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import time

from npuweave.experiments import lwplus_repro as repro
from npuweave.experiments.lwplus import ServeSetup

KEYS = ("qps", "missed", "stp", "stp_span", "trials", "urgent_share", "first_crossing_qps",
        "window_s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--points", type=int, default=16)
    args = ap.parse_args()
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["figure"] == "V.5"]
    # the CLI's defaults the committed CSV was made with: windows 0 and 2 ms, seeds 0,1,2
    setup = ServeSetup(baseline_windows_s=(0.0, 2e-3), seeds=(0, 1, 2), compiled=False)
    tasks = repro.fig5_tasks(repro.parse_pairs(None), repro.parse_ratios(None),
                             list(repro.SCHEDULERS), setup)
    picks = random.Random(args.seed).sample(range(len(tasks)), args.points)
    bad = 0
    for i in picks:
        c0 = time.process_time()
        got = repro.run_task(tasks[i])
        ref = next(r for r in rows if (r["pair"], r["ratio"], r["scheduler"])
                   == (got["pair"], got["ratio"], got["scheduler"]))
        same = all(str(got[k]) == ref[k] for k in KEYS)
        bad += not same
        print(f"{got['pair']} {got['ratio']} {got['scheduler']}: {got['qps']:.1f} QPS "
              f"{'SAME' if same else 'DIFF'} ({time.process_time() - c0:.1f} s CPU)",
              flush=True)
    print(f"different: {bad} of {len(picks)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
