"""Decision-to-effect latency of preemptions on the PREMA workloads (issue 20, item 1).

For every preemption decided during ``reproduce prema``'s 25 default workloads (8 tasks,
prema NPU, paper reading, tile preemption points) under the preemptive policies with static
CHECKPOINT and KILL and the dynamic mechanism, prints the distribution of ``effective -
decided``: how long the preempted request keeps computing after the decision (the end of its
computation running then; 0 when none ran). The bound is one preemption point (a compute
chunk of at most ``CHUNK_S`` = 100 us with ``preempt_at=tile``).

Run: ``python benchmarks/prema_effect.py [--runs 25] [--reading paper]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from npuweave.experiments.prema import task_sets  # noqa: E402
from npuweave.experiments.prema_sim import CHUNK_S, simulate  # noqa: E402
from npuweave.hardware import preset  # noqa: E402

POLICIES = ("p-hpf", "p-token", "p-sjf", "p-prema")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--reading", default="paper")
    args = ap.parse_args()
    npu = preset("prema")
    sets = task_sets(npu, args.runs, 8, 0)
    print(f"{'policy':10} {'mechanism':10} {'n':>5} {'zero':>6} {'mean_us':>8} {'p50_us':>7} "
          f"{'p95_us':>7} {'max_us':>7}")
    every = []
    for mech in ("checkpoint", "kill", "dynamic"):
        for pol in POLICIES:
            eff = np.array([e for tasks in sets for e in
                            simulate(tasks, npu, pol, mech, args.reading).effect_s])
            every.append(eff)
            if eff.size == 0:
                print(f"{pol:10} {mech:10} {0:>5}")
                continue
            us = eff * 1e6
            print(f"{pol:10} {mech:10} {eff.size:>5} {np.mean(eff == 0):>6.2f} "
                  f"{us.mean():>8.1f} {np.median(us):>7.1f} {np.percentile(us, 95):>7.1f} "
                  f"{us.max():>7.1f}")
    allv = np.concatenate(every) * 1e6
    print(f"all: {allv.size} preemptions, mean {allv.mean():.1f} us, max {allv.max():.1f} us "
          f"(bound: one chunk, {CHUNK_S * 1e6:.0f} us)")


if __name__ == "__main__":
    main()
