"""Layerweaver+ candidate grouping: deadline misses per load, per-model FIFO vs per request.

The RN+BB 1:1 "valley" (Layerweaver+ misses more than 1% at 1.4-3.5 kQPS but not at 4 kQPS)
was read as requests queued behind their model's batch in service being invisible to the
slack check; ``grouping="per-request"`` makes up to ``max_inflight`` batches of one model
separate candidates; ``inherit=True`` gives the batch in service the deadline of the queue
behind it instead. This prints the misses of one seeded run per load and setting (the
capacity search's runs, without its early stop).

Usage::

    PYTHONPATH=$PWD python benchmarks/lwplus_grouping.py [--loads 1400,...] [--caps 2,4,8]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from npuweave.experiments.lwplus import ServeSetup, _Runner
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.sim.lwserve import Batching

MODELS = ("resnet50", "bert-base")
DEADLINES = (0.015, 0.130)


def misses(grouping: str, cap: int, load: float, requests: int, seed: int,
           inherit: bool = False) -> dict[str, float]:
    """One run of Layerweaver+ (approx) at ``load`` total QPS, RN:BB 1:1, window 0, max 16."""
    setup = ServeSetup(requests=requests)

    def policy() -> LayerweaverPlus:
        return LayerweaverPlus("approx", grouping, max_inflight=cap, inherit=inherit)

    run = _Runner(MODELS, (0.5, 0.5), DEADLINES, policy, Batching(0.0, 16), setup, stop=False)
    t0 = time.perf_counter()
    out = run.serve(load, seed)
    _, times, ids = run.runs[load, seed]
    late = (out.finish_s - times) > np.asarray(DEADLINES)[ids]
    return {"missed": out.missed, "rn": int(late[ids == 0].sum()), "bb": int(late[ids == 1].sum()),
            "batch": float(out.batch.mean()), "urgent": out.urgent / max(out.decisions, 1),
            "s": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", default="1400,1600,2000,2500,3000,3500,4000")
    ap.add_argument("--caps", default="2,4,8", help="max_inflight values for per-request")
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    loads = [float(x) for x in args.loads.split(",")]
    cases = [("per-model-fifo", 1, False)] + [
        ("per-request", int(c), False) for c in args.caps.split(",")] + [
        ("per-model-fifo", 1, True), ("per-request", 4, True)]
    print(f"RN+BB 1:1 on lwplus, deadlines 15/130 ms, {args.requests} requests, seed "
          f"{args.seed}: missed (RN/BB), mean batch, Mode 2 share")
    print(f"{'grouping':<28}" + "".join(f"{int(x):>20}" for x in loads))
    for grouping, cap, inherit in cases:
        cells = []
        for load in loads:
            r = misses(grouping, cap, load, args.requests, args.seed, inherit)
            cells.append(f"{r['missed']} ({r['rn']}/{r['bb']}) b{r['batch']:.1f}")
        label = grouping if grouping == "per-model-fifo" else f"per-request k={cap}"
        label += " +inherit" if inherit else ""
        print(f"{label:<28}" + "".join(f"{c:>20}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
