"""Task sets (``layer_latencies_s`` rows) at scale: is serving them linear in rows and labels?

A task set of ``n`` rows (Poisson arrivals at ``--rate`` tasks/s, 1-10 layers of 0.01-2 ms,
priorities 1/3/9) is written to a temporary JSON file and served by ``p-prema
reading=dysta``: once with every row its own model label (``m{i}_L{layers}``, the worst case
for per-label work) and once with 8 shared labels. Printed per size: median seconds of reading
the file and of ``serve_tasks`` (simulation, request table, summary rows), and microseconds
per row; a linear cost keeps the per-row figure flat as ``n`` grows.

Before the fix, labels were indexed with ``tuple.index`` (quadratic: 4.7 s of 33 s at 10,000
distinct labels) and ``npuweave serve`` printed one screen row per label (about 25 ms each).

Run: ``python benchmarks/bench_tasksets.py [--sizes 2500,5000,10000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _timing import median_seconds  # noqa: E402

from npuweave.sim.tasksets import read_task_set, serve_tasks  # noqa: E402


def rows(n: int, rate: float, distinct: bool, seed: int = 1) -> list[dict]:
    """``n`` task-set rows; every label distinct or one of 8."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(1.0 / rate, n))
    out = []
    for i in range(n):
        layers = int(rng.integers(1, 11))
        label = f"m{i}_L{layers}" if distinct else f"m{i % 8}"
        out.append({"id": f"r{i}", "model": label, "arrival_s": float(t[i]),
                    "priority": int(rng.choice([1, 3, 9])),
                    "layer_latencies_s": rng.uniform(1e-5, 2e-3, layers).tolist()})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2500,5000,10000")
    ap.add_argument("--rate", type=float, default=100.0, help="arrivals per second")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"{'labels':>9} {'rows':>6} {'read s':>7} {'serve s':>8} {'us/row':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for distinct in (True, False):
            for n in (int(s) for s in args.sizes.split(",")):
                path = Path(tmp) / f"tasks{n}.json"
                path.write_text(json.dumps(rows(n, args.rate, distinct)))
                ts = read_task_set(str(path))
                assert ts is not None
                read = median_seconds(lambda p=path: read_task_set(str(p)), args.repeats)
                serve = median_seconds(
                    lambda t=ts: serve_tasks(t, "p-prema", reading="dysta"), args.repeats)
                print(f"{'distinct' if distinct else '8 shared':>9} {n:>6} {read:7.2f} "
                      f"{serve:8.2f} {1e6 * (read + serve) / n:7.0f}")


if __name__ == "__main__":
    main()
