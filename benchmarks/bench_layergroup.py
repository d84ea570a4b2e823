"""Benchmark: layer-group compile time, greedy vs DP, on ResNet-50 and DenseNet-121.

Prints one row per (model, batch, method): median and min wall time over repeats (each
repeat starts from cold cost caches), the plan's group count, and DRAM traffic and cycles
relative to running layer by layer. The baseline for time is the greedy search, measured in
the same run. Target: ResNet-50 under 2 s with the DP search.

    python benchmarks/bench_layergroup.py [--repeats 5] [--batch 1 8] [--npu lmem-16m]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import onnx

from npuweave.compile.layergroup import compile_groups
from npuweave.hardware import get_npu
from npuweave.workload import load_layers

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
MODELS = {"resnet50": "resnet50",
          "densenet121": os.path.join(LIGHT, "light_densenet121.onnx")}
TARGET_S = 2.0


def _clear_cost_caches() -> None:
    try:
        from npuweave.cost import clear_cache
    except ImportError:
        return
    clear_cache()


def run(spec: str, npu, batch: int, method: str, repeats: int):
    layers = load_layers(spec)
    times, plan = [], None
    for _ in range(repeats):
        _clear_cost_caches()
        t0 = time.perf_counter()
        plan = compile_groups(layers, npu, batch=batch, method=method)
        times.append(time.perf_counter() - t0)
    return len(layers), statistics.median(times), min(times), plan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--npu", default="lmem-16m")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    args = ap.parse_args()
    npu = get_npu(args.npu)
    print(f"layer-group compile time on {npu.name}, median of {args.repeats} (cold caches)")
    head = (f"{'model':<12} {'layers':>6} {'batch':>5} {'method':<7} {'median s':>9} "
            f"{'min s':>7} {'x greedy':>8} {'groups':>6} {'DRAM/lbl':>8} {'cyc/lbl':>8}")
    print(head)
    print("-" * len(head))
    for name in args.models:
        for batch in args.batch:
            greedy_s = None
            for method in ("greedy", "dp"):
                n, med, low, plan = run(MODELS[name], npu, batch, method, args.repeats)
                greedy_s = med if method == "greedy" else greedy_s
                grouped = sum(1 for g in plan.groups if len(g.layers) > 1)
                print(f"{name:<12} {n:>6} {batch:>5} {method:<7} {med:>9.3f} {low:>7.3f} "
                      f"{med / greedy_s:>8.1f} {grouped:>6} "
                      f"{plan.dram_bytes / plan.baseline_dram_bytes:>8.3f} "
                      f"{plan.cycles / plan.baseline_cycles:>8.3f}")
    print(f"target: resnet50 dp under {TARGET_S} s")


if __name__ == "__main__":
    main()
