"""Cold-cache time of profiling the whole zoo on every preset, ``maestro`` vs ``systolic-ws``.

Every zoo model on every preset at batch 1 and 16, ``clear_cache()`` before each repeat; prints
the median of ``--repeats`` for both models, measured alternately in the same process, and the
ratio (target: ``maestro`` within 2x of ``systolic-ws``)::

    python benchmarks/bench_maestro.py --repeats 7
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from npuweave.cost import clear_cache, profile
from npuweave.hardware import preset, preset_names
from npuweave.workload import load_layers, zoo_names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    models = [load_layers(z) for z in zoo_names()]
    npus = [preset(p) for p in preset_names()]
    times: dict[str, list[float]] = {"systolic-ws": [], "maestro": []}
    for _ in range(args.repeats):
        for name, out in times.items():
            clear_cache()
            t0 = time.perf_counter()
            for layers in models:
                for npu in npus:
                    for batch in (1, 16):
                        profile(layers, npu, batch, model=name)
            out.append(time.perf_counter() - t0)
    base = statistics.median(times["systolic-ws"])
    print(f"{len(models)} models x {len(npus)} presets x 2 batches, median of {args.repeats}")
    for name, ts in times.items():
        print(f"{name:<12}{statistics.median(ts):>8.3f} s{statistics.median(ts) / base:>7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
