"""Open-loop serving speed, this tree against an older checkout, interleaved in one run.

The rows of ``bench_serve.py``'s open loop (RN+BB, memory-centric, Poisson 300/80 qps for 5 s,
seed 7, priorities 1/9; ``hpf-p`` preempts with checkpoints), each run in a fresh process per
tree, alternating between the trees so that the shared machine's load hits both alike.
Layers per second of wall time and of process (CPU) time, medians of ``--repeats``; the ratio
is this tree's speed over the baseline's. Without ``--against`` only this tree is timed.

Run: ``python benchmarks/bench_openloop.py [--against DIR] [--repeats 5]``, where ``DIR`` is
an older checkout, e.g. ``git worktree add /tmp/base <commit>``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SCHEDULERS = ("hpf-p", "fcfs", "layerweaver")

# One timing in a fresh interpreter: a warm-up run, then the best of two (wall and CPU).
CHILD = """
import json, sys, time
from npuweave.hardware import preset
from npuweave.sim.arrivals import poisson
from npuweave.sim.serving import serve
from npuweave.sim.tenants import tenants_for
models = ["resnet50", "bert-base"]
npu = preset("memory-centric")
arr = poisson(models, (300.0, 80.0), float(sys.argv[2]), seed=7, priority=(1, 9))
per = [len(t.units) for t in tenants_for(models, npu, 1)]
r = serve(models, npu, arr, sys.argv[1])
wall, cpu = [], []
for _ in range(2):
    w, c = time.perf_counter(), time.process_time()
    r = serve(models, npu, arr, sys.argv[1])
    wall.append(time.perf_counter() - w)
    cpu.append(time.process_time() - c)
layers = sum(per[m] for m in r.table.model.tolist())
print(json.dumps({"layers": layers, "wall": min(wall), "cpu": min(cpu), "events": r.events,
                  "preemptions": int(r.table.preemptions.sum()), "requests": len(arr)}))
"""


def _time(tree: Path, sched: str, duration: float) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", CHILD, sched, str(duration)], cwd=tree,
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, help="an older checkout to compare with")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--duration", type=float, default=5.0, help="simulated seconds")
    ap.add_argument("--schedulers", default=",".join(SCHEDULERS))
    args = ap.parse_args()
    trees = ({"base": args.against.resolve()} if args.against else {}) | {"this": HERE}
    scheds = args.schedulers.split(",")
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    load = [os.getloadavg()[0]]
    for _ in range(args.repeats):
        for name, tree in trees.items():
            for s in scheds:
                runs.setdefault((name, s), []).append(_time(tree, s, args.duration))
        load.append(os.getloadavg()[0])
    print(f"load average (1 min) during the run: {min(load):.1f}-{max(load):.1f}")
    print(f"{'scheduler':<12} {'tree':<5} {'wall k layers/s':>16} {'CPU k layers/s':>15} "
          f"{'events/layer':>12} {'ratio (CPU)':>11}  note")
    for s in scheds:
        cpu_speed = {}
        for name in trees:
            rs = runs[name, s]
            layers = rs[0]["layers"]
            wall = statistics.median(r["wall"] for r in rs)
            cpu = statistics.median(r["cpu"] for r in rs)
            cpu_speed[name] = layers / cpu
            ratio = (f"{cpu_speed[name] / cpu_speed['base']:.2f}x" if "base" in cpu_speed
                     else "")
            print(f"{s:<12} {name:<5} {layers / wall / 1e3:>16.0f} {layers / cpu / 1e3:>15.0f} "
                  f"{rs[0]['events'] / layers:>12.2f} {ratio:>11}  "
                  f"{rs[0]['requests']} requests, {rs[0]['preemptions']} preemptions")


if __name__ == "__main__":
    main()
