"""The capacity search: bracketing, bisection, confidence, monotonicity, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError, InfeasibleError
from npuweave.experiments.capacity import poisson_trace, search_capacity, wilson_interval


def test_wilson_interval_hand_worked() -> None:
    # k = 0, n = 100, z = 1.95996: centre = (z^2/200) / (1 + z^2/100) = 0.019207/1.038415
    # = 0.018496; half-width = z*sqrt(z^2/40000)/(1.038415) = 0.018496 -> [0, 0.036992]
    lo, hi = wilson_interval(0, 100)
    assert lo == 0.0 and hi == pytest.approx(0.036992, abs=2e-6)
    # k = n / 2: symmetric around 0.5
    lo, hi = wilson_interval(50, 100)
    assert lo + hi == pytest.approx(1.0)


@settings(max_examples=200, deadline=None)
@given(st.floats(1.0, 1e5), st.floats(0.01, 100.0), st.floats(0.005, 0.2))
def test_search_finds_a_step_threshold(threshold: float, start_ratio: float,
                                       tol: float) -> None:
    def run(load: float, seed: int) -> tuple[int, int]:
        return (50 if load > threshold else 3), 1000

    cap = search_capacity(run, start=threshold * start_ratio, rel_tol=tol)
    assert cap.load <= threshold < cap.failed_load <= cap.load * (1 + tol) * (1 + 1e-12)
    assert cap.missed == 3 and cap.requests == 1000 and cap.monotone
    assert cap.low < 0.003 < cap.high


@settings(max_examples=100, deadline=None)
@given(st.floats(10.0, 1000.0), st.floats(1.5, 40.0))
def test_capacity_grows_with_the_budget(knee: float, slope: float) -> None:
    """On a smooth monotone miss curve a larger budget never gives a smaller capacity."""

    def run(load: float, seed: int) -> tuple[int, int]:
        rate = min(1.0, max(0.0, (load - knee) / (slope * knee)))
        return round(rate * 10_000), 10_000

    caps = [search_capacity(run, start=knee, budget=b, rel_tol=0.001).load
            for b in (0.005, 0.01, 0.02, 0.05)]
    assert caps == sorted(caps)


def test_seeds_are_summed() -> None:
    seen = []

    def run(load: float, seed: int) -> tuple[int, int]:
        seen.append(seed)
        return (seed if load > 10 else 0), 100

    cap = search_capacity(run, start=5.0, seeds=(1, 2))
    assert cap.requests == 200 and set(seen) == {1, 2}


def test_unreachable_load_names_the_rate() -> None:
    with pytest.raises(InfeasibleError, match=r"even .* QPS misses 500 or more of its 1000"):
        search_capacity(lambda q, s: (500, 1000), start=100.0)


def test_never_failing_stops_at_max_load() -> None:
    cap = search_capacity(lambda q, s: (0, 100), start=1.0, max_load=64.0)
    assert cap.load == 64.0 and math.isinf(cap.failed_load)


@pytest.mark.parametrize("kw", [{"start": 0.0}, {"start": -1.0}, {"start": math.inf},
                                {"start": 1.0, "budget": 0.0}, {"start": 1.0, "seeds": ()}])
def test_bad_search_input(kw: dict) -> None:
    with pytest.raises(ConfigError):
        search_capacity(lambda q, s: (0, 1), **kw)


def _fcfs_misses(times: np.ndarray, service: float, deadline: float) -> int:
    """One FIFO server (Lindley's recursion), written independently of npuweave."""
    free, missed = 0.0, 0
    for a in times:
        start = max(a, free)
        free = start + service
        missed += free - a > deadline
    return missed


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(50.0, 900.0), st.floats(1.01, 3.0))
def test_lower_load_never_misses_more_on_the_same_seed(seed: int, qps: float,
                                                       factor: float) -> None:
    """Same seed, lower load: the same arrivals stretched in time, so a FIFO queue waits less."""
    hi, _ = poisson_trace([qps * 0.8, qps * 0.2], 400, seed)
    lo, _ = poisson_trace([qps * 0.8 / factor, qps * 0.2 / factor], 400, seed)
    assert np.allclose(lo, hi * factor)
    assert _fcfs_misses(lo, 1e-3, 4e-3) <= _fcfs_misses(hi, 1e-3, 4e-3)


def test_poisson_trace_rates_and_marks() -> None:
    t, m = poisson_trace([800.0, 200.0], 20_000, seed=3)
    assert np.all(np.diff(t) > 0)
    assert 20_000 / t[-1] == pytest.approx(1000.0, rel=0.03)   # total rate
    assert np.mean(m == 0) == pytest.approx(0.8, abs=0.01)     # 4:1 split
    with pytest.raises(ConfigError):
        poisson_trace([0.0, 0.0], 10, 0)
    with pytest.raises(ConfigError):
        poisson_trace([1.0], 0, 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 2.0), st.integers(0, 40)), min_size=1, max_size=5),
       st.integers(0, 2**32 - 1), st.floats(0.05, 2.0), st.floats(1.01, 4.0),
       st.floats(1.0, 20.0))
def test_one_model_fcfs_on_the_npu_never_misses_more_at_a_lower_load(units, seed, qps, factor,
                                                                     deadline) -> None:
    """One model served first come first served on the decoupled NPU (fetch of the next
    request overlapping the current computation): the same seed at a lower load stretches the
    arrivals, and no request waits longer (the capacity search's monotonicity, exact here)."""
    from npuweave.schedule.base import Tenant
    from npuweave.schedule.sequential import Sequential
    from npuweave.sim.lwserve import serve_layerwise

    t = Tenant("m", tuple(f"L{i}" for i in range(len(units))), tuple(c for c, _ in units),
               tuple(s for _, s in units))
    misses = []
    for q in (qps, qps / factor):
        times, models = poisson_trace([q], 60, seed)
        out = serve_layerwise([[t]], 64, 10.0, times, models, [deadline], Sequential())
        misses.append(out.missed)
    assert misses[1] <= misses[0]


def test_a_passing_load_above_a_valley_is_found() -> None:
    """Misses: none below 100 QPS, 5% in 100-200 QPS (small batches), none in 200-400 QPS
    (full batches), 50% above 400. The first crossing is ~100; the scan finds the 200-400
    region and the search ends just below 400."""

    def run(load: float, seed: int) -> tuple[int, int]:
        if load <= 100 or 200 <= load <= 400:
            return 0, 1000
        return (50 if load < 200 else 500), 1000

    cap = search_capacity(run, start=150.0, rel_tol=0.01)  # starts in the valley
    assert 100 * 0.99 <= cap.first_crossing <= 100
    assert 400 * 0.99 <= cap.load <= 400 < cap.failed_load and not cap.monotone
    assert search_capacity(run, start=150.0, rel_tol=0.01, scan=0).load == cap.first_crossing


def test_valley_keeps_the_first_failing_load() -> None:
    """Misses 10% from 200 to 400 QPS and above 800 QPS, none elsewhere: the capacity is
    ~800 QPS and the first failing load met going up is ~200 QPS."""
    def run(load: float, seed: int) -> tuple[int, int]:
        return (100 if 200 <= load < 400 or load > 800 else 0), 1000

    cap = search_capacity(run, start=100.0, rel_tol=0.02)
    assert 780 < cap.load <= 800 < cap.failed_load
    assert 195 < cap.first_crossing < 200 <= cap.first_failed <= 204
    # 0 of 1000 missed: Wilson upper 0.38% < 1%, a sure pass at the capacity itself; the
    # failing load misses 10% (lower end 8.3%): a sure failure
    assert cap.sure_load == cap.load and cap.fail_sure_load == cap.failed_load
    assert not cap.straddles


def test_bracket_probes_below_until_a_sure_pass() -> None:
    """8 of 1000 missed up to 100 QPS (interval [0.41%, 1.57%] straddles 1%), none below 90,
    20 of 1000 above 100 (interval [1.30%, 3.07%]: a sure failure). Probing 1.05x apart below
    100 QPS: 95.24 and 90.70 still miss 8, 100/1.05^3 = 86.384 misses none."""
    def run(load: float, seed: int) -> tuple[int, int]:
        return (0 if load < 90 else 8 if load <= 100 else 20), 1000

    cap = search_capacity(run, start=100.0, rel_tol=0.02, scan=0)
    assert cap.load == 100.0 and cap.straddles
    assert cap.sure_load == pytest.approx(100 / 1.05 ** 3)
    assert cap.fail_sure_load == cap.failed_load
    none = search_capacity(run, start=100.0, rel_tol=0.02, scan=0, probes=0)
    assert math.isnan(none.sure_load) and len(none.trials) == len(cap.trials) - 3
