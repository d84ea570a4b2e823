"""Benchmark: how fast ``npuweave.cost.profile`` is.

Imports ``light_resnet50.onnx`` (bundled with the ``onnx`` package), then profiles it and every
zoo model on every NPU preset with each cost model. Times are medians over ``--repeats`` runs of
a *cold* profile (the per-layer cache cleared before each run), in milliseconds; the ratio
column compares each model with the ``roofline`` model measured in the same run. A last line
times the whole zoo on all presets, cold and warm (cached).

Targets (issue 2): ResNet-50 (54 layers) under 5 ms; the whole zoo on all presets under 1 s.

Run: ``python benchmarks/bench_profile.py [--repeats 21]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence

import onnx

from npuweave.cost import clear_cache, profile
from npuweave.hardware import preset, preset_names
from npuweave.workload import Layer, load_layers, zoo_names

MODELS = ("systolic-ws", "prema", "roofline")


def median_ms(fn: Callable[[], object], repeats: int, cold: bool = True) -> float:
    """Median wall time of ``fn()`` in ms; ``cold`` clears the cost cache before every run."""
    times = []
    for _ in range(repeats):
        if cold:
            clear_cache()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def workloads() -> list[tuple[str, Sequence[Layer]]]:
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                         "light_resnet50.onnx")
    t0 = time.perf_counter()
    out = [("light_resnet50.onnx", load_layers(light))]
    print(f"imported light_resnet50.onnx in {1e3 * (time.perf_counter() - t0):.1f} ms")
    out += [(name, load_layers(name)) for name in zoo_names()]
    return out


def bench_table(works, repeats: int) -> None:
    header = (f"{'model':<22}{'layers':>7}  {'npu':<16}"
              + "".join(f"{m + ' ms':>15}" for m in MODELS) + f"{'ws/roofline':>13}")
    print(header)
    print("-" * len(header))
    for name, layers in works:
        for npu_name in preset_names():
            hw = preset(npu_name)
            ms = {m: median_ms(lambda m=m, ls=layers, hw=hw: profile(ls, hw, 1, model=m), repeats)
                  for m in MODELS}
            ratio = ms["systolic-ws"] / ms["roofline"]
            print(f"{name:<22}{len(layers):>7}  {npu_name:<16}"
                  + "".join(f"{ms[m]:>15.3f}" for m in MODELS) + f"{ratio:>13.2f}")


def bench_zoo(works, repeats: int) -> None:
    npus = [preset(n) for n in preset_names()]

    def everything() -> None:
        for _, layers in works:
            for hw in npus:
                for batch in (1, 16):
                    profile(layers, hw, batch)

    runs = len(works) * len(npus) * 2
    layers = sum(len(ls) for _, ls in works) * len(npus) * 2
    cold = median_ms(everything, max(3, repeats // 4))
    warm = median_ms(everything, max(3, repeats // 4), cold=False)
    print(f"\nall {len(works)} workloads x {len(npus)} presets x batch 1 and 16 "
          f"({runs} profiles, {layers} layer costs), systolic-ws: "
          f"cold {cold:.1f} ms, warm (cached) {warm:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    works = workloads()
    bench_table(works, args.repeats)
    bench_zoo(works, args.repeats)


if __name__ == "__main__":
    main()
