"""Speed and memory of the serving core (issue 9 targets), RN+BB on the memory-centric NPU.

Rows (median of repeats; the machine is shared and noisy, so compare ratios within one run):

* closed-loop Layerweaver, metrics included (``run_streams`` + STP/ANTT/fairness via
  ``experiments.compare.evaluate``): layers per microsecond on the closed-loop fast path
  (``npuweave.sim.fastloop``) with the numba kernels loaded and without them, against the
  engine (``fast=False``) as the baseline in the same run; ``plan`` alone; and the first run
  of a fresh process (as ``auto`` picks, and with the kernels from a warm and a cold cache).
* open-loop Poisson serving with preemption (``hpf-p``, priorities 1/9, checkpoints): layers per
  second of wall time.
* a 10,000-request Poisson run of RN+BB (layerweaver): wall seconds.
* memory per simulated layer without a timeline: ``tracemalloc`` peak of a run over its
  layers, against the same run with ``log=True`` (every interval kept).

Run: ``python benchmarks/bench_serve.py [--quick] [--closed]`` (``--closed``: the closed-loop
rows only).
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import Callable
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
    """Closed-loop rows, each a median of ``repeats`` after a warm-up run, in this process.

    The fast path's steady state is measured with the numba kernels loaded (``kernel.load()``
    up front, numba's cache warm), as in any process that has already run one long plan; the
    same path without numba kernels (plain Python plan and fetch parts) and the engine
    (``fast=False``, the baseline of the ratios) are measured in the same run.
    """
    from npuweave.schedule import kernel

    alone = standalone_lookup(MODELS, npu, "systolic-ws")
    ts = tenants_for(MODELS, npu, 1)
    layers = sum(len(t.units) for t in ts) * requests

    def run(fast: bool | None) -> Callable[[], None]:
        def go() -> None:
            r = run_streams(MODELS, npu, scheduler="layerweaver", requests=requests, fast=fast)
            evaluate(r, alone, ("stp", "antt", "fairness"))
        return go

    def scheduler() -> None:
        plan("layerweaver", ts, npu.weight_buffer, npu.dram_bw, requests=requests)

    t_eng = median_seconds(run(False), repeats, warmup=True)
    t_plain = median_seconds(run(True), repeats, warmup=True)  # before numba is loaded
    kernel.load()
    t_fast = median_seconds(run(True), repeats, warmup=True)
    t_plan = median_seconds(scheduler, repeats, warmup=True)
    rate = layers / 1e6
    return [
        ("closed loop, fast path + metrics (kernels loaded)", f"{rate / t_fast:.3f} layers/us",
         f"{t_eng / t_fast:.1f}x engine, {t_fast * 1e3:.1f} ms"),
        ("closed loop, fast path + metrics (no numba)", f"{rate / t_plain:.3f} layers/us",
         f"{t_eng / t_plain:.1f}x engine, {t_plain * 1e3:.1f} ms"),
        ("closed loop, engine + metrics (baseline)", f"{rate / t_eng:.3f} layers/us",
         f"1.00x, {t_eng * 1e3:.1f} ms"),
        ("closed loop, plan only (kernels loaded)", f"{rate / t_plan:.3f} layers/us",
         f"{t_eng / t_plan:.1f}x engine"),
    ]


FRESH = """
import time, sys
t0 = time.perf_counter()
from npuweave.experiments.compare import evaluate, standalone_lookup
from npuweave.hardware import preset
from npuweave.schedule import kernel
from npuweave.sim import run_streams
npu = preset("memory-centric")
alone = standalone_lookup({models!r}, npu, "systolic-ws")
alone(type("R", (), {{"model": "resnet50", "batch": 1}})())
t1 = time.perf_counter()
if {load}:
    kernel.load()
r = run_streams({models!r}, npu, scheduler="layerweaver", requests={requests})
evaluate(r, alone, ("stp", "antt", "fairness"))
print(time.perf_counter() - t1, t1 - t0)
"""


def fresh_process(requests: int) -> list[tuple[str, str, str]]:
    """First closed-loop run of a new process (imports and standalone times excluded): as
    ``auto`` picks (no numba below 100 k decisions), and with the kernels loaded from a warm
    and from an empty numba cache (compiling them)."""
    import os
    import subprocess
    import tempfile

    root = str(Path(__file__).resolve().parents[1])
    out = []
    with tempfile.TemporaryDirectory() as cold:
        for name, load, env in (("auto", False, {}), ("kernels, warm cache", True, {}),
                                ("kernels, cold cache", True, {"NUMBA_CACHE_DIR": cold})):
            code = FRESH.format(models=MODELS, load=load, requests=requests)
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True, cwd=root,
                                  env={**os.environ, "PYTHONPATH": root, **env})
            first, imports = (float(x) for x in done.stdout.split())
            out.append((f"closed loop, first run of a fresh process ({name})", f"{first:.2f} s",
                        f"imports and standalone times {imports:.2f} s before it"))
    return out


def open_loop(npu, duration: float, repeats: int) -> list[tuple[str, str, str]]:
    """Layers per CPU second; task-level policies also with the engine's stretches off (the
    per-event engine), in the same run."""
    from npuweave.sim import stretch

    arr = poisson(MODELS, (300.0, 80.0), duration, seed=7, priority=(1, 9))
    out = []
    # ``loop``: ``auto``'s choice, compiled even on an empty cache (``auto`` runs small runs
    # per event then)
    for sched, mode in (("hpf-p", "loop"), ("hpf-p", "off"), ("fcfs", "loop"), ("fcfs", "off"),
                        ("layerweaver", "auto")):
        res = {}

        def go(sched: str = sched, res: dict = res) -> None:
            res["r"] = serve(MODELS, npu, arr, sched)

        stretch.settings.mode = mode
        try:
            t = median_seconds(go, repeats, warmup=True, clock=time.process_time)
        finally:
            stretch.settings.mode = "auto"
        r = res["r"]
        layers = _layers(r, npu)
        how = " (per-event engine)" if mode == "off" else ""
        out.append((f"open loop {sched}{how}, {len(arr)} requests",
                    f"{layers / t / 1e3:.0f}k layers/s",
                    f"{int(r.table.preemptions.sum())} preemptions, {t:.2f} CPU s"))
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
    rows = closed_loop(npu, 20 if quick else 200, 5)
    if "--closed" in sys.argv:  # the closed-loop rows only (the fast path's speed)
        _print(rows)
        return
    rows += fresh_process(200) if not quick else []
    rows += open_loop(npu, 0.5 if quick else 5.0, 3)
    rows += ten_thousand(npu) if not quick else []
    rows += memory(npu, 0.5 if quick else 5.0)
    _print(rows)


def _print(rows: list[tuple[str, str, str]]) -> None:
    w = max(len(r[0]) for r in rows)
    print(f"{'case':<{w}}  {'speed':>18}  note")
    for name, speed, note in rows:
        print(f"{name:<{w}}  {speed:>18}  {note}")


if __name__ == "__main__":
    main()
