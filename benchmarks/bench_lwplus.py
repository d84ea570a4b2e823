"""Layerweaver+ benchmarks: one capacity search (one pair, one ratio, three schedulers), and
the cost of the two standalone-time estimates.

Each search runs twice per repeat: on the Python serving loop (``lwserve.serve_layerwise``,
``ServeSetup(compiled=False)``) and on the compiled loop (``lwkernel.serve_compiled``, the
default); both give the same capacity (checked here too).

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
from dataclasses import replace

import numpy as np

from npuweave.experiments.lwplus import ServeSetup, _Runner, capacity_row, policy_for
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.sim.lwserve import Batching

PAIR = ("resnet50", "bert-base")
DEADLINES = (15e-3, 130e-3)


def one_search(scheduler: str, ratio: tuple[float, float],
               setup: ServeSetup) -> tuple[float, float, float]:
    """``(wall s, CPU s, capacity QPS)`` of one capacity search."""
    t0, c0 = time.perf_counter(), time.process_time()
    row = capacity_row(PAIR, ratio, DEADLINES, scheduler, setup)
    return time.perf_counter() - t0, time.process_time() - c0, row["qps"]


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
                        Batching(0.0, 16), replace(setup, compiled=False), stop=False)
            out = r.serve(load, 0)
            lines.append(f"{mode:8s} prune={prune!s:5s} decisions={out.decisions:7d} "
                         f"policy={1e6 * out.policy_s / out.decisions:6.2f} us/decision "
                         f"estimates={pol.estimates:8d} mode2={out.urgent:6d}")
    audit = LayerweaverPlus("approx", audit=True)
    r = _Runner(PAIR, share, DEADLINES, lambda: audit, Batching(0.0, 16),
                replace(setup, compiled=False), stop=False)
    out = r.serve(load, 0)
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
    one_search("layerweaver", ratio, setup)  # compile (or load) the kernel outside the timing
    rows = {}
    for name in ("baseline", "layerweaver", "lwplus-approx", "lwplus-precise"):
        policy_for(name)
        runs = []
        for _ in range(args.repeats):  # alternate the two loops: same machine load
            runs.append((one_search(name, ratio, replace(setup, compiled=False)),
                         one_search(name, ratio, setup)))
        assert all(py[2] == fast[2] for py, fast in runs), "the loops disagree"
        rows[name] = tuple(statistics.median(r[k][j] for r in runs)
                           for k in (0, 1) for j in (0, 1))
    base = rows["baseline"][1]
    print(f"one capacity search, RN+BB at 4:1, {args.requests} requests, median of "
          f"{args.repeats}; python = lwserve loop, compiled = lwkernel loop")
    print(f"{'scheduler':16s} {'py wall':>8s} {'py cpu':>8s} {'cpu/base':>9s} "
          f"{'comp wall':>9s} {'comp cpu':>9s} {'py/comp cpu':>11s}")
    for name, (pw, pc, cw, cc) in rows.items():
        print(f"{name:16s} {pw:8.2f} {pc:8.2f} {pc / base:9.2f} {cw:9.3f} {cc:9.3f} "
              f"{pc / cc:11.1f}")
    for k, label in ((1, "python"), (3, "compiled")):
        three = sum(rows[n][k] for n in ("baseline", "layerweaver", "lwplus-approx"))
        print(f"three schedulers (baseline, layerweaver, lwplus-approx), {label}: "
              f"{three:.2f} s CPU")
    print("per-decision costs on the python loop (policy time = wall time around decide):")
    for line in estimate_costs(3000.0, ratio, setup):
        print(line)
    print(f"numpy {np.__version__}")


if __name__ == "__main__":
    main()
