"""Speed of arrival generation and of the metrics (serving and closed-loop).

Run: ``python benchmarks/bench_arrivals.py [--quick] [--reproduce]``. Prints three tables,
medians of repeats, each with a baseline measured in the same run:

1. arrivals: ``loadgen_server`` (block-wise NumPy MT19937) against a word-at-a-time Python
   MT19937 with the same arithmetic, for 10,000 arrivals; ``poisson`` for RN+BB at 300 + 80 QPS;
2. serving metrics: ``metrics.serving.summarize`` on a ``RequestTable`` against the
   record-by-record metrics (``percentile`` x 5, ``sla_violation_rate`` x 4, ``antt``) on
   ``RequestRecord`` lists, 10k and 100k requests;
3. closed-loop metrics: ``metrics.summarize`` (``IntervalIndex``) against the frozen copy of
   the code before it (``tests/metrics/legacy_metrics``) on simulated Layerweaver runs; with
   ``--reproduce`` also ``reproduce_layerweaver`` (RN+BB and IC+XL, both scenarios, every
   scheduler) with either summarize, end to end.

The machine is shared and noisy: compare the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from _timing import median_seconds

from npuweave.hardware import preset
from npuweave.metrics import antt, percentile, sla_violation_rate
from npuweave.metrics import summarize as closed_summarize
from npuweave.metrics.requests import request_table
from npuweave.metrics.serving import summarize
from npuweave.sim import run_streams
from npuweave.sim.arrivals import loadgen_schedule_ns, poisson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "metrics"))
import legacy_metrics.summary as legacy  # noqa: E402  (the pre-index code, for the baseline)


def python_loadgen(seed: int, qps: float, count: int) -> list[int]:
    """Baseline: MT19937 one word at a time in Python, same arithmetic as ``loadgen_server``."""
    mt = [seed % 2**32]
    for i in range(1, 624):
        mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + i) & 0xFFFFFFFF)
    idx = 624

    def word() -> int:
        nonlocal idx
        if idx >= 624:
            for i in range(624):
                y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
                mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            idx = 0
        y = mt[idx]
        idx += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)

    stamps = [0]
    while len(stamps) < count:
        u = min(float(word() + (word() << 32)) / 2.0**64, math.nextafter(1.0, 0.0))
        stamps.append(stamps[-1] + int(-math.log(1.0 - u) / qps * 1e9))
    return stamps


def table_arrivals(repeats: int) -> None:
    print(f"\n1. arrivals (median of {repeats})")
    print(f"{'case':<44}{'ms':>10}{'x':>8}")
    base = median_seconds(lambda: python_loadgen(1, 300.0, 10_000), repeats)
    fast = median_seconds(lambda: loadgen_schedule_ns(300.0, 1e-9, 1, min_query_count=10_000),
                          repeats, warmup=True)
    print(f"{'loadgen 10k, Python MT19937 (baseline)':<44}{base * 1e3:>10.2f}{1.0:>8.2f}")
    print(f"{'loadgen 10k, loadgen_server (NumPy)':<44}{fast * 1e3:>10.2f}{base / fast:>8.1f}")
    dur = 10_000 / 380.0
    pois = median_seconds(lambda: poisson(("rn", "bb"), (300.0, 80.0), dur, 7), repeats, True)
    print(f"{'poisson RN+BB 300+80 QPS, ~10k arrivals':<44}{pois * 1e3:>10.2f}{base / pois:>8.1f}")


def _serving_inputs(n: int):
    rng = np.random.default_rng(0)
    arrival = np.sort(rng.uniform(0, n / 400.0, n))
    model = rng.integers(0, 2, n)
    iso = np.array([0.002, 0.006])[model]
    finish = arrival + iso * rng.uniform(1.0, 8.0, n)
    prio = rng.choice([1, 3, 9], n)
    table = request_table(("rn", "bb"), model, arrival, finish, iso, priority=prio)
    records = [SimpleNamespace(tenant=str(m), model=str(m), arrival_s=a, finish_s=f,
                               latency_s=f - a, iso=i, deadline_s=None, batch=1)
               for m, a, f, i in zip(model, arrival, finish, iso, strict=True)]
    return table, records


def _record_metrics(records) -> None:
    for q in (50, 90, 95, 99, 99.9):
        percentile(records, q)
    for mult in (2, 5, 10, 20):
        sla_violation_rate(records, slack=mult, standalone=lambda r: r.iso)
    antt(records, lambda r: r.iso, window=None, by="request")


def table_serving(sizes, repeats: int) -> None:
    print(f"\n2. serving metrics (median of {repeats})")
    print(f"{'requests':>10}{'records ms':>14}{'summarize ms':>15}{'x':>8}")
    for n in sizes:
        table, records = _serving_inputs(n)
        base = median_seconds(lambda records=records: _record_metrics(records), repeats)
        new = median_seconds(lambda table=table, n=n: summarize(table, span_s=n / 400.0), repeats)
        print(f"{n:>10}{base * 1e3:>14.1f}{new * 1e3:>15.1f}{base / new:>8.1f}")


CLOSED_METRICS = ("stp", "antt", "fairness", "pe_utilization", "dram_utilization",
                  "throughput", "makespan_ratio")


def table_closed(repeats: int) -> None:
    print(f"\n3. closed-loop metrics per run (median of {repeats})")
    print(f"{'run':<34}{'intervals':>10}{'legacy ms':>11}{'indexed ms':>12}{'x':>8}")
    cases = (("RN+BB memory-centric b1", ["resnet50", "bert-base"], "memory-centric", 1),
             ("IC+XL compute-centric b16", ["inception_v3", "xlnet"], "compute-centric", 16))
    for label, models, npu, batch in cases:
        run = run_streams(models, preset(npu), batch=batch, requests=10)
        single = {m: 1e-3 for m in models}
        old = median_seconds(lambda run=run, s=single: legacy.summarize(run, s, CLOSED_METRICS),
                             repeats)
        new = median_seconds(lambda run=run, s=single: closed_summarize(run, s, CLOSED_METRICS),
                             repeats)
        print(f"{label:<34}{len(run.intervals):>10}{old * 1e3:>11.2f}{new * 1e3:>12.2f}"
              f"{old / new:>8.1f}")


def table_reproduce(repeats: int) -> None:
    import statistics
    import time

    from npuweave.experiments.layerweaver import reproduce_layerweaver

    # the package exports a function named ``compare``: fetch the module itself
    compare = sys.modules["npuweave.experiments.compare"]

    print(f"\n4. reproduce_layerweaver RN+BB,IC+XL, both scenarios, every scheduler "
          f"(alternating, median of {repeats})")
    times: dict[str, list[float]] = {"legacy": [], "indexed": []}
    rows = {}
    reproduce_layerweaver(pairs="RN+BB,IC+XL")  # warm the caches (costs, standalone times)
    for _ in range(repeats):
        for label, fn in (("legacy", legacy.summarize), ("indexed", closed_summarize)):
            compare.summarize = fn
            t0 = time.perf_counter()
            rows[label] = reproduce_layerweaver(pairs="RN+BB,IC+XL")
            times[label].append(time.perf_counter() - t0)
    compare.summarize = closed_summarize
    old, new = (statistics.median(times[k]) for k in ("legacy", "indexed"))
    print(f"legacy {old:.2f} s, indexed {new:.2f} s, x {old / new:.2f}; "
          f"rows identical: {rows['legacy'] == rows['indexed']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, 10k requests only")
    ap.add_argument("--reproduce", action="store_true", help="also time reproduce_layerweaver")
    args = ap.parse_args()
    repeats = 3 if args.quick else 9
    table_arrivals(repeats)
    table_serving((10_000,) if args.quick else (10_000, 100_000), repeats)
    table_closed(repeats)
    if args.reproduce:
        table_reproduce(3 if args.quick else 5)


if __name__ == "__main__":
    main()
