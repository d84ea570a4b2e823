"""The ``Arrivals`` record and Poisson arrivals: invariants, seeding, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError
from npuweave.sim.arrivals import Arrivals, make_arrivals, poisson


@settings(max_examples=60, deadline=None)
@given(rates=st.lists(st.floats(0.5, 2000.0), min_size=1, max_size=4),
       duration=st.floats(0.01, 3.0), seed=st.integers(0, 2**63))
def test_poisson_invariants(rates, duration, seed):
    models = tuple(f"m{i}" for i in range(len(rates)))
    a = poisson(models, rates, duration, seed)
    assert a.time_s.dtype == np.float64 and a.model.dtype == np.int64
    assert np.all(np.diff(a.time_s) >= 0)
    assert np.all((a.time_s >= 0) & (a.time_s < duration))
    assert np.all(a.priority == 1) and np.all(np.isinf(a.deadline_s))
    assert set(a.model.tolist()) <= set(range(len(rates)))
    again = poisson(models, rates, duration, seed)
    assert np.array_equal(a.time_s, again.time_s) and np.array_equal(a.model, again.model)


def test_poisson_models_are_independent_streams():
    two = poisson(("a", "b"), (50.0, 20.0), 5.0, seed=3)
    three = poisson(("a", "b", "c"), (50.0, 20.0, 99.0), 5.0, seed=3)
    for i in (0, 1):
        assert np.array_equal(two.time_s[two.model == i], three.time_s[three.model == i])
    other_seed = poisson(("a", "b"), (50.0, 20.0), 5.0, seed=4)
    assert not np.array_equal(two.time_s, other_seed.time_s)


def test_poisson_rate_and_gaps_are_exponential():
    # 200 QPS for 100 s: 20,000 expected arrivals, sd sqrt(20000) = 141; mean gap 5 ms and the
    # coefficient of variation of exponential gaps is 1 (seeded, so the check is deterministic)
    a = poisson(("m",), (200.0,), 100.0, seed=1)
    assert abs(len(a) - 20000) < 5 * 141
    gaps = np.diff(a.time_s)
    assert gaps.mean() == pytest.approx(0.005, rel=0.03)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.05)


def test_priorities_and_deadlines_follow_the_model():
    a = poisson(("rn", "bb"), (300.0, 80.0), 1.0, seed=7, priority=(1, 9), deadline_s=(0.015, 0.13))
    assert set(a.priority[a.model == 1].tolist()) == {9}
    assert set(a.deadline_s[a.model == 0].tolist()) == {0.015}
    assert np.allclose(a.deadline_abs_s, a.time_s + a.deadline_s)
    assert a.count() == {"rn": int(np.sum(a.model == 0)), "bb": int(np.sum(a.model == 1))}
    assert a.model_names()[a.model == 1].tolist() == ["bb"] * int(np.sum(a.model == 1))


def test_arrays_are_read_only():
    a = poisson(("m",), (10.0,), 1.0, seed=0)
    with pytest.raises(ValueError):
        a.time_s[0] = 5.0
    with pytest.raises(ValueError):
        a.deadline_abs_s[0] = 5.0


def test_absolute_deadlines_are_computed_once():
    # read once per request by the simulator's set-up: a property recomputing the whole
    # array on each read made a 100k-request run's set-up quadratic
    a = make_arrivals([0.0, 0.5, 1.0], [0, 0, 0], ("m",), deadline_s=[0.25, math.inf, 2.0])
    assert a.deadline_abs_s is a.deadline_abs_s
    assert a.deadline_abs_s.tolist() == [0.25, math.inf, 3.0]


@pytest.mark.parametrize("kwargs,match", [
    ({"qps": (0.0,)}, "qps"), ({"qps": (-1.0,)}, "qps"), ({"qps": (math.nan,)}, "qps"),
    ({"qps": (1.0, 2.0)}, "2 values for 1 models"), ({"duration_s": 0.0}, "duration"),
    ({"duration_s": math.inf}, "duration"), ({"priority": (1, 2)}, "priority"),
    ({"deadline_s": (0.0,)}, "deadline"), ({"qps": (1e9,), "duration_s": 1e3}, "shorten"),
])
def test_poisson_bad_input(kwargs, match):
    args = {"models": ("m",), "qps": (5.0,), "duration_s": 1.0, "seed": 0} | kwargs
    with pytest.raises(ConfigError, match=match):
        poisson(**args)


@pytest.mark.parametrize("times,models,match", [
    ([0.0, -1.0], [0, 0], "finite and >= 0"), ([1.0, 0.5], [0, 0], "sorted"),
    ([0.0, math.inf], [0, 0], "finite"), ([0.0, 1.0], [0, 3], "out of range"),
])
def test_make_arrivals_rejects(times, models, match):
    with pytest.raises(ConfigError, match=match):
        make_arrivals(times, models, ("a", "b"))


def test_record_rejects_ragged_columns():
    with pytest.raises(ConfigError, match="shape"):
        Arrivals(np.zeros(2), np.zeros(3, np.int64), np.ones(2, np.int64), np.zeros(2), ("a",))
    with pytest.raises(ConfigError, match="distinct"):
        make_arrivals([0.0], [0], ("a", "a"))


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True, "7"])
def test_bad_seeds(seed):
    from npuweave.sim.arrivals import loadgen_server

    with pytest.raises(ConfigError, match="seed"):
        poisson(("m",), (5.0,), 1.0, seed)
    with pytest.raises(ConfigError, match="seed"):
        loadgen_server(("m",), (5.0,), 1.0, seed)


def test_loadgen_seed_wraps_like_uint64_for_the_last_models():
    from npuweave.sim.arrivals import loadgen_schedule_ns, loadgen_server

    a = loadgen_server(("x", "y"), (20.0, 20.0), 1.0, 2**64 - 1)
    y = (a.time_s[a.model == 1] * 1e9).round().astype(np.int64)
    assert y.tolist() == loadgen_schedule_ns(20.0, 1.0, 0).tolist()  # (2**64 - 1) + 1 wraps to 0
    with pytest.raises(ConfigError, match="min_query_count"):
        loadgen_schedule_ns(20.0, 1.0, 0, min_query_count=10**12)
