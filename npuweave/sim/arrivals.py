"""Open-loop arrival processes: when each request arrives, for which model, how urgent.

Every arrival process, the closed loop included, is registered once in
``npuweave.sim.arrival_processes``.

An ``Arrivals`` record is a handful of parallel NumPy arrays sorted by arrival time; the serving
simulator turns each row into a ``Request``. Three generators build one:

- ``poisson``: independent Poisson processes, one per model, from a seeded NumPy ``Generator``;
- ``loadgen_server``: MLPerf LoadGen's Server-scenario schedule, bit-identical to LoadGen 6.0.x
  for the same ``schedule_rng_seed`` and QPS (the algorithm is in ``npuweave.sim.mt19937`` and
  ``docs/ARRIVALS_METRICS.md``);
- ``from_trace``: a CSV or JSON file of requests (``npuweave.sim.traces``).

Deadlines are *relative* latency budgets in seconds (``inf``: none); the absolute deadline of a
request is ``time_s + deadline_s`` (``Arrivals.deadline_abs_s``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from npuweave.errors import ConfigError
from npuweave.sim.mt19937 import MT19937, exponential, to_nanoseconds

#: Arrivals generated per model before the caller is told to shorten the run.
MAX_ARRIVALS = 50_000_000
#: Memory one served request costs at the peak of a ``serve``, measured over a tiny run's
#: 174 MB: 1.5 KB with ``rr`` at 20k requests (the per-event engine, Python requests), 0.85 KB
#: with ``fcfs`` at 20k, 1.04 KB with ``fcfs --json`` at 1M (peak RSS 1.22 GB).
SERVE_BYTES_PER_REQUEST = 1_500


def memory_limit_bytes() -> int:
    """Half of this machine's physical memory (at least 1 GiB): what one run may plan to use."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 * 2**30
    return max(2**30, total // 2)


def check_request_budget(n: float, what: str) -> None:
    """Refuse, before any work, a run whose request count or estimated memory is over its limit.

    Examples
    --------
    >>> check_request_budget(1000, "qps x duration")
    """
    if n > MAX_ARRIVALS:
        raise ConfigError(f"{what}: {n:.3g} requests; more than {MAX_ARRIVALS}, shorten "
                          "--duration or lower --qps")
    need, limit = n * SERVE_BYTES_PER_REQUEST, memory_limit_bytes()
    if need > limit:
        raise ConfigError(f"{what}: {n:.3g} requests would take about {need / 1e9:.1f} GB "
                          f"({SERVE_BYTES_PER_REQUEST} B each), over the {limit / 1e9:.1f} GB "
                          "limit (half this machine's memory); shorten --duration or lower --qps")


@dataclass(frozen=True, slots=True, eq=False)
class Arrivals:
    """Requests arriving over time, as parallel arrays sorted by ``time_s``.

    Attributes
    ----------
    time_s : float64 array, non-decreasing, finite, >= 0: arrival times in seconds.
    model : int64 array, index into ``models``.
    priority : int64 array (1 when not given; larger is more important, as in PREMA).
    deadline_s : float64 array, relative latency budget in seconds (``inf``: none).
    models : the model names, in the order the indices refer to.
    deadline_abs_s : float64 array, absolute deadlines (arrival + budget; ``inf`` where there
        is none), computed once here: callers read it per request.

    Examples
    --------
    >>> a = poisson(("resnet50", "bert-base"), (300.0, 80.0), 2.0, seed=7)
    >>> len(a) > 0 and a.models == ("resnet50", "bert-base")
    True
    """

    time_s: np.ndarray
    model: np.ndarray
    priority: np.ndarray
    deadline_s: np.ndarray
    models: tuple[str, ...]
    deadline_abs_s: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = self.time_s.shape
        for name in ("model", "priority", "deadline_s"):
            if getattr(self, name).shape != n:
                raise ConfigError(f"Arrivals.{name} has shape {getattr(self, name).shape}, "
                                  f"time_s has {n}; give one entry per request")
        absolute = self.time_s + self.deadline_s
        absolute.setflags(write=False)
        object.__setattr__(self, "deadline_abs_s", absolute)

    def __len__(self) -> int:
        return int(self.time_s.shape[0])

    def model_names(self) -> np.ndarray:
        """The model name of every request (object array)."""
        return np.asarray(self.models, dtype=object)[self.model]

    def count(self) -> dict[str, int]:
        """Requests per model name."""
        counts = np.bincount(self.model, minlength=len(self.models))
        return {m: int(c) for m, c in zip(self.models, counts, strict=True)}


def make_arrivals(time_s: Sequence[float] | np.ndarray, model: Sequence[int] | np.ndarray,
                  models: Sequence[str], priority: Sequence[int] | np.ndarray | None = None,
                  deadline_s: Sequence[float] | np.ndarray | None = None) -> Arrivals:
    """Validate parallel columns and freeze them into ``Arrivals`` (rows must already be sorted).

    Examples
    --------
    >>> a = make_arrivals([0.0, 0.5], [0, 1], ("a", "b"), deadline_s=[0.1, math.inf])
    >>> a.deadline_abs_s.tolist()
    [0.1, inf]
    """
    t = np.array(time_s, dtype=np.float64)
    m = np.array(model, dtype=np.int64)
    n = t.shape[0]
    p = np.ones(n, np.int64) if priority is None else np.array(priority, dtype=np.int64)
    d = np.full(n, np.inf) if deadline_s is None else np.array(deadline_s, dtype=np.float64)
    names = tuple(str(x) for x in models)
    if not names or len(set(names)) != len(names):
        raise ConfigError(f"arrivals: model names must be distinct and non-empty, got {names}")
    if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ConfigError("arrivals: times must be finite and >= 0 seconds")
    if np.any(np.diff(t) < 0):
        raise ConfigError("arrivals: times must be sorted (non-decreasing)")
    if m.shape == (n,) and n and (m.min() < 0 or m.max() >= len(names)):
        raise ConfigError(f"arrivals: model index out of range for {len(names)} models")
    if d.shape == (n,) and (np.any(np.isnan(d)) or np.any(d <= 0)):
        raise ConfigError("arrivals: deadlines must be > 0 seconds (inf: none)")
    for arr in (t, m, p, d):
        arr.setflags(write=False)
    return Arrivals(t, m, p, d, names)


def _per_model(values: Sequence[float] | Sequence[int] | None, n: int, default: float,
               what: str) -> list[float]:
    if values is None:
        return [default] * n
    try:
        vals = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: {values!r:.80}; give a list of numbers, one per model"
                          ) from None
    if len(vals) != n:
        raise ConfigError(f"{what}: {len(vals)} values for {n} models; give one per model")
    return vals


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ConfigError(f"seed: {seed!r}; give a whole number in [0, 2**64)")
    return int(seed)


def _check_run(models: Sequence[str], qps: Sequence[float], duration_s: float) -> list[float]:
    if isinstance(models, str) or not models:
        raise ConfigError(f"models: {models!r:.80}; give a list of at least one model name")
    rates = _per_model(qps, len(models), 0.0, "qps")
    for name, q in zip(models, rates, strict=True):
        if not (math.isfinite(q) and q > 0):
            raise ConfigError(f"qps: {q!r} for model {name!r}; give a finite rate > 0")
    if not (math.isfinite(duration_s) and duration_s > 0):
        raise ConfigError(f"duration: {duration_s!r} s; give a finite duration > 0")
    check_request_budget(sum(rates) * duration_s, "qps x duration")
    return rates


def _merge(models: Sequence[str], per_model: list[np.ndarray],
           priority: Sequence[int] | None, deadline_s: Sequence[float] | None) -> Arrivals:
    pri = _per_model(priority, len(models), 1, "priority")
    ddl = _per_model(deadline_s, len(models), math.inf, "deadline")
    time = np.concatenate(per_model) if per_model else np.empty(0)
    model = np.concatenate([np.full(t.size, i, np.int64) for i, t in enumerate(per_model)])
    order = np.lexsort((model, time))  # by time, ties by model index
    time, model = time[order], model[order]
    return make_arrivals(time, model, models, np.asarray(pri, np.int64)[model],
                         np.asarray(ddl, np.float64)[model])


def poisson(models: Sequence[str], qps: Sequence[float], duration_s: float, seed: int,
            priority: Sequence[int] | None = None,
            deadline_s: Sequence[float] | None = None) -> Arrivals:
    """Independent Poisson arrivals per model on ``[0, duration_s)``.

    Model ``i`` draws exponential gaps of mean ``1 / qps[i]`` from its own stream, spawned from
    ``numpy.random.SeedSequence(seed)``, so adding a model never changes the others' arrivals.

    Examples
    --------
    >>> a = poisson(("resnet50",), (100.0,), 1.0, seed=0)
    >>> 60 < len(a) < 140 and bool(a.time_s.max() < 1.0)
    True
    """
    rates = _check_run(models, qps, duration_s)
    streams = np.random.SeedSequence(_check_seed(seed)).spawn(len(rates))
    per_model = []
    for rate, ss in zip(rates, streams, strict=True):
        rng = np.random.default_rng(ss)
        expected = rate * duration_s
        chunk = int(expected + 6.0 * math.sqrt(expected) + 16)
        gaps = rng.exponential(1.0 / rate, chunk)
        times = np.cumsum(gaps)
        while times[-1] < duration_s:  # rare: the first chunk fell short
            more = np.cumsum(rng.exponential(1.0 / rate, chunk)) + times[-1]
            times = np.concatenate([times, more])
        per_model.append(times[times < duration_s])
    return _merge(models, per_model, priority, deadline_s)


def loadgen_schedule_ns(qps: float, duration_s: float, seed: int,
                        min_query_count: int = 1) -> np.ndarray:
    """LoadGen's Server-scenario query timestamps in integer nanoseconds.

    LoadGen (``GenerateQueries`` in ``loadgen/loadgen.cc``) issues its first query at 0 and adds
    ``duration_cast<nanoseconds>(exponential_distribution(qps)(schedule_rng))`` after each;
    it stops once the *previous* query's timestamp reached the target duration and at least
    ``min_query_count`` queries exist, so the last query is the first at or past the duration.

    Examples
    --------
    >>> loadgen_schedule_ns(10.0, 0.5, seed=0)[:2].tolist()
    [0, 89856038]
    """
    rate = _check_run(("model",), (qps,), duration_s)[0]
    seed = _check_seed(seed)
    if not 0 <= min_query_count <= MAX_ARRIVALS:
        raise ConfigError(f"min_query_count: {min_query_count}; give 0 to {MAX_ARRIVALS}")
    limit_ns = int(round(duration_s * 1e9))
    rng = MT19937(seed)
    expected = rate * duration_s
    parts = [np.zeros(1, np.int64)]
    last, have = 0, 1
    while last < limit_ns or have < min_query_count:
        chunk = int(max(expected - have, min_query_count - have, 0) * 1.05
                    + 6.0 * math.sqrt(expected) + 64)
        gaps = to_nanoseconds(exponential(rng.next(2 * chunk), rate))
        parts.append(last + np.cumsum(gaps))
        last, have = int(parts[-1][-1]), have + chunk
    stamps = np.concatenate(parts)
    # keep up to and including the first stamp >= limit, and at least min_query_count
    past = int(np.searchsorted(stamps, limit_ns, side="left"))
    keep = max(past + 1, min_query_count)
    return stamps[:keep]


def loadgen_server(models: Sequence[str], qps: Sequence[float], duration_s: float, seed: int,
                   priority: Sequence[int] | None = None,
                   deadline_s: Sequence[float] | None = None,
                   min_query_count: int = 1) -> Arrivals:
    """Arrivals exactly as MLPerf LoadGen's Server scenario would issue them, one run per model.

    LoadGen runs one model at one QPS. With several models, model ``i`` gets the schedule of a
    LoadGen Server run with ``schedule_rng_seed = seed + i`` at ``qps[i]`` (as if one LoadGen
    instance per model ran side by side, started together); the first model's times are those of
    a single LoadGen run with ``seed``. Times are the integer-nanosecond stamps divided by 1e9.

    Examples
    --------
    >>> a = loadgen_server(("resnet50",), (10.0,), 0.5, seed=0)
    >>> a.time_s[:2].tolist()
    [0.0, 0.089856038]
    """
    rates = _check_run(models, qps, duration_s)
    seed = _check_seed(seed)
    per_model = [loadgen_schedule_ns(rate, duration_s, (seed + i) % 2**64, min_query_count) / 1e9
                 for i, rate in enumerate(rates)]
    return _merge(models, per_model, priority, deadline_s)

