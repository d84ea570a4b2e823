"""Why Layerweaver+ sustains less than the deadline-blind Layerweaver at some points.

For every point of a reproduction CSV where Layerweaver+ (approx) reached a lower capacity
than Layerweaver (same figure, pair, ratio and deadlines), run both at Layerweaver's capacity
load on the same arrivals (the search's seeds, no early stop) and a third policy that isolates
Mode 2: Layerweaver+ whose deadlines all lie 10^6 s later (the same order among requests, so
Mode 1's slack tie-break is unchanged, but no request is ever at risk: Mode 2 never fires), its
misses counted against the true deadlines. The method was fixed before the runs
(docs/REPRODUCTION.md, "Layerweaver+'s Mode 1 reads IV.4 ..."):

* Layerweaver itself misses the budget at that load once every run goes to the end ->
  ``lw truncated``: its search passed the load only because a failing seed's run stopped at
  2% of its requests (a lower bound) while the pooled count stayed under 1%;
* Layerweaver+ passes at that load -> ``search``: its capacity search failed at a lower load
  and never tried this one (a non-monotone miss rate, or a failure inside the noise);
* Mode 1 alone passes and Layerweaver+ fails -> ``mode 2``: Mode 2's overrides cost the
  throughput;
* Mode 1 alone fails too -> ``mode 1 tie-break``: ordering ties by slack instead of chapter IV's
  decoupling distance costs it.

Beside them, Layerweaver without its failsafe (``LW no fs``: Layerweaver+ never uses it) tells
whether chapter IV's failsafe is what lets Layerweaver sustain the load.

Run from the repository root::

    PYTHONPATH=$PWD python benchmarks/lwplus_gap.py docs/results/lwplus/lwplus.csv
"""

from __future__ import annotations

import argparse
import csv
import sys

import numpy as np

from npuweave.experiments.capacity import poisson_trace
from npuweave.experiments.lwplus import ServeSetup, model_costs
from npuweave.hardware import get_npu
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.sim.lwkernel import serve_auto
from npuweave.sim.lwserve import Batching

#: added to every relative deadline: later than any finish, the same order among requests
SHIFT_S = 1e6


def _deadlines(text: str) -> tuple[float, float]:
    a, b = (float(x.removesuffix("ms")) / 1e3 for x in text.split("/"))
    return a, b


def _misses(models, share, load, deadlines, policy, setup, shift=0.0):
    """Per-model misses and requests, and the Mode 2 share, over the setup's seeds."""
    npu = get_npu(setup.npu)
    costs = [model_costs(m, setup.npu, setup.max_batch, setup.cost_model) for m in models]
    missed, total, urgent, decisions = np.zeros(2, int), np.zeros(2, int), 0, 0
    for seed in setup.seeds:
        times, ids = poisson_trace([load * s for s in share], setup.requests, seed)
        pol = policy()
        out = serve_auto(costs, npu.weight_buffer, npu.dram_bw, times, ids,
                         [d + shift for d in deadlines], pol, Batching(0.0, setup.max_batch))
        late = out.finish_s - times > np.asarray(deadlines)[ids]
        for m in (0, 1):
            missed[m] += int(late[ids == m].sum())
            total[m] += int((ids == m).sum())
        urgent += out.urgent
        decisions += out.decisions
    return missed, total, urgent / max(decisions, 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--figures", default="V.5,V.7")
    ap.add_argument("--requests", type=int, default=4000, help="per seed (the search's)")
    ap.add_argument("--seeds", default="0,1,2")
    args = ap.parse_args()
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["figure"] in args.figures.split(",")]
    key = {(r["figure"], r["pair"], r["ratio"], r["deadlines"], r["scheduler"]): r for r in rows}
    setup = ServeSetup(requests=args.requests,
                       seeds=tuple(int(x) for x in args.seeds.split(",")))
    print("| figure | pair | ratio | deadlines | LW+ / LW load | misses at LW's load: LW "
          "(vision, NLP) | LW no fs | LW+ | LW+ Mode 2 share | Mode 1 alone | cause |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (fig, pair, ratio, dls, sched), lw in sorted(key.items()):
        plus = key.get((fig, pair, ratio, dls, "lwplus-approx"))
        if sched != "layerweaver" or plus is None or not float(plus["qps"]) < float(lw["qps"]):
            continue
        load = float(lw["qps"])
        share = (float(lw["qps_a"]) / load, float(lw["qps_b"]) / load)
        models = tuple(lw["models"].split("+"))
        d = _deadlines(dls)
        budget = setup.budget * setup.requests * len(setup.seeds)
        m_lw, n, _ = _misses(models, share, load, d, lambda: Layerweaver(), setup)
        m_nf, _, _ = _misses(models, share, load, d, lambda: Layerweaver(failsafe=False), setup)
        m_p, _, u = _misses(models, share, load, d, lambda: LayerweaverPlus("approx"), setup)
        m_1, _, _ = _misses(models, share, load, d, lambda: LayerweaverPlus("approx"), setup,
                            SHIFT_S)
        cause = ("lw truncated" if m_lw.sum() >= budget else "search" if m_p.sum() < budget
                 else "mode 2" if m_1.sum() < budget else "mode 1 tie-break")
        print(f"| {fig} | {pair} | {ratio} | {dls} | {float(plus['qps']) / load:.2f} | "
              f"{m_lw[0]}, {m_lw[1]} of {n[0]}, {n[1]} | {m_nf[0]}, {m_nf[1]} | {m_p[0]}, {m_p[1]} | {u:.2%} | "
              f"{m_1[0]}, {m_1[1]} | {cause} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
