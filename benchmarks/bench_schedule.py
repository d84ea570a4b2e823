"""Scheduler and engine speed: decisions per microsecond vs tenants (k) and layers (N).

Run: ``python benchmarks/bench_schedule.py [--quick]``. Prints two tables (median of repeats):

1. the Layerweaver scheduler alone (``plan``: the greedy loop on the predicted state, no
   engine) for k = 2, 4, 8 tenants and N total scheduled units, on both paths in the same run:
   ``ref`` is the pure-Python reference (``plan_using("python", ...)``), ``fast`` the compiled
   kernel (``plan_using("kernel", ...)``, numba), ``x`` the speed-up; ``us/dec/k`` flat across
   k and ``us/dec`` flat across N show cost linear in k and in N. The kernel's one-off JIT
   compile (or cache load) is timed separately, before the table;
2. the full simulation (``run_tenants``: policy + event-driven engine) per unit, for
   layerweaver and the cheapest policy (sequential) as a baseline measured in the same run.

The thesis reports about 15 layers/us for its C++ scheduler (k = 2).
Workload: seeded synthetic tenants alternating compute-intensive (CNN-like) and
memory-intensive (NLP-like) layer mixes, 50 layers per request, on a 48 MiB / 225 GB/s NPU.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from npuweave.schedule import kernel, make_tenant
from npuweave.schedule.plan import plan_using
from npuweave.sim.streams import run_tenants

BUF = 48 * 2**20
BW = 225e9
LAYERS = 50


def tenants(k: int, seed: int = 0):
    rng = random.Random(seed)
    out = []
    for j in range(k):
        compute_heavy = j % 2 == 0
        comps, sizes = [], []
        for _ in range(LAYERS):
            size = rng.randint(10_000, 2_000_000) if compute_heavy else rng.randint(1, 8) * 2**20
            fetch = size / BW
            comps.append(fetch * (rng.uniform(1.5, 8.0) if compute_heavy
                                  else rng.uniform(0.05, 0.6)))
            sizes.append(size)
        out.append(make_tenant(f"t{j}", comps, sizes, BUF))
    return out


def median_time(fn, repeats: int) -> float:
    """Median CPU seconds of ``fn()`` (process time: the benchmark box is shared, so wall
    time would mostly measure the neighbours)."""
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def bench_scheduler(ks, totals, repeats):
    t0 = time.perf_counter()
    # the kernel implements the "npuweave" reading of IV.4; both paths run it here
    plan_using("kernel", "layerweaver", tenants(2), BUF, BW, 1, reading="npuweave")
    how = "numba" if kernel.available() else "numba missing: plain Python"
    print(f"Kernel first call (JIT compile or cache load, {how}): "
          f"{time.perf_counter() - t0:.2f} s wall")
    print("\nLayerweaver scheduler alone (plan: select + commit per unit), ref = Python "
          "reference, fast = kernel")
    print(f"{'k':>3} {'N units':>9} {'ref dec/us':>11} {'fast dec/us':>12} {'x':>6} "
          f"{'ref us/dec':>11} {'fast us/dec':>12} {'fast us/dec/k':>14}")
    for k in ks:
        ts = tenants(k)
        for n in totals:
            reqs = max(1, n // (k * LAYERS))
            units = reqs * k * LAYERS
            us = {}
            for path in ("python", "kernel"):
                sec = median_time(lambda ts=ts, reqs=reqs, p=path:
                                  plan_using(p, "layerweaver", ts, BUF, BW, reqs,
                                             reading="npuweave"), repeats)
                us[path] = sec * 1e6 / units
            ref, fast = us["python"], us["kernel"]
            print(f"{k:>3} {units:>9} {1 / ref:>11.3f} {1 / fast:>12.3f} {ref / fast:>6.1f} "
                  f"{ref:>11.2f} {fast:>12.3f} {fast / k:>14.3f}")


def bench_sim(ks, total, repeats):
    print("\nFull simulation (policy + event-driven engine), per unit")
    print(f"{'k':>3} {'policy':>12} {'N units':>9} {'units/us':>9} {'us/unit':>8} "
          f"{'vs seq':>7}")
    for k in ks:
        ts = tenants(k)
        reqs = max(1, total // (k * LAYERS))
        units = reqs * k * LAYERS
        base = None
        for policy in ("sequential", "layerweaver"):
            sec = median_time(lambda ts=ts, reqs=reqs, p=policy:
                              run_tenants(ts, BUF, BW, p, reqs), repeats)
            us = sec * 1e6 / units
            base = base or us
            print(f"{k:>3} {policy:>12} {units:>9} {1 / us:>9.3f} {us:>8.2f} "
                  f"{us / base:>7.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = ap.parse_args()
    repeats = 3 if args.quick else 5
    totals = (2_000, 8_000) if args.quick else (5_000, 20_000, 80_000)
    bench_scheduler((2, 4, 8), totals, repeats)
    bench_sim((2, 4, 8), 4_000 if args.quick else 20_000, repeats)


if __name__ == "__main__":
    main()
