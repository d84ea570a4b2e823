"""Cold-cache time of profiling the whole zoo on every preset, ``maestro`` vs ``systolic-ws``.

Every zoo model on every preset at batch 1 and 16, ``clear_cache()`` before each repeat; prints
the median of ``--repeats`` for both models, measured alternately in the same process, and the
ratio (target: ``maestro`` within 2x of ``systolic-ws``). ``--noc-bw B`` adds a third row:
``maestro`` with every preset's ``maestro_noc_bw`` set to ``B`` elements/cycle (the
constrained-NoC closed form)::

    python benchmarks/bench_maestro.py --repeats 7 --noc-bw 64
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace

from npuweave.cost import clear_cache, profile
from npuweave.hardware import preset, preset_names
from npuweave.workload import load_layers, zoo_names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--noc-bw", type=int, default=0, help="also time maestro at this NoC width")
    args = ap.parse_args()
    models = [load_layers(z) for z in zoo_names()]
    npus = [preset(p) for p in preset_names()]
    runs = {"systolic-ws": ("systolic-ws", npus), "maestro": ("maestro", npus)}
    if args.noc_bw:
        narrow = [replace(n, maestro_noc_bw=args.noc_bw) for n in npus]
        runs[f"maestro noc_bw={args.noc_bw}"] = ("maestro", narrow)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, (model, specs) in runs.items():
            clear_cache()
            t0 = time.perf_counter()
            for layers in models:
                for npu in specs:
                    for batch in (1, 16):
                        profile(layers, npu, batch, model=model)
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(times["systolic-ws"])
    print(f"{len(models)} models x {len(npus)} presets x 2 batches, median of {args.repeats}")
    for name, ts in times.items():
        print(f"{name:<22}{statistics.median(ts):>8.3f} s{statistics.median(ts) / base:>7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
