"""Closed-loop speed before/after: the same run on two source trees, alternating rounds.

Each round runs, each in a fresh process: ``--before`` (another checkout, e.g. main: its
``run_streams`` is whatever that tree does), this tree with the numba kernels loaded, and this
tree as a fresh process picks by itself. The run: RN+BB on the memory-centric NPU, closed-loop
Layerweaver, 200 requests per stream (26,000 layers), plus STP/ANTT/fairness through
``experiments.compare.evaluate``; median of 7 after a warm-up. On a shared machine single
rounds vary; compare within a round.

Run: ``python benchmarks/bench_fastloop.py --before /work/main [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parents[1])

DRIVER = """
import statistics, sys, time
sys.path.insert(0, {root!r})
from npuweave.experiments.compare import evaluate, standalone_lookup
from npuweave.hardware import preset
from npuweave.sim import run_streams
models = ["resnet50", "bert-base"]
npu = preset("memory-centric")
alone = standalone_lookup(models, npu, "systolic-ws")
if {load}:
    from npuweave.schedule import kernel
    kernel.load()
def go():
    r = run_streams(models, npu, scheduler="layerweaver", requests=200)
    evaluate(r, alone, ("stp", "antt", "fairness"))
go()
xs = []
for _ in range(7):
    t = time.perf_counter(); go(); xs.append(time.perf_counter() - t)
print(26000 / statistics.median(xs) / 1e6)
"""


def rate(root: str, load: bool) -> float:
    code = DRIVER.format(root=root, load=load)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": root})
    return float(out.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the other checkout (e.g. /work/main)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    cols: list[list[float]] = [[], [], []]
    print(f"{'round':>5}  {'before':>10}  {'loaded':>10}  {'fresh':>10}   (layers/us)")
    for k in range(args.rounds):
        row = [rate(args.before, False), rate(HERE, True), rate(HERE, False)]
        for c, v in zip(cols, row):
            c.append(v)
        print(f"{k + 1:>5}  " + "  ".join(f"{v:>10.3f}" for v in row))
    med = [statistics.median(c) for c in cols]
    print(f"{'median':>6} " + "  ".join(f"{v:>10.3f}" for v in med)
          + f"   loaded/before {med[1] / med[0]:.1f}x, fresh/before {med[2] / med[0]:.1f}x")


if __name__ == "__main__":
    main()
