"""Benchmark: what energy adds to ``profile`` and ``serve`` (issue 26 target: under 10 %).

* profile: the CLI's work without energy (import the zoo model, lower it, cost every layer
  cold) against the same plus every layer's access counts and energy (``Profile.energies``).
* serve: Poisson runs of ResNet-50 + BERT-base on ``memory-centric`` (100 ms and 1 s of
  arrivals) against their energy rows (``serve_energy``, each model's energy computed cold:
  a fixed cost per model, whatever the number of requests).

The energy step runs after the work it prices, so it is timed on its own (on the result of the
base step) and the added share is median(energy step) / median(base step), both medians over
``--repeats`` runs in the same process: more robust on a loaded machine than the difference of
two noisy end-to-end medians.
Run: ``python benchmarks/bench_energy.py [--repeats 7]``
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_seconds  # noqa: E402

from npuweave.cost import clear_cache, profile_model  # noqa: E402
from npuweave.experiments.energy import _layer_watts, model_energy, serve_energy  # noqa: E402
from npuweave.fileio.flags import parse_arrival_flags  # noqa: E402
from npuweave.hardware import preset  # noqa: E402
from npuweave.sim.arrival_processes import build_arrivals  # noqa: E402
from npuweave.sim.serving import serve  # noqa: E402


def profile_pair(model: str, npu_name: str, repeats: int) -> tuple[float, float]:
    npu = preset(npu_name)

    def base():
        clear_cache()
        return profile_model(model, npu)

    prof = base()
    return median_seconds(base, repeats), median_seconds(prof.energies, repeats)


def serve_pair(repeats: int, duration: str) -> tuple[float, float]:
    npu = preset("memory-centric")
    models = ["resnet50", "bert-base"]
    arrivals = build_arrivals(parse_arrival_flags("poisson", len(models), "300,80", duration),
                              models, 7)

    def base():
        clear_cache()
        return serve(models, npu, arrivals, "layerweaver")

    res = base()

    def energy():
        model_energy.cache_clear()
        _layer_watts.cache_clear()
        return serve_energy(models, res.table, res.span_s, npu)

    return median_seconds(base, repeats), median_seconds(energy, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"{'case':<34}{'base ms':>10}{'energy ms':>11}{'added':>8}")
    for model, npu in (("resnet50", "memory-centric"), ("bert-base", "memory-centric"),
                       ("vit-base", "prema")):
        b, e = profile_pair(model, npu, args.repeats)
        print(f"{'profile ' + model + ' ' + npu:<34}{b * 1e3:>10.1f}{e * 1e3:>11.1f}"
              f"{e / b:>8.1%}")
    for duration in ("100ms", "1s"):  # the energy step is per model, not per request
        b, e = serve_pair(max(3, args.repeats // 2), duration)
        print(f"{'serve resnet50+bert-base ' + duration:<34}{b * 1e3:>10.1f}{e * 1e3:>11.1f}"
              f"{e / b:>8.1%}")


if __name__ == "__main__":
    main()
