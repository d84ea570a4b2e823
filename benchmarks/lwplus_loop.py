"""Decisions per CPU second of the compiled serving loop (``sim/lwloop._serve``), optionally
against another checkout of npuweave in the same sitting.

Five serving runs of the Layerweaver+ reproduction's kind (4,000 requests, seed 0, the default
setup), chosen to cover what the capacity searches spend their time on: RN+XL 1:64 at 200 QPS
(baseline and Layerweaver: few candidates, long XLNet batches), RN+BB 1:1 at 940 QPS and MN+BL
16:1 at 1,624 QPS (Layerweaver+ approx near its capacity), IC+BL 1:1 at 209 QPS (Layerweaver).
Their ``_serve`` arguments are built once with this checkout and pickled; each tree times
``_serve`` on them in a fresh process (``--repeats`` runs, the first dropped as warm-up, the
minimum reported: the box is shared) and prints an md5 of the outputs (finish times, batch
sizes, counters), which must match between trees when a change keeps the results.

Run from the repository root::

    PYTHONPATH=$PWD python benchmarks/lwplus_loop.py --against /path/to/other/checkout

``--rounds`` alternates the trees that many times (ratios are per round, in one sitting).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import subprocess
import sys
import tempfile
import time

import numpy as np

CASES = (("RN", "XL", (1.0, 64.0), "baseline", 200.0),
         ("RN", "XL", (1.0, 64.0), "layerweaver", 200.0),
         ("RN", "BB", (1.0, 1.0), "lwplus-approx", 940.0),
         ("MN", "BL", (16.0, 1.0), "lwplus-approx", 1624.4220033001338),
         ("IC", "BL", (1.0, 1.0), "layerweaver", 209.17411805887352))


#: ``_serve``'s argument that was the in-flight room and is now the working arrays
ROOM = 20


def capture(path: str) -> None:
    """Build every case's ``_serve`` arguments with this checkout and pickle them."""
    from npuweave.experiments.lwplus import ServeSetup, _Runner, policy_for
    from npuweave.experiments.lwplus_repro import DEADLINE_NLP_S, DEADLINE_VISION_S, specs
    from npuweave.schedule import jit
    from npuweave.sim import lwkernel
    from npuweave.sim.lwserve import Batching

    jit.compile()  # the compiled _serve (the plain one cannot call compiled intrinsics)
    setup, real, out = ServeSetup(), lwkernel._loop._serve, []
    for v, n, ratio, sched, load in CASES:
        got: list[tuple[object, ...]] = []
        factory, _ = policy_for(sched)
        total = sum(ratio)
        runner = _Runner(specs(v, n), (ratio[0] / total, ratio[1] / total),
                         (DEADLINE_VISION_S, DEADLINE_NLP_S), factory, Batching(0.0, 16), setup)

        def keep(*a: object, got: list[tuple[object, ...]] = got) -> object:
            got.append(a)
            return real(*a)

        lwkernel._loop._serve = keep  # type: ignore[assignment]
        try:
            runner.serve(load, 0)
        finally:
            lwkernel._loop._serve = real  # type: ignore[assignment]
        args = list(got[0])
        if isinstance(args[ROOM], tuple):  # the working arrays: keep only the in-flight room
            args[ROOM] = len(args[ROOM][-4])
        out.append((f"{v}+{n} {ratio[0]:g}:{ratio[1]:g} {sched}", tuple(args)))
    with open(path, "wb") as f:
        pickle.dump(out, f)


def time_cases(path: str, repeats: int) -> None:
    """Print ``name <TAB> min CPU s <TAB> decisions <TAB> md5`` per case (this process's tree)."""
    from npuweave.schedule import jit
    from npuweave.sim import lwkernel, lwloop

    jit.compile()
    with open(path, "rb") as f:
        cases = pickle.load(f)
    for name, args in cases:
        best, digest, decisions = np.inf, "", 0
        for r in range(repeats + 1):
            finish, batch = np.full_like(args[-2], np.nan), np.zeros_like(args[-1])
            run = list(args[:-2])
            if hasattr(lwkernel, "loop_state"):  # the loop takes its arrays from the caller
                run[ROOM] = lwkernel.loop_state(run[3], run[4], run[ROOM])
            c0 = time.process_time()
            out = lwloop._serve(*run, finish, batch)
            spent = time.process_time() - c0
            if r:  # the first run compiles or loads numba's cache
                best = min(best, spent)
            decisions = int(out[1])
            digest = hashlib.md5(finish.tobytes() + batch.tobytes()
                                 + repr(tuple(float(x) for x in out)).encode()).hexdigest()[:10]
        print(f"{name}\t{best}\t{decisions}\t{digest}", flush=True)


def _run_tree(root: str, path: str, repeats: int) -> dict[str, tuple[float, int, str]]:
    env = dict(os.environ, PYTHONPATH=root)
    text = subprocess.run([sys.executable, __file__, "--time", path, "--repeats", str(repeats)],
                          env=env, check=True, capture_output=True, text=True, cwd=root).stdout
    out = {}
    for line in text.splitlines():
        name, cpu, dec, digest = line.split("\t")
        out[name] = (float(cpu), int(dec), digest)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", help="another checkout's root, timed alternately")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--time", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.time:
        time_cases(args.time, args.repeats)
        return 0
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cases.pkl")
        capture(path)
        for rnd in range(args.rounds):
            mine = _run_tree(here, path, args.repeats)
            other = _run_tree(args.against, path, args.repeats) if args.against else {}
            print(f"round {rnd + 1} (load average {os.getloadavg()[0]:.1f})")
            for name, (cpu, dec, digest) in mine.items():
                line = f"  {name:30} {cpu * 1e3:7.1f} ms  {dec / cpu / 1e6:5.2f} M decisions/s"
                if name in other:
                    o_cpu, _, o_digest = other[name]
                    same = "same outputs" if o_digest == digest else "OUTPUTS DIFFER"
                    line += f"  | other {o_cpu * 1e3:7.1f} ms  ratio {o_cpu / cpu:4.2f}x  {same}"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
