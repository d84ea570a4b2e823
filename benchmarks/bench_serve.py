"""Speed and memory of the serving core (issue 9 targets), RN+BB on the memory-centric NPU.

Rows (median of repeats; the machine is shared and noisy, so compare ratios within one run):

* closed-loop Layerweaver through the engine, metrics included (``run_streams`` + STP/ANTT/
  fairness via ``experiments.compare.evaluate``): layers per microsecond; baseline in the same
  run: ``plan`` alone (the scheduler without the engine, numba kernel when warm).
* open-loop Poisson serving with preemption (``hpf-p``, priorities 1/9, checkpoints): layers per
  second of wall time.
* a 10,000-request Poisson run of RN+BB (layerweaver): wall seconds.
* memory per simulated layer without a timeline: ``tracemalloc`` peak of a run over its
  layers, against the same run with ``log=True`` (every interval kept).

Run: ``python benchmarks/bench_serve.py [--quick]``.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._timing import median_seconds  # noqa: E402
from npuweave.experiments.compare import evaluate, standalone_lookup  # noqa: E402
from npuweave.hardware import preset  # noqa: E402
from npuweave.schedule import plan  # noqa: E402
from npuweave.sim import run_streams  # noqa: E402
from npuweave.sim.arrivals import poisson  # noqa: E402
from npuweave.sim.serving import serve  # noqa: E402
from npuweave.sim.tenants import tenants_for  # noqa: E402

MODELS = ["resnet50", "bert-base"]


def closed_loop(npu, requests: int, repeats: int) -> list[tuple[str, str, str]]:
    alone = standalone_lookup(MODELS, npu, "systolic-ws")
    ts = tenants_for(MODELS, npu, 1)
    layers = sum(len(t.units) for t in ts) * requests

    def engine() -> None:
        r = run_streams(MODELS, npu, scheduler="layerweaver", requests=requests)
        evaluate(r, alone, ("stp", "antt", "fairness"))

    def scheduler() -> None:
        plan("layerweaver", ts, npu.weight_buffer, npu.dram_bw, requests=requests)

    t_eng = median_seconds(engine, repeats, warmup=True)
    t_plan = median_seconds(scheduler, repeats, warmup=True)
    return [("closed loop, engine + metrics", f"{layers / t_eng / 1e6:.3f} layers/us",
             f"{t_eng / t_plan:.2f}x plan"),
            ("closed loop, plan only (baseline)", f"{layers / t_plan / 1e6:.3f} layers/us",
             "1.00x")]


def open_loop(npu, duration: float, repeats: int) -> list[tuple[str, str, str]]:
    arr = poisson(MODELS, (300.0, 80.0), duration, seed=7, priority=(1, 9))
    out = []
    for sched in ("hpf-p", "fcfs", "layerweaver"):
        res = {}

        def go(sched: str = sched, res: dict = res) -> None:
            res["r"] = serve(MODELS, npu, arr, sched)

        t = median_seconds(go, repeats, warmup=True)
        r = res["r"]
        layers = _layers(r, npu)
        out.append((f"open loop {sched}, {len(arr)} requests",
                    f"{layers / t / 1e3:.0f}k layers/s",
                    f"{int(r.table.preemptions.sum())} preemptions, {t:.2f} s"))
    return out


def _layers(r, npu) -> int:
    ts = tenants_for(MODELS, npu, 1)
    per = [len(t.units) for t in ts]
    return int(sum(per[m] for m in r.table.model.tolist()))


def ten_thousand(npu) -> list[tuple[str, str, str]]:
    qps = (300.0, 80.0)
    duration = 10_000 / sum(qps)
    arr = poisson(MODELS, qps, duration, seed=7)
    t0 = time.perf_counter()
    serve(MODELS, npu, arr, "layerweaver")
    t = time.perf_counter() - t0
    return [(f"Poisson RN+BB, {len(arr)} requests (layerweaver)", f"{t:.2f} s", "target < 10 s")]


def memory(npu, duration: float) -> list[tuple[str, str, str]]:
    arr = poisson(MODELS, (300.0, 80.0), duration, seed=7)
    out = []
    for log in (False, True):
        serve(MODELS, npu, arr, "fcfs", log=log)  # warm caches (profiles, imports)
        tracemalloc.start()
        r = serve(MODELS, npu, arr, "fcfs", log=log)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        layers = _layers(r, npu)
        out.append((f"memory, {'timeline kept' if log else 'no timeline'}",
                    f"{peak / layers:.0f} B/layer", f"{layers} layers, peak {peak / 2**20:.1f} MiB"))
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    npu = preset("memory-centric")
    rows = closed_loop(npu, 20 if quick else 200, 3)
    rows += open_loop(npu, 0.5 if quick else 5.0, 3)
    rows += ten_thousand(npu) if not quick else []
    rows += memory(npu, 0.5 if quick else 5.0)
    w = max(len(r[0]) for r in rows)
    print(f"{'case':<{w}}  {'speed':>18}  note")
    for name, speed, note in rows:
        print(f"{name:<{w}}  {speed:>18}  {note}")


if __name__ == "__main__":
    main()
