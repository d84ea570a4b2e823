"""What a layer-wise drop lets run (issue 20: the take-back rule and ``_drop_layerwise``).

A task-level preemption takes back the preempted request's units dispatched but not started
(``npuweave.sim.preempt._take_back``). A layer-wise policy's drop (``Preempt(id, KILL,
restart=False)``) does not: the ``Predictor`` has committed those units, and the units of
other tenants committed after them were predicted behind them, so they run and count as
wasted (docs/PREMA.md, "Where the take-back rule stops"). No registered policy drops
layer-wise; this script measures how much a dropping policy would lose: a Layerweaver that
drops a random started request (with units left to dispatch) at 2% of its decisions, open
loop on resnet50 + bert-base (Poisson, half each). Per drop: the dropped request's units
dispatched and not yet computed, and their PE seconds; the first of them is the one running or
next to run, which the issue's rule lets finish anyway.

Run: ``python benchmarks/prema_layerwise_drops.py [--npu lwplus] [--qps 300]``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from npuweave.hardware import preset  # noqa: E402
from npuweave.schedule.layerweaver import Layerweaver  # noqa: E402
from npuweave.schedule.protocol import Dispatch, Mechanism, Preempt  # noqa: E402
from npuweave.sim.serve import Simulator  # noqa: E402
from npuweave.sim.tenants import costed_tenants  # noqa: E402


class Dropper(Layerweaver):
    """Layerweaver that drops a random started request at a fraction of its decisions and
    records, per drop, the units in flight and their compute seconds."""

    name = "random-dropper"

    def __init__(self, compute_s: list[tuple[float, ...]], rate: float, seed: int) -> None:
        super().__init__(failsafe=False)
        self.comp, self.rate, self.rng = compute_s, rate, random.Random(seed)
        self.drops: list[tuple[int, float, float]] = []

    def decide(self, now, view):  # type: ignore[no-untyped-def]
        cands = [r for r in view.running if 0 < r.dispatched < r.units]
        if cands and self.rng.random() < self.rate:
            r = self.rng.choice(cands)
            comp = self.comp[r.model]
            self.drops.append((r.dispatched - r.progress, sum(comp[r.progress:r.dispatched]),
                               sum(comp[r.progress + 1:r.dispatched])))
            return Preempt(r.id, Mechanism.KILL, restart=False)
        return Dispatch(self.select(view.board))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--npu", default="lwplus")
    ap.add_argument("--qps", type=float, default=300.0)
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--rate", type=float, default=0.02, help="share of decisions that drop")
    args = ap.parse_args()
    npu = preset(args.npu)
    tenants, feet = costed_tenants(["resnet50", "bert-base"], npu, [(0, 1), (1, 1)],
                                   "systolic-ws")
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.exponential(1 / args.qps, args.requests))
    rows = [(float(x), int(k), 1, math.inf)
            for x, k in zip(t, rng.integers(0, 2, len(t)), strict=True)]
    pol = Dropper([x.compute_s for x in tenants], args.rate, 0)
    sim = Simulator(tenants, npu.weight_buffer, npu.dram_bw, pol, arrivals=rows,
                    footprints=feet, traffic=True, latency_s=npu.dram_latency_s)
    sim.run()
    n = np.array([d[0] for d in pol.drops])
    s = np.array([d[1] for d in pol.drops]) * 1e6
    rest = np.array([d[2] for d in pol.drops]) * 1e6
    mean_req = np.mean([sum(x.compute_s) for x in tenants]) * 1e6
    print(f"{args.npu}, {args.qps:g} QPS: {len(n)} drops of {len(rows)} requests "
          f"(a request computes {mean_req:.0f} us on average)")
    print(f"  units in flight per drop: mean {n.mean():.2f}, p95 {np.percentile(n, 95):.0f}, "
          f"max {n.max()}")
    print(f"  their PE time: mean {s.mean():.1f} us, p95 {np.percentile(s, 95):.1f} us, "
          f"max {s.max():.1f} us")
    print(f"  beyond the first of them (what a take-back would save): mean {rest.mean():.1f} us, "
          f"max {rest.max():.1f} us")


if __name__ == "__main__":
    main()
