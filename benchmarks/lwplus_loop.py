"""Decisions per CPU second of the compiled loop serving open arrivals (``schedule/loop.py``'s
``run_loop`` through ``loop.drive``), optionally against another checkout in the same sitting.

Five serving runs of the Layerweaver+ reproduction's kind (4,000 requests, seed 0, the default
setup), chosen to cover what the capacity searches spend their time on: RN+XL 1:64 at 200 QPS
(baseline and Layerweaver: few candidates, long XLNet batches), RN+BB 1:1 at 940 QPS and MN+BL
16:1 at 1,624 QPS (Layerweaver+ approx near its capacity), IC+BL 1:1 at 209 QPS (Layerweaver).
Their loop arguments are built once with this checkout and pickled; each tree times the loop
on them in a fresh process (``--repeats`` runs, the first dropped as warm-up, the
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


def capture(path: str) -> None:
    """Build every case's loop arguments (``loop.drive``'s) with this checkout and pickle them."""
    import copy

    from npuweave.experiments.lwplus import ServeSetup, _Runner, policy_for
    from npuweave.experiments.lwplus_repro import DEADLINE_NLP_S, DEADLINE_VISION_S, specs
    from npuweave.schedule import jit, loop
    from npuweave.sim.lwserve import Batching

    jit.compile()  # the compiled loop (the plain one cannot call compiled intrinsics)
    setup, real, out = ServeSetup(), loop.drive, []
    for v, n, ratio, sched, load in CASES:
        got: list[tuple[object, ...]] = []
        factory, _ = policy_for(sched)
        total = sum(ratio)
        runner = _Runner(specs(v, n), (ratio[0] / total, ratio[1] / total),
                         (DEADLINE_VISION_S, DEADLINE_NLP_S), factory, Batching(0.0, 16), setup)

        def keep(run: object, *a: object, got: list[tuple[object, ...]] = got) -> int:
            got.append(copy.deepcopy(a))  # the state before the run
            return real(run, *a)  # type: ignore[arg-type]

        loop.drive = keep  # type: ignore[assignment]
        try:
            runner.serve(load, 0)
        finally:
            loop.drive = real  # type: ignore[assignment]
        out.append((f"{v}+{n} {ratio[0]:g}:{ratio[1]:g} {sched}", got[0]))
    with open(path, "wb") as f:
        pickle.dump(out, f)


def time_cases(path: str, repeats: int) -> None:
    """Print ``name <TAB> min CPU s <TAB> decisions <TAB> md5`` per case (this process's tree).
    The md5 covers the finish times, batch sizes and ``(missed, decisions, estimates, urgent,
    PE busy)`` as floats, as the former ``_serve`` version of this script hashed them."""
    import copy

    from npuweave.schedule import jit, loop

    jit.compile()
    with open(path, "rb") as f:
        cases = pickle.load(f)
    for name, (pol, tab, arr, st0, out0) in cases:
        best, digest, decisions = np.inf, "", 0
        for r in range(repeats + 1):
            st, out = copy.deepcopy(st0), copy.deepcopy(out0)
            c0 = time.process_time()
            decisions = loop.drive(loop.run_loop, pol, tab, arr, st, out)
            spent = time.process_time() - c0
            if r:  # the first run compiles or loads numba's cache
                best = min(best, spent)
            si, stats = st[loop.ST_SI], st[loop.ST["stats"]]
            counters = (si[loop.MISSED], decisions, stats[0], stats[1],
                        st[loop.ST["sf"]][loop.PE_BUSY])
            finish, batch = out[3], out[4]
            digest = hashlib.md5(finish.tobytes() + batch.tobytes()
                                 + repr(tuple(float(x) for x in counters)).encode()
                                 ).hexdigest()[:10]
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
                line = (f"  {name:30} {cpu * 1e3:7.1f} ms  {dec / cpu / 1e6:5.2f} M decisions/s  "
                        f"md5 {digest}")
                if name in other:
                    o_cpu, _, o_digest = other[name]
                    same = "same outputs" if o_digest == digest else "OUTPUTS DIFFER"
                    line += f"  | other {o_cpu * 1e3:7.1f} ms  ratio {o_cpu / cpu:4.2f}x  {same}"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
