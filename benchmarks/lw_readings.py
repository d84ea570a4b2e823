"""Makespan over its lower bound for each reading of Layerweaver's IV.4 rules (not a test).

For every reading (``npuweave.schedule.lw_reading``: the printed formulas, npuweave's former
reading, and each single choice flipped from the printed default) it plans

* ``--instances`` random two- and three-tenant instances (seeded; 2-12 units per tenant,
  weights up to the whole buffer, compute 0-5 s, one request each), and
* the 16 zoo pairs of the Layerweaver reproduction in both scenarios, costed as the
  reproduction costs them (``maestro``, sequence length 32), one request each,

with the failsafe off, and prints the mean and the maximum of makespan / lower bound, where
the lower bound is ``max(total compute + the shortest first fetch, total fetch time + the
shortest compute)``: the PE waits for some first fetch, and some computation follows the last
fetch::

    python benchmarks/lw_readings.py --instances 2000
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from typing import Any

from npuweave.experiments.layerweaver import SCENARIOS, all_pairs, model_spec
from npuweave.hardware import preset
from npuweave.schedule import make_tenant, plan
from npuweave.schedule.lw_reading import CHOICES, NPUWEAVE, PRINTED
from npuweave.sim.tenants import tenants_for

BUF = 100


def readings() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {"printed (default)": {"reading": "printed"}, "npuweave (former)": {"reading": "npuweave"}}
    for field, (printed, other) in CHOICES.items():
        assert getattr(PRINTED, field) == printed and getattr(NPUWEAVE, field) == other
        out[f"printed, {field}={other}"] = {field: other}
    return out


def ratio(tenants, buf: int, bw: float, opts: dict[str, Any]) -> float:
    s = plan("layerweaver", tenants, buf, bw, 1, failsafe=False, **opts)
    comp = sum(t.total_compute_s for t in tenants)
    fetch = sum(t.total_weight_bytes for t in tenants) / bw
    first = min(t.weight_bytes[0] for t in tenants) / bw
    last = min(c for t in tenants for c in t.compute_s)
    return s.makespan_s / max(comp + first, fetch + last)


def random_instances(n: int, seed: int = 0) -> list[list]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ts = []
        for k in range(rng.choice((2, 2, 3))):
            units = rng.randint(2, 12)
            ts.append(make_tenant(f"T{k}", [rng.uniform(0.0, 5.0) for _ in range(units)],
                                  [rng.randint(0, BUF) for _ in range(units)], BUF))
        out.append(ts)
    return out


def zoo_pairs() -> list[tuple[list, int, float]]:
    out = []
    for sc in SCENARIOS.values():
        npu = preset(sc.npu)
        for pair in all_pairs():
            specs = [model_spec(a, 32) for a in pair]
            out.append((tenants_for(specs, npu, sc.batch, "maestro"), npu.weight_buffer,
                        npu.dram_bw))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=2000)
    args = ap.parse_args()
    rand, zoo = random_instances(args.instances), zoo_pairs()
    print(f"{'reading':<36}{'random mean':>12}{'max':>8}{'zoo mean':>10}{'max':>8}")
    for name, opts in readings().items():
        r = [ratio(ts, BUF, 10.0, opts) for ts in rand]
        z = [ratio(ts, buf, bw, opts) for ts, buf, bw in zoo]
        print(f"{name:<36}{100 * (statistics.mean(r) - 1):>11.2f}%{100 * (max(r) - 1):>7.1f}%"
              f"{100 * (statistics.mean(z) - 1):>9.2f}%{100 * (max(z) - 1):>7.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
