"""Invariants of the metrics on random runs (hypothesis)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.metrics import (
    antt,
    busy_time,
    fairness,
    merge_intervals,
    progress,
    stp,
    utilization,
)
from npuweave.sim.records import Interval, RequestRecord

times = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)
spans = st.tuples(times, times).map(lambda t: (min(t), max(t)))


@st.composite
def intervals(draw):
    out = []
    for i, (a, b) in enumerate(draw(st.lists(spans, min_size=1, max_size=30))):
        res = draw(st.sampled_from(["PE", "DRAM"]))
        out.append(Interval(res, "t", 0, f"u{i}", a, b))
    return out


@st.composite
def streams(draw):
    """Closed-loop streams of 1-4 tenants; every request takes at least its standalone time."""
    n = draw(st.integers(1, 4))
    single = {f"m{i}": draw(st.floats(0.1, 10.0)) for i in range(n)}
    requests = []
    for name, alone in single.items():
        t = 0.0
        for k in range(draw(st.integers(1, 6))):
            wait = draw(st.floats(0.0, 5.0))
            took = alone * draw(st.floats(1.0, 4.0))
            requests.append(RequestRecord(name, name, k, t, t + wait, t + wait + took))
            t += wait + took
    return requests, single


@settings(max_examples=200, deadline=None)
@given(intervals())
def test_utilization_within_unit_interval(ivs):
    if max(iv.end_s for iv in ivs) <= 0:
        return
    for res in ("PE", "DRAM"):
        assert 0.0 <= utilization(ivs, res) <= 1.0 + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(spans, max_size=30))
def test_merge_is_disjoint_and_keeps_coverage(raw):
    merged = merge_intervals(raw)
    assert all(a <= b for a, b in merged)
    assert all(merged[i][1] < merged[i + 1][0] for i in range(len(merged) - 1))
    for a, b in raw:  # every original point stays covered
        assert any(x <= a and b <= y for x, y in merged)
    total = sum(b - a for a, b in merged)
    assert total <= sum(b - a for a, b in raw) + 1e-9
    assert total >= max((b - a for a, b in raw), default=0.0) - 1e-9


@settings(max_examples=200, deadline=None)
@given(intervals(), times, times)
def test_busy_time_is_additive_over_split_windows(ivs, x, y):
    lo, hi = min(x, y), max(x, y)
    whole = busy_time(ivs, "PE", (0.0, 100.0))
    parts = busy_time(ivs, "PE", (0.0, lo)) + busy_time(ivs, "PE", (lo, hi))
    parts += busy_time(ivs, "PE", (hi, 100.0))
    assert parts == pytest.approx(whole, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(streams())
def test_slowed_streams_bound_stp_antt_fairness(run):
    requests, single = run
    for window in ("common", None):
        assert 0.0 <= stp(requests, single, window) <= len(single) + 1e-9
        assert antt(requests, single, window) >= 1.0 - 1e-12
        assert 0.0 <= fairness(requests, single, window=window) <= 1.0 + 1e-12


@settings(max_examples=100, deadline=None)
@given(st.floats(0.1, 10.0), st.integers(1, 20), times, times)
def test_model_alone_at_standalone_speed_has_stp_one(alone, n, x, y):
    reqs = [RequestRecord("m", "m", k, k * alone, k * alone, (k + 1) * alone) for k in range(n)]
    lo, hi = sorted((x / 100 * n * alone, y / 100 * n * alone))
    if hi - lo < 1e-6:
        return
    assert stp(reqs, {"m": alone}, (lo, hi)) == pytest.approx(1.0)
    assert progress(reqs, lo, hi) == pytest.approx((hi - lo) / alone)
