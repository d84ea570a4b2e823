"""``ClosedLoop.common_window``: the closed loop's measurement window, passed to the metrics."""

from __future__ import annotations

from types import SimpleNamespace as R

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError
from npuweave.experiments.compare import evaluate
from npuweave.metrics import resolve_window, summarize
from npuweave.schedule import make_tenant
from npuweave.sim.arrival_processes import ClosedLoop
from npuweave.sim.streams import run_tenants


def test_window_ends_when_the_first_stream_stops():
    # stream a: requests finish at 2, 4, 6 s; stream b: at 5 s (its only one). b stops
    # issuing at 5 s, so the window is (0, 5); records arrive in any order
    recs = [R(tenant="a", finish_s=4.0), R(tenant="b", finish_s=5.0),
            R(tenant="a", finish_s=6.0), R(tenant="a", finish_s=2.0)]
    assert ClosedLoop.common_window(recs) == (0.0, 5.0)
    assert ClosedLoop.common_window([]) == (0.0, 0.0)


def test_metrics_accept_the_window_function():
    recs = [R(tenant="a", finish_s=4.0), R(tenant="b", finish_s=5.0)]
    assert resolve_window(ClosedLoop.common_window, recs) == (0.0, 4.0)  # a stops first
    with pytest.raises(ConfigError, match=r"window \(0.0, 0.0\) is empty"):
        resolve_window(ClosedLoop.common_window, [])
    with pytest.raises(ConfigError, match="a function of the requests"):
        resolve_window("whole", recs)


def test_evaluate_measures_closed_loops_over_the_loop_window():
    # a: 1 s compute, no weights (3 requests end at 1, 2, 3 s when alone); b: 2 s. Under
    # "sequential" (FCFS by issue time) they alternate: a 0-1, b 1-3, a 3-4, b 4-6, a 6-7,
    # b 7-9; a stops at 7 s, b at 9 s: the window is (0, 7)
    a, b = make_tenant("a", [1.0], [0], 10), make_tenant("b", [2.0], [0], 10)
    r = run_tenants([a, b], 10, 10.0, "sequential", 3)
    assert ClosedLoop.common_window(r.requests) == pytest.approx((0.0, 7.0))
    single = {"a": 1.0, "b": 2.0}
    row = evaluate(r, single, ["throughput"])
    assert row["throughput"] == summarize(r, single, ["throughput"], (0.0, 7.0))["throughput"]
    # by 7 s a finished its 3 requests and b 2 (its third starts at 7 s)
    assert row["throughput"] == pytest.approx({"a": 3 / 7, "b": 2 / 7})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.floats(0.001, 100.0)), min_size=1,
                max_size=12))
def test_records_only_common_window_is_the_loops_window(rows):
    """The metrics' records-only ``"common"`` window (metrics may not import ``schedule``)
    must stay the closed loop's own: the earliest of the streams' last finishes."""
    recs = [R(tenant=t, finish_s=f) for t, f in rows]
    assert resolve_window("common", recs) == ClosedLoop.common_window(recs)
