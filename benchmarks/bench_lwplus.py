"""Layerweaver+ benchmarks: one capacity search (one pair, one ratio, three schedulers), and
the cost of the two standalone-time estimates.

Run from the repository root: ``PYTHONPATH=$PWD python benchmarks/bench_lwplus.py``.
Prints medians of ``--repeats`` runs, wall and CPU (process) seconds, and ratios against the
baseline scheduler's search measured in the same run. The machine is shared: trust CPU time and
the ratios more than wall time.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import numpy as np

from npuweave.experiments.lwplus import ServeSetup, _Runner, capacity_row, policy_for
from npuweave.experiments.lwserve import Batching
from npuweave.schedule.layerweaver_plus import LayerweaverPlus

PAIR = ("resnet50", "bert-base")
DEADLINES = (15e-3, 130e-3)


def one_search(scheduler: str, ratio: tuple[float, float], setup: ServeSetup) -> tuple[float,
                                                                                      float]:
    t0, c0 = time.perf_counter(), time.process_time()
    capacity_row(PAIR, ratio, DEADLINES, scheduler, setup)
    return time.perf_counter() - t0, time.process_time() - c0


def _same(policy: LayerweaverPlus) -> LayerweaverPlus:
    return policy


def estimate_costs(load: float, ratio: tuple[float, float], setup: ServeSetup) -> list[str]:
    """Per-decision policy time and Mode-2 disagreements at a fixed load (no pruning too)."""
    share = (ratio[0] / sum(ratio), ratio[1] / sum(ratio))
    lines = []
    for mode in ("approx", "precise"):
        for prune in (True, False):
            pol = LayerweaverPlus(mode, prune=prune, audit=False)
            r = _Runner(PAIR, share, DEADLINES, functools.partial(_same, pol),
                        Batching(0.0, 16), setup, stop=False)
            out = r.serve(load, 0, stop=False)
            lines.append(f"{mode:8s} prune={prune!s:5s} decisions={out.decisions:7d} "
                         f"policy={1e6 * out.policy_s / out.decisions:6.2f} us/decision "
                         f"estimates={pol.estimates:8d} mode2={out.urgent:6d}")
    audit = LayerweaverPlus("approx", audit=True)
    r = _Runner(PAIR, share, DEADLINES, lambda: audit, Batching(0.0, 16), setup, stop=False)
    out = r.serve(load, 0, stop=False)
    lines.append(f"audit at {load:g} QPS: Mode-2 verdict of approx vs precise differs in "
                 f"{audit.disagreements} of {audit.decisions} decisions "
                 f"({100 * audit.disagreements / max(audit.decisions, 1):.3f}%)")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--requests", type=int, default=4000)
    args = ap.parse_args()
    setup = ServeSetup(requests=args.requests, baseline_windows_s=(0.0, 2e-3))
    ratio = (4.0, 1.0)  # RN : BB
    rows = {}
    for name in ("baseline", "layerweaver", "lwplus-approx", "lwplus-precise"):
        policy_for(name)
        runs = [one_search(name, ratio, setup) for _ in range(args.repeats)]
        rows[name] = (statistics.median(w for w, _ in runs),
                      statistics.median(c for _, c in runs))
    base = rows["baseline"][1]
    print(f"one capacity search, RN+BB at 4:1, {args.requests} requests, median of "
          f"{args.repeats}")
    print(f"{'scheduler':16s} {'wall s':>8s} {'cpu s':>8s} {'cpu / baseline':>15s}")
    for name, (w, c) in rows.items():
        print(f"{name:16s} {w:8.2f} {c:8.2f} {c / base:15.2f}")
    three = sum(rows[n][1] for n in ("baseline", "layerweaver", "lwplus-approx"))
    print(f"three schedulers (baseline, layerweaver, lwplus-approx): {three:.2f} s CPU")
    for line in estimate_costs(3000.0, ratio, setup):
        print(line)
    print(f"numpy {np.__version__}")


if __name__ == "__main__":
    main()
