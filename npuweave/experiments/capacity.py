"""The largest load a scheduler sustains with fewer than 1% deadline misses (thesis V.3.A).

``search_capacity`` is generic: it takes ``run(load, seed) -> (missed, requests)`` (for
instance, a seeded open-loop serving run at ``load`` queries per second with a fixed ratio
between the models) and finds the largest load at which ``missed < budget * requests`` for
every seed. It brackets the threshold by doubling or halving from ``start``, then bisects
geometrically until the bracket is within ``rel_tol``. Bisection assumes the miss rate does not
fall as the load grows. That holds for one first-come-first-served queue when every seed's
arrival times at a lower load are the same draws stretched in time (Lindley's recursion:
longer gaps never lengthen a wait), which is how ``poisson_trace`` draws them; for interleaving
schedulers it is an observed property, not a theorem, so ``Capacity.monotone`` says whether the
evaluated points were monotone.

Runs may stop early, exactly: with ``requests`` given, a trial runs its seeds in turn and lets
each stop once the misses pooled over the seeds so far reach the count that decides the trial
(``_target``): the budget's allowance plus one for a pass/fail verdict, the fewest misses whose
Wilson interval lies wholly above the budget for a sure failure. A seed that stops has proved
the verdict (the trial's count is then a lower bound, ``Trial.exact`` false, and the seeds
after it are not run); a seed that does not stop counted exactly. So a pass is always backed by
exact counts and a failure by a proof, whatever the seeds' order. (A per-seed threshold is not
enough: seeds stopped at 2% each can sum to fewer than the pooled budget's misses and pass a
load whose full count fails.)

The miss rate at the answer comes with a Wilson score interval (95% by default). Requests in a
queue are not independent (a burst delays its neighbours), so the interval is optimistic; running
several seeds and summing their counts narrows what the interval leaves out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from npuweave.errors import ConfigError, InfeasibleError

#: ``run(load, seed) -> (missed, requests)``, or ``run(load, seed, stop_at)`` when the search is
#: given ``requests``: it may then return as soon as its misses reach ``stop_at`` (``missed >=
#: stop_at``, a lower bound); below ``stop_at`` its count must be the whole run's
RunFn = Callable[..., tuple[int, int]]
#: At most this many bracket-bisect-scan rounds (each one ends at a higher passing load).
MAX_ROUNDS = 4


@dataclass(frozen=True, slots=True)
class Trial:
    """One evaluated load: misses and requests summed over the seeds.

    ``exact``: ``missed`` is the whole count; when false a seed stopped once the pooled misses
    proved the trial's verdict, ``missed`` is a lower bound and ``requests`` still counts every
    seed's requests (those of the seeds not run included), so ``rate`` is a lower bound too.
    """

    load: float
    missed: int
    requests: int
    exact: bool = True

    @property
    def rate(self) -> float:
        return self.missed / self.requests if self.requests else 0.0


@dataclass(frozen=True, slots=True)
class Capacity:
    """Result of ``search_capacity``: the sustainable ``load`` and what backs it.

    ``low``/``high`` bound the miss rate at ``load`` (Wilson, ``confidence``); ``failed_load``
    is the failing load that bounds ``load`` from above (``inf`` when ``max_load`` still
    passed); ``trials`` lists every evaluation in the order made; ``first_crossing`` is the
    passing load of the first bracket (equal to ``load`` when the miss rate grew with the
    load over the scanned range). ``sure_load`` is the highest evaluated load at or below
    ``load`` whose Wilson interval lies wholly below the budget (passes with ``confidence``),
    ``fail_sure_load`` the lowest evaluated load above ``load`` whose interval lies wholly
    above it (``nan`` / ``inf`` when none was found): together they bracket the capacity.
    ``first_failed`` is the failing load of the first bracket (the first failure met going
    up), ``failed_load`` when the miss rate grew with the load.

    Which numbers are exact: ``missed``, ``requests``, ``low``, ``high`` and ``sure_load`` come
    from passing trials, whose runs never stop early (exact counts). ``failed_load``,
    ``first_failed`` and ``fail_sure_load`` are proven failures: their trials may have stopped,
    so their counts are lower bounds, and a Wilson interval on a lower bound lies below the
    true one, so "wholly above the budget" stays true. ``monotone`` compares proven rates only
    (see ``_monotone``).
    """

    load: float
    missed: int
    requests: int
    low: float
    high: float
    failed_load: float
    budget: float
    confidence: float
    monotone: bool
    trials: tuple[Trial, ...]
    first_crossing: float = math.nan
    sure_load: float = math.nan
    fail_sure_load: float = math.inf
    first_failed: float = math.inf

    @property
    def rate(self) -> float:
        return self.missed / self.requests if self.requests else 0.0

    @property
    def straddles(self) -> bool:
        """Whether the miss-rate interval at ``load`` contains the budget (the pass is not
        significant at ``confidence``)."""
        return self.low <= self.budget <= self.high


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``k / n``.

    Examples
    --------
    >>> lo, hi = wilson_interval(10, 1000)
    >>> round(lo, 4), round(hi, 4)
    (0.0054, 0.0183)
    """
    if n <= 0:
        return 0.0, 1.0
    z = _z(confidence)
    p = k / n
    den = 1.0 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    lo = 0.0 if k <= 0 else max(0.0, mid - half)  # exact ends: no rounding residue
    hi = 1.0 if k >= n else min(1.0, mid + half)
    return lo, hi


def _z(confidence: float) -> float:
    """Two-sided standard-normal quantile by bisection on erf (no SciPy needed)."""
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f'"confidence" must be between 0 and 1, got {confidence!r}')
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.erf(mid / math.sqrt(2)) < confidence:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def search_capacity(run: RunFn, start: float, seeds: Sequence[int] = (0,),
                    budget: float = 0.01, rel_tol: float = 0.02, min_load: float | None = None,
                    max_load: float | None = None, confidence: float = 0.95,
                    progress: Callable[[Trial], None] | None = None, scan: int = 8,
                    scan_step: float = 1.15, probe_step: float = 1.05,
                    probes: int = 3, requests: int | None = None) -> Capacity:
    """Largest load with ``missed < budget * requests`` for the seeds together.

    Parameters
    ----------
    run : ``run(load, seed) -> (missed, requests)``, run to the end; with ``requests`` given,
        ``run(load, seed, stop_at)``, which may stop once its misses reach ``stop_at`` (see
        ``RunFn`` and the module's docstring: the search then stays exact).
    start : first load tried; the search doubles or halves from it.
    seeds : the same seeds at every load (common random numbers).
    budget : allowed miss fraction (strictly below it passes).
    rel_tol : stop when the failing load is within ``1 + rel_tol`` of the passing one.
    min_load, max_load : search limits (default ``start / 1024`` and ``start * 1024``). If
        ``min_load`` already misses too often: ``InfeasibleError`` naming the rate.
    scan, scan_step : after each bisection, try ``scan`` loads above the failing one, each
        ``scan_step`` times the previous; if one passes, the search goes on from it. The miss
        rate of a batching server need not grow with the load (bigger batches at higher load
        can serve more on time), so the first crossing is not always the largest sustainable
        load; ``Capacity.first_crossing`` keeps the first one. ``scan=0`` stops there.
    probe_step, probes : to bracket the answer with confidence, up to ``probes`` loads
        ``probe_step`` apart are tried below the answer (until one passes surely) and from the
        failing load up (until one fails surely); ``probes=0`` adds none. The probes above
        let runs stop at the pooled count that makes a failure sure; a failing load whose
        trial stopped at the pass/fail count is run again that way before a probe above it.
    requests : every run's request count, when all are the same: lets runs stop early
        (each seed's stop is computed from the pooled budget); a run reporting another count
        is an error. ``None``: every run goes to the end.

    Examples
    --------
    A queue that misses 10% of requests above 250 QPS and none below:

    >>> cap = search_capacity(lambda q, s: (100 if q > 250 else 0, 1000), start=100.0)
    >>> 245 < cap.load <= 250 < cap.failed_load <= 255
    True
    """
    _check(start, budget, rel_tol, seeds, probe_step, probes)
    lo_lim = start / 1024 if min_load is None else float(min_load)
    hi_lim = start * 1024 if max_load is None else float(max_load)
    trials: list[Trial] = []

    decide, sure_at = _targets(requests, len(seeds), budget, confidence)

    def trial(load: float, surely: bool = False) -> Trial:
        t = _pooled(run, load, seeds, requests, sure_at if surely else decide)
        trials.append(t)
        if progress is not None:
            progress(t)
        return t

    def ok(t: Trial) -> bool:
        return t.missed < budget * t.requests

    first = trial(min(max(start, lo_lim), hi_lim))
    good, bad = (first, None) if ok(first) else (None, first)
    while good is None:
        assert bad is not None
        if bad.load <= lo_lim:
            raise InfeasibleError(
                f"unreachable load: even {bad.load:.4g} QPS misses {bad.missed} or more of "
                f"its {bad.requests} requests' deadlines (the {100 * budget:g}% budget allows "
                f"fewer than {budget * bad.requests:g}); loosen the deadlines or check that "
                "they exceed the models' standalone times")
        t = trial(max(bad.load / 2, lo_lim))
        good, bad = (t, bad) if ok(t) else (None, t)
    crossing: Trial | None = None
    first_bad: Trial | None = None
    if scan < 0 or not scan_step > 1.0:
        raise ConfigError(f"scan {scan!r} must be >= 0 and scan_step {scan_step!r} > 1")
    for _ in range(MAX_ROUNDS):
        while bad is None and good.load < hi_lim:
            t = trial(min(good.load * 2, hi_lim))
            good, bad = (t, None) if ok(t) else (good, t)
        while bad is not None and bad.load > good.load * (1 + rel_tol):
            t = trial(math.sqrt(good.load * bad.load))
            good, bad = (t, bad) if ok(t) else (good, t)
        if crossing is None:
            crossing, first_bad = good, bad
        above = _scan(trial, ok, bad, scan, scan_step, hi_lim)
        if above is None:
            break
        good, bad = above, None  # a higher load passes again: search on from there
    low, high = wilson_interval(good.missed, good.requests, confidence)
    failed = math.inf if bad is None else bad.load
    sure, fail_sure = _bracket(trial, trials, good.load, failed, budget, confidence,
                               probe_step, probes)
    return Capacity(good.load, good.missed, good.requests, low, high, failed, budget,
                    confidence, _monotone(trials), tuple(trials),
                    crossing.load if crossing is not None else good.load, sure, fail_sure,
                    first_bad.load if first_bad is not None else failed)


def _targets(requests: int | None, seeds: int, budget: float,
             confidence: float) -> tuple[int | None, int | None]:
    """``(decide, sure)``: the pooled misses that prove a trial fails (the budget's allowance
    plus one: ``missed < budget * total`` is the pass rule) and that prove it fails surely
    (the fewest whose Wilson interval lies wholly above the budget; ``total + 1`` when none
    does: never stop). ``(None, None)`` when runs go to the end.

    Examples
    --------
    >>> _targets(4000, 3, 0.01, 0.95)[0]   # 1% of 12,000: 119 pass, 120 fail
    120
    """
    if requests is None:
        return None, None
    if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
        raise ConfigError(f'"requests" must be an integer >= 1, got {requests!r}')
    total = requests * seeds
    decide = math.ceil(budget * total)
    sure = next((k for k in range(decide, total + 1)
                 if wilson_interval(k, total, confidence)[0] > budget), total + 1)
    return decide, sure


def _pooled(run: RunFn, load: float, seeds: Sequence[int], requests: int | None,
            target: int | None) -> Trial:
    """One trial: the seeds in turn, each allowed to stop once the misses pooled so far reach
    ``target`` (then the trial is decided: a lower bound, the later seeds not run)."""
    missed = total = 0
    for seed in seeds:
        if requests is None or target is None:
            m, n = run(load, seed)
        else:
            stop_at = target - missed  # >= 1: the seeds before counted fewer than target
            m, n = run(load, seed, stop_at)
            if int(n) != requests:
                raise ConfigError(f"a capacity run at {load:.4g} QPS, seed {seed}, reported "
                                  f"{n} requests, not the {requests} the search was given")
            if m >= stop_at:  # it may have stopped: the verdict is proved, the count is not
                return Trial(load, missed + int(m), requests * len(seeds), exact=False)
        missed, total = missed + int(m), total + int(n)
    return Trial(load, missed, total)


def _bracket(trial: Callable[..., Trial], trials: list[Trial], load: float, failed: float,
             budget: float, confidence: float, step: float,
             probes: int) -> tuple[float, float]:
    """``(sure, fail_sure)``: the loads that bracket ``load`` with ``confidence``, probing
    ``step`` apart below ``load`` and from ``failed`` up when the trials so far have none."""
    def sure_pass(t: Trial) -> bool:
        return wilson_interval(t.missed, t.requests, confidence)[1] < budget

    def sure_fail(t: Trial) -> bool:
        return wilson_interval(t.missed, t.requests, confidence)[0] > budget

    sure = max((t.load for t in trials if t.load <= load and sure_pass(t)), default=math.nan)
    probe = load
    for _ in range(0 if sure >= load / step ** probes else probes):
        probe /= step
        if sure_pass(trial(probe)):
            sure = probe if math.isnan(sure) else max(probe, sure)
            break
    fail = min((t.load for t in trials if t.load > load and sure_fail(t)), default=math.inf)
    probe = failed
    for k in range(probes if math.isfinite(failed) else 0):
        if probe >= fail:
            break
        done = next((t for t in trials if t.load == probe), None) if k == 0 else None
        if done is None or not (done.exact or sure_fail(done)):
            done = trial(probe, True)  # run to the sure-failure count (or the end)
        if sure_fail(done):
            fail = probe
            break
        probe *= step
    return sure, fail


def _scan(trial: Callable[[float], Trial], ok: Callable[[Trial], bool], bad: Trial | None,
          scan: int, step: float, hi_lim: float) -> Trial | None:
    """The first of ``scan`` loads above ``bad`` (``step`` apart) that passes, if any."""
    if bad is None:
        return None
    load = bad.load
    for _ in range(scan):
        load *= step
        if load > hi_lim:
            return None
        t = trial(load)
        if ok(t):
            return t
    return None


def _check(start: float, budget: float, rel_tol: float, seeds: Sequence[int],
           probe_step: float = 1.05, probes: int = 0) -> None:
    if not (isinstance(start, int | float) and math.isfinite(start) and start > 0):
        raise ConfigError(f'the starting load must be a finite number > 0 QPS, got {start!r}')
    if not 0.0 < budget < 1.0:
        raise ConfigError(f'the violation budget must be between 0 and 100%, got {budget!r}')
    if not rel_tol > 0.0:
        raise ConfigError(f'"rel_tol" must be > 0, got {rel_tol!r}')
    if not seeds:
        raise ConfigError("give at least one seed for the capacity search")
    if not probe_step > 1.0 or probes < 0:
        raise ConfigError(f"probes {probes!r} must be >= 0 and probe_step {probe_step!r} > 1")


def _monotone(trials: Sequence[Trial]) -> bool:
    """Whether the miss rate never falls as the load grows over the evaluated points: no
    exact rate lies below a rate proven (exactly or as a lower bound) at a lower load."""
    floor = -math.inf
    for t in sorted(trials, key=lambda t: (t.load, t.rate)):
        if t.exact and t.rate + 1e-15 < floor:
            return False
        floor = max(floor, t.rate)
    return True


def poisson_trace(qps: Sequence[float], requests: int,
                  seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Merged Poisson arrivals of several models: ``(times in s, model index)``, ``requests``
    arrivals in all.

    The merged stream of independent Poisson processes of rates ``qps`` is one Poisson process
    of rate ``sum(qps)`` whose arrivals belong to model ``i`` with probability
    ``qps[i] / sum(qps)``. Both the unit-rate gaps and the model marks come from ``seed``
    alone, so the same seed at another total rate gives the same sequence of models with every
    time scaled by the ratio of the rates (what makes the capacity search monotone for FCFS).

    Examples
    --------
    >>> t1, m1 = poisson_trace([300.0, 100.0], 5, seed=1)
    >>> t2, m2 = poisson_trace([150.0, 50.0], 5, seed=1)
    >>> bool((m1 == m2).all()), bool(np.allclose(t2, 2 * t1))
    (True, True)
    """
    rates = np.asarray(qps, dtype=float)
    if rates.ndim != 1 or len(rates) == 0 or not np.all(np.isfinite(rates)) or np.any(rates < 0):
        raise ConfigError(f"QPS must be finite and >= 0 per model, got {list(qps)}")
    total = float(rates.sum())
    if total <= 0:
        raise ConfigError("the total QPS must be > 0")
    if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
        raise ConfigError(f'"requests" must be an integer >= 1, got {requests!r}')
    rng = np.random.default_rng(seed)
    gaps = rng.standard_exponential(requests)
    marks = rng.random(requests)
    times = np.cumsum(gaps) / total
    edges = np.cumsum(rates / total)
    models = np.minimum(np.searchsorted(edges, marks, side="right"), len(rates) - 1)
    return times, models.astype(np.int64)
