"""Where a large open-loop ``serve`` spends its CPU time and memory, phase by phase (issue 23).

The run is what ``npuweave serve --models resnet50,bert-base --qps 300,80 --duration D
--seed 7 --scheduler S --json F`` does, timed in one process with ``time.process_time``:

* ``arrivals``: the Poisson arrival arrays;
* ``set-up``: costing the tenants, the isolated runs and the ``Simulator`` (``_singles`` /
  ``_batched``);
* ``engine``: ``Simulator.run`` (the simulated decisions: the part outside this benchmark's
  scope, timed so the rest has a denominator);
* ``table``: the ``RequestTable`` from the simulator's requests;
* ``summary``: ``finish`` (summary rows, per-request and per-segment records);
* ``energy``: the energy columns the CLI adds;
* ``json``: writing ``--json`` (``--no-json`` leaves it out).

Peak memory is the process's peak RSS (``resource.getrusage``), read at the end of each phase.

Run: ``python benchmarks/bench_bigserve.py [--duration 263s] [--scheduler fcfs] [--no-json]``
(263 s of arrivals is about 100,000 requests; 2630s about a million).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import npuweave.cli.serve as cli_serve  # noqa: E402
import npuweave.sim.serving as serving  # noqa: E402
from npuweave.fileio.flags import parse_duration  # noqa: E402
from npuweave.hardware import get_npu  # noqa: E402
from npuweave.metrics.serving import jsonable  # noqa: E402
from npuweave.report import write_rows_json  # noqa: E402
from npuweave.sim.arrivals import poisson  # noqa: E402
from npuweave.sim.serve import Simulator  # noqa: E402

MODELS = ["resnet50", "bert-base"]
PHASES: list[tuple[str, float, float]] = []  # name, CPU seconds, peak RSS MB after it


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, recording its CPU time and the peak RSS after it under ``name``."""
    def run(*args: Any, **kwargs: Any) -> Any:
        t = time.process_time()
        out = fn(*args, **kwargs)
        PHASES.append((name, time.process_time() - t, _rss_mb()))
        return out
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", default="263s")
    ap.add_argument("--scheduler", default="fcfs")
    ap.add_argument("--no-json", action="store_true")
    args = ap.parse_args()
    npu = get_npu("memory-centric")
    # the phases inside serve(), wrapped in place (serve() looks them up in its module)
    for name, attr in (("set-up", "_singles"), ("set-up", "_batched"), ("table", "_table"),
                       ("summary", "finish")):
        setattr(serving, attr, timed(name, getattr(serving, attr)))
    run = Simulator.run
    Simulator.run = timed("engine", run)  # type: ignore[method-assign]
    t0 = time.process_time()
    arr = timed("arrivals", poisson)(MODELS, (300.0, 80.0), parse_duration(args.duration), 7)
    res = serving.serve(MODELS, npu, arr, args.scheduler, records=not args.no_json,
                        max_events=10**10)
    Simulator.run = run  # type: ignore[method-assign]
    rows = timed("energy", lambda: jsonable(cli_serve._with_energy(res, MODELS, npu,
                                                                   "systolic-ws")))()
    rows_of = getattr(cli_serve, "_rows_of", list)  # a main before the streamed records: lists
    if not args.no_json:
        with tempfile.TemporaryDirectory() as tmp:
            timed("json", write_rows_json)(os.path.join(tmp, "out.json"), {
                "rows": rows, "requests": rows_of(res.requests),
                "segments": rows_of(res.segments)})
    total = time.process_time() - t0
    engine = sum(c for n, c, _ in PHASES if n == "engine")
    print(f"{len(arr)} requests, {args.scheduler}, json={not args.no_json}, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'phase':10} {'cpu s':>8} {'us/req':>8} {'peak RSS MB':>12}")
    for name, cpu, rss in PHASES:
        if cpu > 0.0005 or name == "engine":
            print(f"{name:10} {cpu:8.2f} {1e6 * cpu / len(arr):8.2f} {rss:12.0f}")
    print(f"{'total':10} {total:8.2f} {1e6 * total / len(arr):8.2f} {_rss_mb():12.0f}")
    print(f"outside the engine: {total - engine:.2f} s "
          f"({1e6 * (total - engine) / len(arr):.1f} us per request)")


if __name__ == "__main__":
    main()
