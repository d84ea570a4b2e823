"""Cross-check ``loadgen_server`` against the real MLPerf LoadGen (not a test, not a dependency).

Run it with a Python that has the ``mlcommons-loadgen`` wheel, in a scratch venv::

    python -m venv /tmp/lgvenv && /tmp/lgvenv/bin/pip install numpy mlcommons-loadgen==6.0.17
    PYTHONPATH=$PWD /tmp/lgvenv/bin/python benchmarks/loadgen_crosscheck.py

It runs LoadGen's Server scenario with a system under test that answers every query at once and
with tracing on. LoadGen writes each sample's *scheduled* time (start + scheduled delta) into
``mlperf_log_trace.json`` in microseconds with three decimals, so the scheduled deltas come back
to the nanosecond; they are compared with ``loadgen_schedule_ns`` for the same seed and QPS.
"""

from __future__ import annotations

import array
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from npuweave.sim.arrivals import loadgen_schedule_ns

#: (schedule_rng_seed, QPS, min_duration_ms, min_query_count); the last one (MLPerf's official
#: seed from mlperf.conf) and the duration-bound case also check how many queries LoadGen makes.
CASES = ((0, 2000.0, 100, 3000), (1, 5000.0, 100, 3000), (2**32 + 5, 3000.0, 100, 3000),
         (7, 1500.0, 1000, 1), (16159082839903944936, 4000.0, 500, 1))


def run_loadgen(seed: int, qps: float, duration_ms: int, queries: int,
                outdir: Path) -> np.ndarray:
    import mlperf_loadgen as lg

    def issue(samples: list) -> None:
        data = array.array("B", [0])
        ptr, _ = data.buffer_info()
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, ptr, 1) for s in samples])

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(64, 64, lambda idx: None, lambda idx: None)
    settings = lg.TestSettings()
    settings.scenario = lg.TestScenario.Server
    settings.mode = lg.TestMode.PerformanceOnly
    settings.server_target_qps = qps
    settings.schedule_rng_seed = seed
    settings.min_duration_ms = duration_ms
    settings.min_query_count = queries
    log = lg.LogSettings()
    log.log_output.outdir = str(outdir)
    log.log_output.copy_summary_to_stdout = False
    log.enable_trace = True
    lg.StartTestWithLogSettings(sut, qsl, settings, log)
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)
    return scheduled_ns(outdir / "mlperf_log_trace.json")


def scheduled_ns(trace: Path) -> np.ndarray:
    # LoadGen 6.0.17 writes some LogDetail events with doubled quotes, so the file is not valid
    # JSON as a whole; the one-line "Sample" begin events are, so they are read line by line.
    begins = {}
    for line in trace.read_text().splitlines():
        if line.startswith('{"name":"Sample"') and '"ph":"b"' in line:
            ev = json.loads(line.rstrip().rstrip(","))
            begins[ev["args"]["query_seq"]] = round(float(ev["ts"]) * 1000.0)
    stamps = np.array([begins[k] for k in sorted(begins)], dtype=np.int64)
    return stamps - stamps[0]


def main() -> int:
    worst = 0
    for seed, qps, duration_ms, queries in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            real = run_loadgen(seed, qps, duration_ms, queries, Path(tmp))
        ours = loadgen_schedule_ns(qps, duration_ms / 1000, seed, min_query_count=queries)
        n = min(real.size, ours.size)
        same = int(np.sum(real[:n] == ours[:n]))
        diff = int(np.max(np.abs(real[:n] - ours[:n])))
        worst = max(worst, diff)
        print(f"seed={seed} qps={qps:g}: {n} queries compared, {same} identical, "
              f"max |diff| = {diff} ns, counts real={real.size} ours={ours.size}")
        worst = max(worst, abs(real.size - ours.size))
    return 0 if worst == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
