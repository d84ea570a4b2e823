"""Real MLPerf LoadGen runs against npuweave's simulated NPU.

LoadGen (``mlcommons-loadgen``, the optional ``loadgen`` extra) issues queries in real time; the
system under test (``SimulatedSUT``) feeds each sample to a serving ``Simulator`` driven
online (``OnlineNPU``) and completes it when real time reaches its *simulated* finish,
scaled by ``time_scale``: one simulated second lasts ``time_scale`` real seconds, so LoadGen's
latencies divided by ``time_scale`` are NPU latencies, and a 60 s LoadGen run stands for
``60 / time_scale`` s of NPU time. Every LoadGen setting npuweave passes is in NPU time and
converted (QPS divided, latencies multiplied by ``time_scale``).

Several models share the NPU through LoadGen's *query samples*: the query sample library has
``sample_count`` samples and sample ``i`` belongs to model ``k`` in proportion to ``mix``
(contiguous index ranges). LoadGen's core keeps global state and runs one test per process,
so one SUT per model would need one process per model and a device shared across processes;
mapping samples keeps one LoadGen, one clock and one device, and LoadGen's uniform sample
choice gives each model its share of the queries in expectation.

The SUT's device thread sleeps until the simulator's next event is due in real time (or a
query arrives), advances the simulator to the real clock and completes every finished
sample. Thread wake-up delays make LoadGen's latencies slightly longer than the simulated
ones; ``compare_with_replay`` measures the difference against ``serve --arrivals
loadgen-server`` (the same schedule, in virtual time).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from npuweave.errors import ConfigError
from npuweave.experiments.loadgen_logs import (
    detail_value,
    invalid_reasons,
    latencies_s,
    parse_summary,
)
from npuweave.hardware.npu import NPU

SCENARIOS = ("Server", "SingleStream", "MultiStream", "Offline")
MODES = ("PerformanceOnly", "FindPeakPerformance")


@dataclass(frozen=True, slots=True)
class LoadgenSpec:
    """One LoadGen run; times and rates are NPU (simulated) time."""

    scenario: str
    models: tuple[str, ...]
    npu: NPU
    scheduler: str = "layerweaver"
    qps: float | None = None
    target_latency_s: float | None = None
    time_scale: float = 10.0
    mode: str = "PerformanceOnly"
    min_duration_s: float = 1.0
    min_queries: int = 100
    seed: int = 0
    mix: tuple[float, ...] = ()
    samples_per_query: int = 8
    sample_count: int = 1024
    cost_model: str = "systolic-ws"
    options: tuple[tuple[str, Any], ...] = field(default=())


#: Most queries one run may issue (LoadGen holds every query's record until the run ends).
MAX_QUERIES = 10_000_000


def check_spec(spec: LoadgenSpec) -> None:
    """Every bad setting in one line (named as its CLI flag), before LoadGen starts."""
    p: list[str] = []
    if spec.scenario not in SCENARIOS:
        p.append(f"--scenario {spec.scenario!r}: choose one of {', '.join(SCENARIOS)}")
    if spec.mode not in MODES:
        p.append(f"--mode {spec.mode!r}: choose one of {', '.join(MODES)}")
    if spec.mode == "FindPeakPerformance" and spec.scenario != "Server":
        p.append("--mode FindPeakPerformance works only with --scenario Server")
    if spec.scenario in ("Server", "Offline") and not (spec.qps and 0 < spec.qps < math.inf):
        p.append(f"--qps: {spec.scenario} needs a QPS > 0 (NPU time), got {spec.qps!r}")
    if spec.scenario == "Server" and not (spec.target_latency_s and spec.target_latency_s > 0):
        p.append("--target-latency: the Server scenario needs a latency bound > 0 (e.g. 15ms)")
    if not 0 < spec.time_scale <= 1e6:
        p.append(f"--time-scale must be in (0, 1e6], got {spec.time_scale!r}")
    if not 0 < spec.min_duration_s * spec.time_scale <= 3600:
        p.append(f"--min-duration x --time-scale must be in (0, 3600] real seconds, got "
                 f"{spec.min_duration_s * spec.time_scale:g}")
    if not 1 <= spec.min_queries <= MAX_QUERIES:
        p.append(f"--min-queries must be in [1, 10,000,000], got {spec.min_queries}")
    if spec.scenario in ("Server", "Offline") and spec.qps and spec.qps < math.inf \
            and spec.qps * spec.min_duration_s > MAX_QUERIES:
        p.append(f"--qps x --min-duration = {spec.qps * spec.min_duration_s:.3g} queries, over "
                 f"the {MAX_QUERIES:,} a run may issue; lower --qps or --min-duration")
    if spec.mix and (len(spec.mix) != len(spec.models)
                     or not all(0 < w < math.inf for w in spec.mix)):
        p.append(f"--mix: give {len(spec.models)} positive weights (one per model), "
                 f"got {list(spec.mix)}")
    if not 1 <= spec.samples_per_query <= 1024:
        p.append(f"--samples-per-query must be in [1, 1024], got {spec.samples_per_query}")
    if p:
        raise ConfigError("; ".join(p))


def sample_models(count: int, mix: Sequence[float]) -> np.ndarray:
    """Model index of each of ``count`` samples: contiguous ranges in proportion to ``mix``.

    Examples
    --------
    >>> sample_models(8, [3, 1]).tolist()
    [0, 0, 0, 0, 0, 0, 1, 1]
    """
    w = np.asarray(mix, dtype=np.float64)
    edges = np.round(np.cumsum(w) / w.sum() * count).astype(np.int64)
    return np.searchsorted(edges, np.arange(count), side="right").astype(np.int64)


class OnlineNPU:
    """The simulated NPU, advanced as real time passes; samples arrive while it runs."""

    def __init__(self, spec: LoadgenSpec) -> None:
        from npuweave.schedule.registry import get_scheduler
        from npuweave.sim.serve import Simulator
        from npuweave.sim.serving import isolated_time
        from npuweave.sim.tenants import costed_tenants

        npu, k = spec.npu, len(spec.models)
        tenants, feet = costed_tenants(list(spec.models), npu, [(i, 1) for i in range(k)],
                                       spec.cost_model)
        self.isolated_s = [isolated_time(t, f, npu, True) for t, f in zip(tenants, feet)]
        policy = get_scheduler(spec.scheduler, seed=spec.seed, **dict(spec.options))
        self.sim = Simulator(tenants, npu.weight_buffer, npu.dram_bw, policy, footprints=feet,
                             traffic=True, latency_s=npu.dram_latency_s,
                             isolated_s=self.isolated_s)
        self.sim.start()
        self.outstanding: set[int] = set()

    def submit(self, now_s: float, model: int) -> int:
        """A sample of ``model`` arrives at simulated time ``now_s``; its request id."""
        req = self.sim.arrive_at(now_s, model)
        self.outstanding.add(req.id)
        return req.id

    def collect(self, now_s: float) -> list[int]:
        """Advance to ``now_s``; ids of the requests that finished since the last call."""
        from npuweave.sim.requests import State

        self.sim.advance(now_s)
        reqs = self.sim.requests
        done = [r for r in self.outstanding if reqs[r].state is State.DONE]
        self.outstanding.difference_update(done)
        return done

    def next_event_s(self) -> float:
        return self.sim.loop.peek()


class SimulatedSUT:
    """LoadGen's system under test: issue -> simulated NPU -> complete in real time."""

    def __init__(self, device: OnlineNPU, sample_model: np.ndarray, time_scale: float) -> None:
        import mlperf_loadgen as lg

        self.lg, self.device, self.models, self.scale = lg, device, sample_model, time_scale
        self.cond = threading.Condition()
        self.t0: float | None = None
        self.sample_of: dict[int, int] = {}  # request id -> LoadGen sample id
        self.stop = False
        self.error: BaseException | None = None
        # the longest the device thread overslept a wait, in real seconds: a host stall
        # (another process, a collector pause, a VM's stolen time) that LoadGen's latencies
        # include and the simulated NPU did not cause
        self.host_stall_s = 0.0
        self.thread = threading.Thread(target=self._device_loop, name="npuweave-npu",
                                       daemon=True)

    def now_s(self) -> float:
        """Simulated seconds since the first query."""
        return 0.0 if self.t0 is None else (time.perf_counter() - self.t0) / self.scale

    def issue(self, samples: list[Any]) -> None:
        with self.cond:
            if self.t0 is None:
                self.t0 = time.perf_counter()
            now = self.now_s()
            for s in samples:
                rid = self.device.submit(now, int(self.models[s.index]))
                self.sample_of[rid] = s.id
            self.cond.notify()

    def flush(self) -> None:
        """LoadGen's flush: nothing is buffered."""

    def _device_loop(self) -> None:
        try:
            while True:
                with self.cond:
                    if self.stop:
                        return
                    done = self.device.collect(self.now_s()) if self.t0 is not None else []
                    ids = [self.sample_of.pop(r) for r in done]
                    if not ids:
                        nxt = self.device.next_event_s()
                        wait = 0.05 if self.t0 is None or nxt == math.inf else (
                            self.t0 + nxt * self.scale - time.perf_counter())
                        if wait > 0:
                            asked = min(wait, 0.05)
                            slept = time.perf_counter()
                            self.cond.wait(timeout=asked)
                            late = time.perf_counter() - slept - asked
                            self.host_stall_s = max(self.host_stall_s, late)
                        continue
                self.lg.QuerySamplesComplete([self.lg.QuerySampleResponse(i, 0, 0)
                                              for i in ids])
        except BaseException as exc:  # surfaced by run_loadgen after the test
            self.error = exc

    def __enter__(self) -> SimulatedSUT:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self.cond:
            self.stop = True
            self.cond.notify()
        self.thread.join(timeout=10)


def expected_latency_s(spec: LoadgenSpec, isolated_s: Sequence[float]) -> float:
    """The latency LoadGen plans a SingleStream/MultiStream run with, in NPU time.

    ``target_latency_s`` when given, else one query's standalone time: the models' isolated
    times weighted by ``mix``, times the samples per query in MultiStream. LoadGen generates
    about ``min_duration / expected`` queries up front, so a guess far above the real
    latency ends the run before its minimum duration and leaves it INVALID.
    """
    if spec.target_latency_s:
        return spec.target_latency_s
    w = np.asarray(spec.mix or [1.0] * len(isolated_s), dtype=np.float64)
    one = float(np.dot(w / w.sum(), np.asarray(isolated_s, dtype=np.float64)))
    return one * (spec.samples_per_query if spec.scenario == "MultiStream" else 1)


def _settings(spec: LoadgenSpec, expected_s: float) -> Any:
    import mlperf_loadgen as lg

    s, scale = lg.TestSettings(), spec.time_scale
    s.scenario = getattr(lg.TestScenario, spec.scenario)
    s.mode = getattr(lg.TestMode, spec.mode)
    s.min_duration_ms = int(round(spec.min_duration_s * scale * 1e3))
    s.min_query_count = spec.min_queries
    s.schedule_rng_seed = spec.seed
    s.sample_index_rng_seed = spec.seed
    s.qsl_rng_seed = spec.seed
    lat_ns = int(round((spec.target_latency_s or expected_s) * scale * 1e9))
    if spec.scenario == "Server":
        s.server_target_qps = spec.qps / scale  # type: ignore[operator]
        s.server_target_latency_ns = lat_ns
    elif spec.scenario == "Offline":
        s.offline_expected_qps = spec.qps / scale  # type: ignore[operator]
    elif spec.scenario == "SingleStream":
        s.single_stream_expected_latency_ns = lat_ns
    else:
        s.multi_stream_samples_per_query = spec.samples_per_query
        s.multi_stream_expected_latency_ns = lat_ns
    return s


@dataclass(frozen=True, slots=True)
class LoadgenResult:
    """LoadGen's verdict and numbers (its summary, converted to NPU time) and ours."""

    valid: bool
    summary: dict[str, str]
    latency_s: dict[str, float]
    npu_rows: list[dict[str, Any]]
    samples: int
    out_dir: str
    queries: int = 0  # LoadGen's own count (result_query_count in its detail log)
    reasons: tuple[str, ...] = ()  # why LoadGen says INVALID, from its summary
    host_stall_s: float = 0.0  # longest host stall seen by the device thread (real seconds)


def run_loadgen(spec: LoadgenSpec, out_dir: str | Path) -> LoadgenResult:
    """Run LoadGen against the simulated NPU; LoadGen's logs and ours go to ``out_dir``."""
    check_spec(spec)
    try:
        import mlperf_loadgen as lg
    except ImportError:
        raise ConfigError("npuweave loadgen needs MLPerf LoadGen: pip install "
                          "'npuweave[loadgen]'") from None
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a directory; choose a folder")
    device = OnlineNPU(spec)  # models and policy load (and fail) before anything is written
    out.mkdir(parents=True, exist_ok=True)
    models = sample_models(spec.sample_count, spec.mix or [1.0] * len(spec.models))
    sut_impl = SimulatedSUT(device, models, spec.time_scale)
    log = lg.LogSettings()
    log.log_output.outdir = str(out)
    log.log_output.copy_summary_to_stdout = False
    sut = lg.ConstructSUT(sut_impl.issue, sut_impl.flush)
    qsl = lg.ConstructQSL(spec.sample_count, spec.sample_count, lambda _: None, lambda _: None)
    try:
        with sut_impl:
            expected = expected_latency_s(spec, device.isolated_s)
            lg.StartTestWithLogSettings(sut, qsl, _settings(spec, expected), log)
    finally:
        lg.DestroyQSL(qsl)
        lg.DestroySUT(sut)
    if sut_impl.error is not None:
        raise sut_impl.error
    summary = parse_summary(out / "mlperf_log_summary.txt")
    queries = detail_value(out / "mlperf_log_detail.txt", "result_query_count")
    valid = summary.get("Result is", "") == "VALID"
    reasons = () if valid else invalid_reasons(out / "mlperf_log_summary.txt")
    return LoadgenResult(valid, summary, latencies_s(summary, spec.time_scale),
                         _npu_rows(device, spec), len(device.sim.requests), str(out),
                         int(queries or 0), reasons, sut_impl.host_stall_s)


def _npu_rows(device: OnlineNPU, spec: LoadgenSpec) -> list[dict[str, Any]]:
    from npuweave.metrics.requests import request_table
    from npuweave.metrics.serving import summarize

    reqs = [r for r in device.sim.requests if r.finish_s == r.finish_s]
    if not reqs:
        return []
    table = request_table(spec.models, [r.model for r in reqs], [r.arrival_s for r in reqs],
                          [r.finish_s for r in reqs], device.isolated_s,
                          start_s=[r.start_s for r in reqs])
    eng = device.sim.engine
    span = max(eng.last_end, max(r.arrival_s for r in reqs)) or 1.0
    return summarize(table, span_s=span, pe_busy_s=eng.pe_busy_s, dram_busy_s=eng.dram_busy_s)


@dataclass(frozen=True, slots=True)
class ReplayComparison:
    """LoadGen's measured latencies beside the virtual-time replay of the same schedule."""

    rows: list[dict[str, Any]]
    loadgen_valid: bool
    loadgen_latency_ok: bool
    replay_valid: bool
    queries_loadgen: int
    queries_replay: int


def replay(spec: LoadgenSpec, queries: int) -> Any:
    """``serve --arrivals loadgen-server``: LoadGen's Server schedule (same seed, QPS and
    length) served in virtual time; one model only (the schedule names no sample order)."""
    from npuweave.sim.arrivals import loadgen_server
    from npuweave.sim.serving import serve

    if spec.scenario != "Server" or len(spec.models) != 1:
        raise ConfigError("--compare-replay needs --scenario Server and one model: the replay "
                          "reproduces LoadGen's arrival times, not its sample choice")
    arrivals = loadgen_server(spec.models, (spec.qps or 0.0,), spec.min_duration_s, spec.seed,
                              min_query_count=spec.min_queries)
    if len(arrivals) != queries:  # LoadGen stops its schedule where min duration/queries end
        from npuweave.sim.arrivals import make_arrivals

        arrivals = make_arrivals(arrivals.time_s[:queries], arrivals.model[:queries],
                                 arrivals.models)
    return serve(list(spec.models), spec.npu, arrivals, spec.scheduler,
                 cost_model=spec.cost_model, seed=spec.seed, **dict(spec.options))


def compare_with_replay(spec: LoadgenSpec, result: LoadgenResult) -> ReplayComparison:
    """Latency percentiles (NPU time) of the real run and the replay, and the latency verdicts:
    LoadGen's "performance constraints satisfied" and the replay's 99th percentile within the
    target (LoadGen's Server rule). LoadGen's overall VALID also needs its early-stopping
    test, which short runs fail whatever their latencies; that is reported separately."""
    sim = replay(spec, result.samples)
    lat = np.sort(sim.table.finish_s - sim.table.arrival_s)
    rows = []
    for name, q in (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99), ("max", 100)):
        ours = float(np.percentile(lat, q)) if len(lat) else math.nan
        theirs = result.latency_s.get(name, math.nan)
        rows.append({"latency": name, "loadgen_s": theirs, "replay_s": ours,
                     "diff_pct": (theirs / ours - 1) * 100 if ours else math.nan})
    target = spec.target_latency_s or math.inf
    replay_valid = bool(len(lat)) and float(np.percentile(lat, 99)) <= target
    ok = result.summary.get("Performance constraints satisfied", "") == "Yes"
    return ReplayComparison(rows, result.valid, ok, replay_valid, result.samples, len(lat))
