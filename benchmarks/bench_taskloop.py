"""Open-loop serving of task-level policies: the whole-run compiled loop against the other
engine paths and the SimPy anchor (issue 23 targets: FCFS >= 3x SimPy, hpf-p >= 1M layers/s).

Rows, CPU seconds (``time.process_time``), median of ``--repeats`` after a warm-up call, every
path timed in this one process, alternating path by path (the machine is shared: compare
ratios within one run; the load average is printed):

* FCFS, RN+BB Poisson 300/80 QPS for ``--duration`` s on the memory-centric NPU: ``serve``
  end to end (costing, isolated times, the run, the table, the summary) on the whole-run loop
  (``loop``: ``auto``'s choice, compiled even on an empty numba cache), on stretches (``compiled``) and per event (``off``); the SimPy model of the same
  serving from ``bench_anchors.simpy_serving`` (scratch venv with SimPy) when it imports.
* hpf-p with priorities 1/9 (checkpoints), Poisson for ``--hpf-duration`` s: layers (units
  served) per CPU second on each path, as ``bench_serve.open_loop`` counts them.

Each path's table must equal the per-event engine's (checked here: a fast path that differs
is reported, not timed).

Run: ``python benchmarks/bench_taskloop.py [--repeats 5] [--duration 2] [--hpf-duration 5]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._timing import median_seconds  # noqa: E402
from npuweave.hardware import preset  # noqa: E402
from npuweave.sim import stretch  # noqa: E402
from npuweave.sim.arrivals import poisson  # noqa: E402
from npuweave.sim.serving import serve  # noqa: E402
from npuweave.sim.tenants import tenants_for  # noqa: E402

MODELS = ["resnet50", "bert-base"]
PATHS = (("loop", "whole-run loop"), ("compiled", "stretches"), ("off", "per event"))


def _timed(npu, arr, sched: str, repeats: int) -> dict[str, tuple[float, object]]:
    """CPU seconds of ``serve`` per path, and its result."""
    out = {}
    for mode, _ in PATHS:
        stretch.settings.mode = mode
        res = {}

        def go(res: dict = res) -> None:
            res["r"] = serve(MODELS, npu, arr, sched)

        try:
            t = median_seconds(go, repeats, warmup=True, clock=time.process_time)
        finally:
            stretch.settings.mode = "auto"
        out[mode] = (t, res["r"])
    ref = out["off"][1].table  # type: ignore[attr-defined]
    for mode, (_, r) in out.items():
        tab = r.table  # type: ignore[attr-defined]
        if repr((tab.finish_s.tolist(), tab.start_s.tolist(), r.events)) != repr(  # type: ignore[attr-defined]
                (ref.finish_s.tolist(), ref.start_s.tolist(), out["off"][1].events)):  # type: ignore[attr-defined]
            raise SystemExit(f"{sched} on path {mode} differs from the per-event engine")
    return out


def _layers(r, npu) -> int:
    per = [len(t.units) for t in tenants_for(MODELS, npu, 1)]
    return int(sum(per[m] for m in r.table.model.tolist()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--hpf-duration", type=float, default=5.0)
    args = ap.parse_args()
    import npuweave

    print(f"npuweave from {Path(npuweave.__file__).parent}; load average at start: "
          f"{os.getloadavg()[0]:.1f}")
    npu = preset("memory-centric")
    arr = poisson(MODELS, (300.0, 80.0), args.duration, seed=7)
    fcfs = _timed(npu, arr, "fcfs", args.repeats)
    simpy_s = None
    try:
        import simpy  # noqa: F401
    except ImportError:
        print("(simpy not installed: pip install 'npuweave[bench]' for the SimPy anchor)")
    else:
        from benchmarks.bench_anchors import simpy_serving

        simpy_s = simpy_serving(args.duration, args.repeats)[1]
    print(f"open-loop FCFS, {len(arr)} requests, CPU s per serve():")
    for mode, name in PATHS:
        t = fcfs[mode][0]
        vs = f", {simpy_s / t:.2f}x SimPy ({simpy_s:.3f} s)" if simpy_s else ""
        print(f"  {name:<15} {t:.4f} s ({fcfs['off'][0] / t:.2f}x per event){vs}")
    arr = poisson(MODELS, (300.0, 80.0), args.hpf_duration, seed=7, priority=(1, 9))
    hpf = _timed(npu, arr, "hpf-p", args.repeats)
    r = hpf["off"][1]
    layers = _layers(r, npu)
    print(f"open-loop hpf-p, {len(arr)} requests, {layers} layers, "
          f"{int(r.table.preemptions.sum())} preemptions:")  # type: ignore[attr-defined]
    for mode, name in PATHS:
        t = hpf[mode][0]
        print(f"  {name:<15} {t:.4f} s, {layers / t / 1e3:.0f}k layers/s")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
