"""Without numba: the compiled loops as plain Python, inlined (``jit.inlined_source``) against
as written (``NPUWEAVE_INLINE=0``), and the closed loop against its plain-Python port.

This script blocks ``import numba`` for itself (``sys.modules['numba'] = None``, as
``bench_anchors`` does for its no-numba columns), so it measures what a user without the
``fast`` extra runs. Every row times its variants alternately in this one process, CPU time
(``time.process_time``), median of ``--repeats``, after two warm-up calls each (the first
builds the inlined loop, once per process); each variant's output must equal the other's (checked
before timing).

Rows:

* ``closed <case>``: ``plan_arrays(..., "kernel")`` on a started board (as ``bench_anchors``'
  ``plain kernel`` column: board set-up and array conversion included) and
  ``anchors/lwgreedy.py`` (``py port``) on the same requests; ``greedy`` is MN+BB on the
  compute-centric NPU, ``failsafe`` RN+BB on the memory-centric one (``bench_anchors.CLOSED``).
  ``specialised``: the same call with ``run_loop`` built by ``jit.python(..., consts=...)``
  for the run's own flags (``flags``: policy code, ``closed``, ``record``, ...;
  ``npuweave.schedule.inline_fold``, then ``inline_tidy`` and ``inline_rows``). Since
  ``loop.plain`` specialises itself, ``inlined`` runs that same loop too, and
  ``specialised/inlined`` shows the noise of the run. ``loop only <case>``: the ``run_loop``
  calls alone, inlined without constants against specialised, and the bytecode
  instructions each runs per decision.
* ``aimt``: AI-MT's closed loop (``closed.run_closed``: the one loop, on lists).
* ``task loop``: ``serve`` fcfs on RN+BB Poisson with ``stretch.settings.mode = "loop-python"``
  (the uncompiled whole-run task loop; without numba ``auto`` runs per event).
* ``stretches``: the same with ``"python"`` (the uncompiled stretch rules).
* ``serving loop``: ``lwkernel.serve_compiled`` with Layerweaver+ (``loop.run_loop`` as plain
  Python on lists, what ``serve_auto`` runs without numba).

Run: ``python benchmarks/bench_inline.py [--requests 50] [--repeats 7] [--closed-only]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.modules["numba"] = None  # type: ignore[assignment]  # as if the fast extra were missing
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks import bench_anchors as anchors  # noqa: E402
from benchmarks.anchors import lwgreedy  # noqa: E402
from npuweave.hardware import preset  # noqa: E402
from npuweave.schedule import jit  # noqa: E402
from npuweave.schedule.board import Board  # noqa: E402
from npuweave.schedule.plan import plan_arrays, start_streams  # noqa: E402
from npuweave.schedule.registry import get_scheduler  # noqa: E402
from npuweave.sim.streams import costed_tenants  # noqa: E402

VARIANTS = ("inlined", "as written", "specialised")
RUN_LOOP = "npuweave.schedule.loop.run_loop"


def _as(variant: str) -> None:
    if variant == "as written":
        os.environ["NPUWEAVE_INLINE"] = "0"
    else:
        os.environ.pop("NPUWEAVE_INLINE", None)


def flags(pol: tuple, tab: tuple, arr: tuple, out: tuple) -> dict:
    """``run_loop``'s run-constant names for its arguments (fixed by ``consts``)."""
    return {"code": pol[0], "prune": pol[1], "inh_on": pol[2], "slots": tab[1],
            "closed": arr[0], "has_horizon": arr[3], "record": out[0]}


@contextlib.contextmanager
def specialised(on: bool, spent: list | None = None) -> Iterator[None]:
    """Within: what ``jit.python(RUN_LOOP)`` returns (``closed.run_closed`` calls it without
    numba) runs ``run_loop`` specialised for each call's ``flags`` when ``on``, else as
    ``python`` builds it; with ``spent``, each call's CPU seconds (the loop alone, its look-up
    left out) are appended to it."""
    python = jit.python

    def patched(q: str, consts: dict | None = None) -> Callable[..., Any]:
        if q != RUN_LOOP:
            return python(q, consts)

        def run(*a: Any) -> Any:
            fn = python(q, flags(a[0], a[1], a[2], a[4])) if on else python(q)
            t0 = time.process_time()
            status = fn(*a)
            if spent is not None:
                spent.append(time.process_time() - t0)
            return status

        return run

    jit.python = patched  # type: ignore[assignment]
    try:
        yield
    finally:
        jit.python = python  # type: ignore[assignment]


def loop_gain(case: str, requests: int, repeats: int) -> str:
    """The closed loop ``case``'s ``run_loop`` calls alone (board set-up left out), as
    inlined and specialised for the run's flags, timed alternately: medians and ratio, and
    the bytecode instructions per decision of each (``opcodes``)."""
    models, npu = anchors.CLOSED[case]
    times: dict[str, list[float]] = {"inlined": [], "specialised": []}
    outs, ops = {}, {}
    for i in range(repeats + 2):  # two warm-up rounds
        for name in times:
            spent: list[float] = []
            policy, board = anchors._started(models, npu, requests)
            with specialised(name == "specialised", spent):
                outs[name] = plan_arrays(policy, board, requests, None, "kernel")
            if i >= 2:
                times[name].append(sum(spent))
    if not _equal(outs["inlined"], outs["specialised"]):
        raise SystemExit(f"{case}: the specialised loop's output differs")
    t = {k: float(np.median(v)) for k, v in times.items()}
    for name in times:
        policy, board = anchors._started(models, npu, requests)
        with specialised(name == "specialised"):
            ops[name] = opcodes(plan_arrays, policy, board, requests, None, "kernel")
    n = len(outs["inlined"][0])
    return (f"loop only {case:<9} inlined {t['inlined'] * 1e3:7.2f} ms  specialised "
            f"{t['specialised'] * 1e3:7.2f} ms  specialised/inlined "
            f"{t['inlined'] / t['specialised']:.3f}x faster  bytecodes per decision "
            f"{ops['inlined'] / n:.1f} -> {ops['specialised'] / n:.1f}")


def opcodes(fn: Callable[..., object], *args: object) -> int:
    """How many bytecode instructions ``fn(*args)`` runs in generated code (``<inlined ...>``
    files): a count that the machine's load does not move (``sys.settrace``)."""
    count = 0

    def local(frame: Any, event: str, arg: object) -> Any:
        nonlocal count
        count += event == "opcode"
        return local

    def tracer(frame: Any, event: str, arg: object) -> Any:
        if not frame.f_code.co_filename.startswith("<inlined "):
            return None
        frame.f_trace_opcodes = True
        return local

    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return count


def alternate(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median CPU seconds of each ``fns`` entry, timed in turn ``repeats`` times; a name in
    ``VARIANTS`` runs with that inlining setting. Raises when two outputs differ."""
    out = {}
    for _ in range(2):  # warm-up: the first calls build the loops and fill set-up caches
        for name, fn in fns.items():
            if name in VARIANTS:
                _as(name)
            out[name] = fn()
    ref = next(iter(out.values()))
    for name, got in out.items():
        if name in VARIANTS and not _equal(got, ref):
            raise SystemExit(f"{name}: output differs from {next(iter(out))}")
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            if name in VARIANTS:
                _as(name)
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
    _as("inlined")
    return {name: float(np.median(t)) for name, t in times.items()}


def _equal(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)  # type: ignore[arg-type]
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))  # type: ignore
    return a == b


def closed_rates(case: str, requests: int, repeats: int,
                 fixed: bool = False) -> dict[str, float]:
    """Decisions per microsecond of the closed loop ``case``: ``inlined``, ``as written``
    and ``py port`` (and with ``fixed``, ``specialised``), timed alternately; ``decisions``."""
    models, npu = anchors.CLOSED[case]
    policy, board = anchors._started(models, npu, requests)
    args = anchors._py_input(policy, board, requests)
    n = len(lwgreedy.run(*args)[0])

    def kernel() -> tuple:
        policy, board = anchors._started(models, npu, requests)
        return plan_arrays(policy, board, requests, None, "kernel")

    def fixed_kernel() -> tuple:
        with specialised(True):
            return kernel()

    t = alternate({"inlined": kernel, "as written": kernel,
                   **({"specialised": fixed_kernel} if fixed else {}),
                   "py port": lambda: lwgreedy.run(*args)}, repeats)
    return {"decisions": n, **{k: n / v / 1e6 for k, v in t.items()}}


def closed(case: str, requests: int, repeats: int) -> str:
    r = closed_rates(case, requests, repeats, fixed=True)
    return (f"closed {case:<9} {r['decisions']:>7.0f} decisions  inlined {r['inlined']:.3f}  "
            f"as written {r['as written']:.3f}  specialised {r['specialised']:.3f}  "
            f"py port {r['py port']:.3f} decisions/us  "
            f"inlined/as written {r['inlined'] / r['as written']:.2f}x  "
            f"inlined/py port {r['inlined'] / r['py port']:.2f}x  "
            f"specialised/inlined {r['specialised'] / r['inlined']:.3f}x  "
            f"specialised/py port {r['specialised'] / r['py port']:.2f}x")


def aimt(requests: int, repeats: int) -> str:
    models, npu_name = anchors.CLOSED["failsafe"]
    npu = preset(npu_name)
    ts = costed_tenants(models, npu, 1)

    def run() -> tuple:
        policy = get_scheduler("aimt")
        board = Board(ts, npu.weight_buffer, npu.dram_bw)
        start_streams(board, policy, requests, None)
        return plan_arrays(policy, board, requests, None, "kernel")

    return _row("aimt (RN+BB)", alternate({v: run for v in VARIANTS[:2]}, repeats))


def task_loop(mode: str, label: str, duration: float, repeats: int) -> str:
    from npuweave.sim import stretch
    from npuweave.sim.arrivals import poisson
    from npuweave.sim.serving import serve

    npu = preset("memory-centric")
    arr = poisson(["resnet50", "bert-base"], (300.0, 80.0), duration, seed=7)

    def run() -> np.ndarray:
        before, stretch.settings.mode = stretch.settings.mode, mode
        try:
            r = serve(["resnet50", "bert-base"], npu, arr, "fcfs")
        finally:
            stretch.settings.mode = before
        return np.asarray(r.table.latency_s)

    return _row(f"{label} ({len(arr)} req)", alternate({v: run for v in VARIANTS[:2]}, repeats))


def serving_loop(requests: int, repeats: int) -> str:
    from npuweave.schedule.layerweaver_plus import LayerweaverPlus
    from npuweave.sim.lwkernel import serve_compiled
    from npuweave.sim.lwserve import Batching

    models, npu_name = ["resnet50", "bert-base"], "memory-centric"
    npu = preset(npu_name)
    costs = [[t] for t in costed_tenants(models, npu, 1)]
    rng = np.random.default_rng(7)
    times = np.sort(rng.uniform(0.0, 0.004 * requests, 2 * requests))
    model = rng.integers(0, 2, len(times))

    def run() -> tuple:
        s = serve_compiled(costs, npu.weight_buffer, npu.dram_bw, times, model, [0.05, 0.05],
                           LayerweaverPlus(), Batching(0.0, 1))
        assert s is not None
        return s.finish_s, s.batch, s.missed, s.decisions, s.urgent, s.pe_busy_s

    return _row(f"serving loop ({len(times)} req)", alternate({v: run for v in VARIANTS[:2]},
                                                             repeats))


def _row(label: str, t: dict[str, float]) -> str:
    return (f"{label:<28} inlined {t['inlined'] * 1e3:8.2f} ms  as written "
            f"{t['as written'] * 1e3:8.2f} ms  inlined/as written "
            f"{t['as written'] / t['inlined']:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=50, help="closed-loop requests per tenant")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--duration", type=float, default=0.5, help="open-loop simulated seconds")
    ap.add_argument("--closed-only", action="store_true", help="only the closed-loop rows")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f}; numba blocked")
    for case in anchors.CLOSED:
        print(closed(case, args.requests, args.repeats), flush=True)
    for case in anchors.CLOSED:
        print(loop_gain(case, args.requests, 3 * args.repeats), flush=True)
    if args.closed_only:
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
        return
    print(aimt(args.requests, args.repeats), flush=True)
    print(task_loop("loop-python", "task loop", args.duration, args.repeats), flush=True)
    print(task_loop("python", "stretches", args.duration, args.repeats), flush=True)
    print(serving_loop(args.requests * 4, args.repeats), flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
