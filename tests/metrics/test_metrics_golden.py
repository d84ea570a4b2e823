"""Metrics against hand-computed examples (the arithmetic is in each test's comments)."""

import doctest

import pytest

import npuweave.metrics.latency
import npuweave.metrics.multitask
import npuweave.metrics.occupancy
from npuweave.errors import ConfigError, UnknownNameError
from npuweave.metrics import (
    antt,
    busy_time,
    fairness,
    lower_bound,
    makespan_ratio,
    merge_intervals,
    ntt,
    percentile,
    progress,
    resolve_window,
    sla_violation_rate,
    stp,
    summarize,
    tail_latency,
    throughput,
    utilization,
)
from npuweave.sim.records import Interval, RequestRecord

MS = 1e-3
# Model A takes 5 ms alone, model B 10 ms.
SINGLE = {"A": 5 * MS, "B": 10 * MS}


def closed_loop(tenant, spans_ms, batch=1):
    """Back-to-back requests: each arrives when the previous one finished."""
    out, arrival = [], 0.0
    for i, (start, finish) in enumerate(spans_ms):
        out.append(RequestRecord(tenant, tenant, i, arrival, start * MS, finish * MS, batch))
        arrival = finish * MS
    return out


# Shared run: A's requests take 6 ms each, B's 14 ms each.
SHARED = closed_loop("A", [(0, 6), (6, 12), (12, 18)]) + closed_loop("B", [(0, 14), (14, 28)])


def test_common_window_ends_when_first_tenant_runs_out():
    # A's last request ends at 18 ms, B's at 28 ms -> window (0, 18 ms).
    assert resolve_window("common", SHARED) == pytest.approx((0.0, 18 * MS))
    assert resolve_window(None, SHARED) == pytest.approx((0.0, 28 * MS))


def test_progress_counts_straddling_request_pro_rata():
    # B inside (0, 18): request 0 whole (1) + request 1 for 4 of its 14 ms (2/7).
    b = [r for r in SHARED if r.tenant == "B"]
    assert progress(b, 0.0, 18 * MS) == pytest.approx(1 + 4 / 14)


def test_progress_follows_work_when_intervals_are_given():
    # B's request spans [0, 10] but waits until 8 and then fetches 8-9 and computes 9-10.
    req = [RequestRecord("B", "B", 0, 0.0, 0.0, 10.0)]
    work = [Interval("DRAM", "B", 0, "fc", 8.0, 9.0), Interval("PE", "B", 0, "fc", 9.0, 10.0)]
    # In (0, 9): uniform-in-time credit 9/10; by work, 1 of its 2 busy seconds -> 0.5.
    assert progress(req, 0.0, 9.0) == pytest.approx(0.9)
    assert progress(req, 0.0, 9.0, work) == pytest.approx(0.5)
    # STP over (0, 9) with T_single = 2: 0.5 * 2 / 9.
    assert stp(req, {"B": 2.0}, (0.0, 9.0), work) == pytest.approx(1 / 9)


def test_stp_closed_loop_common_window():
    # STP = 3 * 5/18 + (1 + 2/7) * 10/18 = 5/6 + 5/7 = 65/42.
    assert stp(SHARED, SINGLE) == pytest.approx(65 / 42)


def test_stp_whole_run_window():
    # Over (0, 28 ms): A 3 * 5/28 + B 2 * 10/28 = 35/28 = 1.25.
    assert stp(SHARED, SINGLE, window=None) == pytest.approx(1.25)


def test_stp_of_models_taking_turns_is_one():
    # Sequential alternation at standalone speed: A [0,5], B [5,15], A [15,20], B [20,30].
    a = [RequestRecord("A", "A", 0, 0, 0, 5 * MS), RequestRecord("A", "A", 1, 5 * MS, 15 * MS, 20 * MS)]
    b = [RequestRecord("B", "B", 0, 0, 5 * MS, 15 * MS), RequestRecord("B", "B", 1, 15 * MS, 20 * MS, 30 * MS)]
    # Common window (0, 20): A 2 * 5/20 + B 1 * 10/20 = 1; whole run: 10/30 + 20/30 = 1.
    assert stp(a + b, SINGLE) == pytest.approx(1.0)
    assert stp(a + b, SINGLE, window=None) == pytest.approx(1.0)
    # ANTT: A's NTTs 5/5 = 1 and 15/5 = 3 -> 2; B's 15/10 = 1.5 -> (2 + 1.5) / 2 = 1.75.
    assert antt(a + b, SINGLE) == pytest.approx(1.75)


def test_thesis_example_equal_stp():
    # Thesis IV.5.B: 4 queries of A (5 ms) in 20 ms and 2 of B (10 ms) in 20 ms score alike.
    four_a = closed_loop("A", [(0, 5), (5, 10), (10, 15), (15, 20)])
    two_b = closed_loop("B", [(0, 10), (10, 20)])
    assert stp(four_a, SINGLE) == pytest.approx(stp(two_b, SINGLE)) == pytest.approx(1.0)


def test_antt_by_tenant_and_by_request():
    # Issued in (0, 18 ms): A's three (NTT 6/5 = 1.2 each), B's two (arrivals 0 and 14 ms,
    # NTT 14/10 = 1.4 each, the second counted although it finishes at 28 ms).
    assert antt(SHARED, SINGLE) == pytest.approx((1.2 + 1.4) / 2)
    assert antt(SHARED, SINGLE, by="request") == pytest.approx((3 * 1.2 + 2 * 1.4) / 5)
    # A window (0, 10 ms) keeps A's first two and B's first: (1.2 + 1.4) / 2 again, and
    # by request (1.2 + 1.2 + 1.4) / 3.
    assert antt(SHARED, SINGLE, (0.0, 10 * MS), by="request") == pytest.approx(3.8 / 3)
    assert ntt(SHARED[:1], SINGLE) == pytest.approx([1.2])


def test_fairness_prema_eq2():
    # PP_A = (5/6) / (1/2), PP_B = (5/7) / (1/2): fairness = (5/7) / (5/6) = 6/7.
    assert fairness(SHARED, SINGLE) == pytest.approx(6 / 7)
    # Priority 2:1 for A: PP_A = (5/6)/(2/3) = 1.25, PP_B = (5/7)/(1/3) = 15/7 -> 1.25 / (15/7).
    assert fairness(SHARED, SINGLE, priorities={"A": 2}) == pytest.approx(1.25 * 7 / 15)
    # A tenant that finished nothing starves: fairness 0.
    assert fairness(SHARED, SINGLE, tenants=["C"]) == 0.0


def test_throughput_per_tenant():
    # A: 3 requests / 18 ms; B: (9/7) requests / 18 ms; inputs scale by the batch.
    tp = throughput(SHARED)
    assert tp["A"] == pytest.approx(3 / 0.018)
    assert tp["B"] == pytest.approx((9 / 7) / 0.018)
    batched = closed_loop("A", [(0, 10), (10, 20)], batch=16)
    assert throughput(batched, unit="inputs")["A"] == pytest.approx(2 * 16 / 0.020)


def test_standalone_as_function_and_missing_name():
    assert stp(SHARED, lambda r: SINGLE[r.model]) == pytest.approx(65 / 42)
    with pytest.raises(ConfigError, match="no standalone time for tenant 'B'"):
        stp(SHARED, {"A": 5 * MS})


INTERVALS = [
    Interval("PE", "A", 0, "l0", 0.0, 2.0),
    Interval("PE", "B", 0, "l0", 1.0, 3.0),  # overlaps the first: union (0, 3)
    Interval("PE", "A", 0, "l1", 5.0, 6.0),
    Interval("DRAM", "A", 0, "l0", 0.0, 4.0),
]


def test_merge_and_busy_time_with_overlaps():
    assert merge_intervals([(0, 2), (1, 3), (5, 6)]) == [(0, 3), (5, 6)]
    assert busy_time(INTERVALS, "PE") == pytest.approx(4.0)  # 3 + 1, not 2 + 2 + 1
    assert busy_time(INTERVALS, "PE", window=(2.0, 5.5)) == pytest.approx(1.5)  # (2,3) + (5,5.5)
    assert busy_time(INTERVALS, lambda iv: iv.tenant == "A") == pytest.approx(5.0)  # (0,4)+(5,6)


def test_utilization_and_lower_bound():
    # Makespan 6: PE busy 4 -> 2/3, DRAM busy 4 -> 2/3; bound max(4, 4) = 4; ratio 6/4.
    assert utilization(INTERVALS, "PE") == pytest.approx(4 / 6)
    assert utilization(INTERVALS, "DRAM") == pytest.approx(4 / 6)
    assert utilization(INTERVALS, "PE", window=(0.0, 3.0)) == pytest.approx(1.0)
    assert lower_bound(INTERVALS) == pytest.approx(4.0)
    assert makespan_ratio(INTERVALS) == pytest.approx(1.5)


def test_percentiles_interpolate_linearly():
    # Sorted 1..5: p95 sits at rank 0.95 * 4 = 3.8 -> 4 + 0.8 * (5 - 4) = 4.8; p50 = 3.
    recs = [RequestRecord("A", "A", i, 0.0, 0.0, float(v)) for i, v in enumerate([5, 1, 4, 2, 3])]
    assert percentile(recs, 95) == pytest.approx(4.8)
    assert tail_latency(recs) == pytest.approx({"p50": 3.0, "p95": 4.8, "p99": 4.96})
    assert percentile(recs, 100, key=lambda r: 2 * r.finish_s) == pytest.approx(10.0)
    with pytest.raises(ConfigError):
        percentile(recs, 101)


def test_sla_violation_rate():
    # Latencies 6, 6, 6 (A, 5 ms alone) and 14, 14 (B, 10 ms alone). Slack 1.3:
    # A's target 6.5 ms (met), B's 13 ms (missed twice) -> 2/5.
    assert sla_violation_rate(SHARED, slack=1.3, standalone=SINGLE) == pytest.approx(0.4)
    with_deadlines = [
        RequestRecord("A", "A", 0, 0.0, 0.0, 1.0, deadline_s=0.5),
        RequestRecord("A", "A", 1, 0.0, 0.0, 1.0, deadline_s=2.0),
        RequestRecord("A", "A", 2, 0.0, 0.0, 1.0),  # no deadline: left out
    ]
    assert sla_violation_rate(with_deadlines) == pytest.approx(0.5)


def test_summarize_accepts_names_and_functions():
    class Run:
        intervals = []  # the whole-run window then ends at the last request: 28 ms
        requests = SHARED

    def tenants(run, standalone, window):
        return len({r.tenant for r in run.requests})

    out = summarize(Run, SINGLE, ["stp", tenants], window=None)
    assert out == pytest.approx({"stp": 1.25, "tenants": 2})
    with pytest.raises(UnknownNameError, match="choose one of: .*antt"):
        summarize(Run, SINGLE, ["nope"])


def test_empty_window_is_a_user_error():
    with pytest.raises(ConfigError, match="empty"):
        stp([], SINGLE)


@pytest.mark.parametrize(
    "module", [npuweave.metrics.multitask, npuweave.metrics.occupancy, npuweave.metrics.latency]
)
def test_docstring_examples(module):
    assert doctest.testmod(module).failed == 0
