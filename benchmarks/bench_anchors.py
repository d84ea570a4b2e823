"""npuweave against two independent anchors, same work, same run (issue 23 targets).

* **C loop** (``benchmarks/anchors/lwgreedy.c``, built with the system ``cc -O2`` when there
  is one, skipped otherwise): Layerweaver's closed-loop decision loop ported line for line.
  Two runs: MN+BB on the compute-centric NPU, where one tenant is compute- and the other
  memory-intensive, so the greedy rule interleaves; RN+BB on the memory-centric NPU, where
  both are compute-intensive and the failsafe (first come, first served) runs. The C output
  (tenant per decision, compute ends) must equal npuweave's before a ratio is printed.
  npuweave rows, decisions per microsecond of process CPU time (the C loop's too): the
  compiled kernel alone (``plan_arrays`` on a
  started board, array conversion included), and ``run_streams`` with STP/ANTT/fairness
  (``experiments.compare.evaluate``), numba loaded; the same without numba is measured in a
  child process with ``NPUWEAVE_NO_NUMBA=1``-style blocking of the import (a quarter of the
  requests), beside ``anchors/lwgreedy.py``, the C loop ported to plain Python on lists
  (``py port``, same requests: the rate npuweave without numba should reach; its decisions
  and compute ends must equal npuweave's, second ``same``). ``plain kernel`` and ``py port``
  are timed alternately in that child (``bench_inline.closed_rates``: the inlined loop).
* **SimPy** (the ``bench`` extra; skipped when ``simpy`` does not import): the same Poisson
  FCFS serving of RN+BB on the memory-centric NPU as one resource and one timeout per layer,
  the layer times taken from npuweave's own isolated run of each model. Mean latencies are
  printed side by side (equal when FCFS never overlaps two requests' fetches).

Run: ``python benchmarks/bench_anchors.py [--requests 200] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._timing import median_seconds  # noqa: E402
from npuweave.hardware import preset  # noqa: E402
from npuweave.schedule.board import Board  # noqa: E402
from npuweave.schedule.plan import plan_arrays, start_streams  # noqa: E402
from npuweave.schedule.registry import get_scheduler  # noqa: E402
from npuweave.sim.streams import costed_tenants  # noqa: E402

CLOSED = {"greedy": (["mobilenetv2", "bert-base"], "compute-centric"),
          "failsafe": (["resnet50", "bert-base"], "memory-centric")}
OPEN_MODELS = ["resnet50", "bert-base"]


def _started(models: list[str], npu_name: str, requests: int):
    npu = preset(npu_name)
    ts = costed_tenants(models, npu, 1)  # costed once, as run_streams does
    policy = get_scheduler("layerweaver", reading="npuweave")
    board = Board(ts, npu.weight_buffer, npu.dram_bw)
    start_streams(board, policy, requests, None)
    return policy, board


def _c_input(path: Path, policy, board: Board, requests: int, reps: int) -> None:
    k = len(board.tenants)
    off = np.concatenate(([0], np.cumsum([len(s) for s in board.size]))).astype(np.int64)
    flat = [np.array([x for per in rows for x in per], dt)
            for rows, dt in ((board.size, np.int64), (board.comp, np.float64),
                             (board.ftime, np.float64), (board.inh, np.float64))]
    with path.open("wb") as f:
        np.array([k, off[-1], int(policy.failsafe), requests, reps], np.int64).tofile(f)
        np.array([board.bw], np.float64).tofile(f)
        np.array([board.buf], np.int64).tofile(f)
        off.tofile(f)
        for a in flat:
            a.tofile(f)
        np.array([x == "compute" for x in board.kind], np.int64).tofile(f)
        np.array(board.mft, np.float64).tofile(f)


def _build_c(tmp: Path) -> Path | None:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return None
    exe = tmp / "lwgreedy"
    subprocess.run([cc, "-O2", "-o", str(exe), str(ROOT / "benchmarks/anchors/lwgreedy.c"),
                    "-lm"], check=True)
    return exe


def c_rate(exe: Path, tmp: Path, case: str, requests: int, reps: int):
    """(decisions, decisions/us of C, the C output equals npuweave's)."""
    models, npu = CLOSED[case]
    policy, board = _started(models, npu, requests)
    _c_input(tmp / "in.bin", policy, board, requests, reps)
    out = subprocess.run([str(exe), str(tmp / "in.bin"), str(tmp / "out.bin")],
                         capture_output=True, text=True, check=True).stdout.split()
    n, ns = int(out[0]), float(out[1])
    raw = np.fromfile(tmp / "out.bin", np.int64, 1 + n)
    c_t = raw[1:]
    c_ce = np.fromfile(tmp / "out.bin", np.float64, offset=8 * (1 + n))[:n]
    policy, board = _started(models, npu, requests)
    t, _, _, _, _, _, ce = plan_arrays(policy, board, requests, None, "kernel")
    same = bool(np.array_equal(t, c_t) and np.array_equal(ce, c_ce))
    return n, n / (ns / 1e3), same


def _py_input(policy, board: Board, requests: int) -> tuple:
    """The C loop's input as Python lists, for ``anchors/lwgreedy.py``."""
    off = [0]
    for s in board.size:
        off.append(off[-1] + len(s))
    flat = [[x for per in rows for x in per]
            for rows in (board.size, board.comp, board.ftime, board.inh)]
    return (len(board.tenants), bool(policy.failsafe), requests, board.bw, board.buf, off,
            *flat, [int(x == "compute") for x in board.kind], list(board.mft))


def py_rate(case: str, requests: int, repeats: int) -> tuple[float, bool]:
    """(decisions/us of the plain-Python port, its output equals npuweave's)."""
    from benchmarks.anchors import lwgreedy

    models, npu = CLOSED[case]
    policy, board = _started(models, npu, requests)
    args = _py_input(policy, board, requests)
    o_t, o_ce = lwgreedy.run(*args)
    t, _, _, _, _, _, ce = plan_arrays(policy, board, requests, None, "python")
    same = bool(np.array_equal(t, o_t) and np.array_equal(ce, o_ce))
    secs = median_seconds(lambda: lwgreedy.run(*args), repeats, True, time.process_time)
    return len(o_t) / secs / 1e6, same


def npu_rates(case: str, requests: int, repeats: int) -> dict[str, float]:
    """Decisions/us: the kernel alone, and run_streams with metrics (numba state as is)."""
    from npuweave.experiments.compare import evaluate, standalone_lookup
    from npuweave.sim import run_streams

    models, npu_name = CLOSED[case]
    npu = preset(npu_name)
    alone = standalone_lookup(models, npu, "systolic-ws")
    n = sum(len(t.units) for t in costed_tenants(models, npu, 1)) * requests

    def kernel_only() -> None:
        policy, board = _started(models, npu_name, requests)
        plan_arrays(policy, board, requests, None, "kernel")

    def full() -> None:
        r = run_streams(models, npu, scheduler="layerweaver", requests=requests, fast=True,
                        reading="npuweave")
        evaluate(r, alone, ("stp", "antt", "fairness"))

    # CPU time, as the C anchor clocks it: on a shared, loaded machine wall time mostly
    # measures the other processes
    cpu = time.process_time
    rates = {"kernel": n / median_seconds(kernel_only, repeats, True, cpu) / 1e6}
    faults = _minor_faults()
    rates["run_streams+metrics"] = n / median_seconds(full, repeats, True, cpu) / 1e6
    # page faults per full run: fresh memory written again costs ~2-3 us a page on a VM
    rates["faults"] = (_minor_faults() - faults) / (repeats + 1)
    return rates


def _minor_faults() -> int:
    """Minor page faults of this process so far (0 where ``resource`` is missing)."""
    try:
        import resource
    except ImportError:
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def simpy_serving(duration: float, repeats: int):
    """(requests, SimPy seconds, npuweave seconds, SimPy mean latency, npuweave mean)."""
    import simpy

    from npuweave.sim import stretch
    from npuweave.sim.arrivals import make_arrivals, poisson
    from npuweave.sim.serving import serve

    # the compiled loop even on an empty numba cache (``auto`` runs a small run per event then)
    stretch.settings.mode = "loop"
    npu = preset("memory-centric")
    arr = poisson(OPEN_MODELS, (300.0, 80.0), duration, seed=7)
    layer_s = []
    for k in range(len(OPEN_MODELS)):
        one = serve(OPEN_MODELS, npu, make_arrivals([0.0], [k], tuple(OPEN_MODELS)), "fcfs",
                    log=True)
        ends = sorted(iv.end_s for iv in one.intervals if iv.resource == "PE")
        layer_s.append(np.diff([0.0, *ends]).tolist())
    times, model = arr.time_s.tolist(), arr.model.tolist()

    def model_run() -> float:
        env = simpy.Environment()
        npu_res = simpy.Resource(env, capacity=1)
        lat: list[float] = []

        def request(at: float, durs: list[float]):
            yield env.timeout(at - env.now)
            with npu_res.request() as got:
                yield got
                for d in durs:
                    yield env.timeout(d)
            lat.append(env.now - at)

        def source():
            for at, m in zip(times, model):
                env.process(request(at, layer_s[m]))
            yield env.timeout(0)

        env.process(source())
        env.run()
        return float(np.mean(lat))

    mean_simpy = model_run()
    mean_npu = float(np.nanmean(serve(OPEN_MODELS, npu, arr, "fcfs").table.latency_s))
    cpu = time.process_time
    t_simpy = median_seconds(model_run, repeats, True, cpu)
    t_npu = median_seconds(lambda: serve(OPEN_MODELS, npu, arr, "fcfs"), repeats, True, cpu)
    return len(arr), t_simpy, t_npu, mean_simpy, mean_npu, _per_event(
        lambda: serve(OPEN_MODELS, npu, arr, "fcfs"), repeats)


def _per_event(fn, repeats: int) -> float:
    """CPU seconds of ``fn`` with the engine's stretches off (the per-event engine)."""
    from npuweave.sim import stretch

    before, stretch.settings.mode = stretch.settings.mode, "off"
    try:
        return median_seconds(fn, repeats, True, time.process_time)
    finally:
        stretch.settings.mode = before


def _no_numba_rates(requests: int, repeats: int) -> dict[str, dict[str, float]]:
    """The npuweave rows in a child process where ``import numba`` fails."""
    code = ("import sys, json; sys.modules['numba'] = None; "
            f"sys.path.insert(0, {str(ROOT)!r}); import benchmarks.bench_anchors as b; "
            "import benchmarks.bench_inline as i; "
            f"print(json.dumps({{c: {{**b.npu_rates(c, {requests}, {repeats}), "
            f"**i.closed_rates(c, {requests}, {repeats})}} for c in b.CLOSED}}))")
    import json

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200, help="closed-loop requests per tenant")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2.0, help="open-loop simulated seconds")
    args = ap.parse_args()
    from npuweave.schedule import kernel

    numba_ok = kernel.load()
    print(f"load average at start: {os.getloadavg()[0]:.1f}; numba loaded: {numba_ok}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        exe = _build_c(tmp)
        plain = _no_numba_rates(max(args.requests // 4, 10), args.repeats)
        print(f"{'closed loop':<10} {'decisions':>9} {'C /us':>8} {'same':>5} "
              f"{'kernel':>8} {'full':>8} {'k/C':>6} {'full/C':>7} "
              f"{'plain kernel':>12} {'plain full':>10} {'py port':>8} {'same':>5} "
              f"{'faults':>6}")
        for case in CLOSED:
            rates = npu_rates(case, args.requests, args.repeats)
            if exe is None:
                n, c, same = 0, float("nan"), False
            else:
                n, c, same = c_rate(exe, tmp, case, args.requests, max(args.repeats, 5) * 4)
            port_same = py_rate(case, max(args.requests // 4, 10), 1)[1]
            port = plain[case]["py port"]
            print(f"{case:<10} {n:>9} {c:>8.2f} {str(same):>5} {rates['kernel']:>8.3f} "
                  f"{rates['run_streams+metrics']:>8.3f} {rates['kernel'] / c:>6.3f} "
                  f"{rates['run_streams+metrics'] / c:>7.3f} {plain[case]['inlined']:>12.3f} "
                  f"{plain[case]['run_streams+metrics']:>10.3f} {port:>8.3f} "
                  f"{str(port_same):>5} {rates['faults']:>6.0f}")
        if exe is None:
            print("(no C compiler: the C anchor was skipped)")
    try:
        import simpy  # noqa: F401
    except ImportError:
        print("(simpy not installed: pip install 'npuweave[bench]' for the SimPy anchor)")
    else:
        n, ts, tn, ms, mn, te = simpy_serving(args.duration, args.repeats)
        print(f"open-loop FCFS, {n} requests (CPU s): SimPy {ts:.3f} s, npuweave serve "
              f"{tn:.3f} s, npuweave/SimPy speed {ts / tn:.2f}x (per-event engine {te:.3f} s, "
              f"{ts / te:.2f}x); mean latency SimPy {ms * 1e3:.4f} ms, npuweave {mn * 1e3:.4f} ms")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    time.sleep(0)


if __name__ == "__main__":
    main()
