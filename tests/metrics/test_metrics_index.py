"""The indexed closed-loop metrics give exactly (``==``) the numbers of the record-by-record code.

``legacy_metrics`` is a frozen copy of the metrics before ``IntervalIndex``. Both run on random
hand-built runs (hypothesis) and on random simulated closed-loop runs; every metric, in every
window form, must agree to the last bit.
"""

from __future__ import annotations

import legacy_metrics.common as old_common
import legacy_metrics.multitask as old_mt
import legacy_metrics.occupancy as old_occ
import legacy_metrics.summary as old_summary
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.cost import LayerCost
from npuweave.errors import ConfigError
from npuweave.hardware import NPU
from npuweave.metrics import (
    antt,
    busy_time,
    fairness,
    makespan,
    makespan_ratio,
    merge_intervals,
    progress,
    resolve_window,
    stp,
    stp_per_tenant,
    summarize,
    summary,
    throughput,
    utilization,
)
from npuweave.metrics import multitask as mt
from npuweave.metrics.index import IntervalIndex, as_index
from npuweave.sim import run_streams
from npuweave.sim.arrival_processes import ClosedLoop
from npuweave.sim.records import Interval, RequestRecord

small = st.floats(0.0, 5.0)


@st.composite
def runs(draw, most=5):
    """1-3 tenants of closed-loop requests, each with PE/DRAM intervals around its life."""
    n = draw(st.integers(1, 3))
    requests, intervals, single = [], [], {}
    for i in range(n):
        name = f"t{i}"
        single[name] = draw(st.floats(0.1, 5.0))
        t = 0.0
        for k in range(draw(st.integers(1, most))):
            start = t + draw(small)
            finish = start + draw(st.floats(0.0, 6.0))
            requests.append(RequestRecord(name, name, k, t, start, finish))
            for _ in range(draw(st.integers(0, 4))):  # some requests have no intervals
                a = draw(st.floats(start - 1.0, finish + 1.0))
                b = a + draw(st.sampled_from([0.0, 0.25, 1.0, 3.0]))
                intervals.append(Interval(draw(st.sampled_from(["PE", "DRAM"])), name, k,
                                          "u", a, b))
            t = finish
    intervals = draw(st.permutations(intervals))
    return tuple(requests), tuple(intervals), single


def same(new, old):
    """Run both; they must return equal values or raise the same kind of error."""
    try:
        expected = old()
    except ConfigError:
        with pytest.raises(ConfigError):
            new()
        return
    got = new()
    assert exact(got) == exact(expected), (got, expected)


def exact(x):
    """``x`` with every float as its hex form (NaN equals NaN, -0.0 differs from 0.0)."""
    if isinstance(x, float):
        return x.hex()
    if isinstance(x, dict):
        return {k: exact(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(exact(v) for v in x)
    return x


WINDOWS = (None, "common", (0.5, 4.0), (2.0, 50.0))


@settings(max_examples=400, deadline=None)
@given(run=runs())
def test_indexed_metrics_equal_the_record_metrics(run):
    requests, intervals, single = run
    index = IntervalIndex.build(intervals)
    for ivs in (intervals, index):
        for window in WINDOWS:
            same(lambda ivs=ivs, w=window: stp(requests, single, w, ivs),
                 lambda w=window: old_mt.stp(requests, single, w, intervals))
            same(lambda ivs=ivs, w=window: stp_per_tenant(requests, single, w, ivs),
                 lambda w=window: old_mt.stp_per_tenant(requests, single, w, intervals))
            same(lambda ivs=ivs, w=window: fairness(requests, single, {"t0": 3.0}, w, ["zz"], ivs),
                 lambda w=window: old_mt.fairness(requests, single, {"t0": 3.0}, w, ["zz"],
                                                  intervals))
            same(lambda ivs=ivs, w=window: throughput(requests, w, "inputs", ivs),
                 lambda w=window: old_mt.throughput(requests, w, "inputs", intervals))
            same(lambda ivs=ivs, w=window: resolve_window(w, requests, ivs),
                 lambda w=window: old_common.resolve_window(w, requests, intervals))
            for res in ("PE", "DRAM"):
                same(lambda ivs=ivs, w=window, r=res: utilization(ivs, r, w, requests),
                     lambda w=window, r=res: old_occ.utilization(intervals, r, w, requests))
        same(lambda ivs=ivs: progress(requests, 1.0, 3.0, ivs),
             lambda: old_mt.progress(requests, 1.0, 3.0, intervals))
        same(lambda ivs=ivs: busy_time(ivs, "PE", (1.0, 2.5)),
             lambda: old_occ.busy_time(intervals, "PE", (1.0, 2.5)))
        same(lambda ivs=ivs: busy_time(ivs, "DRAM"), lambda: old_occ.busy_time(intervals, "DRAM"))
        same(lambda ivs=ivs: makespan(ivs), lambda: old_occ.makespan(intervals))
        same(lambda ivs=ivs: makespan_ratio(ivs), lambda: old_occ.makespan_ratio(intervals))


class Columns(tuple):
    """The same records, also offering ``columns()`` as ``npuweave.sim.RequestColumns`` does
    (the metrics then read arrays and look a tenant's standalone time up once)."""

    def columns(self):
        names = list(dict.fromkeys(r.tenant for r in self))
        return (np.array([names.index(r.tenant) for r in self], np.int64), tuple(names),
                np.array([r.index for r in self], np.int64),
                *(np.array([getattr(r, f) for r in self], np.float64)
                  for f in ("arrival_s", "start_s", "finish_s")))


@settings(max_examples=300, deadline=None)
@given(run=runs(most=14), window=st.sampled_from((*WINDOWS, ClosedLoop.common_window)),
       by=st.sampled_from(["tenant", "request"]))
def test_metrics_of_request_columns_equal_the_record_metrics(run, window, by):
    # every tenant's requests are the same work here (one model, batch 1), as in a closed
    # loop; up to 14 per tenant, past NumPy's pairwise blocks (sums must stay sequential);
    # the closed loop's own window (a function of the records; the frozen copy predates
    # window functions) is checked against today's metrics on the plain records
    requests, intervals, single = run
    cols = Columns(requests)
    ref = (old_mt, old_summary) if not callable(window) else (mt, summary)
    same(lambda: stp(cols, single, window, intervals),
         lambda: ref[0].stp(requests, single, window, intervals))
    same(lambda: fairness(cols, single, {"t1": 2.0}, window, ["zz"], intervals),
         lambda: ref[0].fairness(requests, single, {"t1": 2.0}, window, ["zz"], intervals))
    same(lambda: throughput(cols, window, "inputs", intervals),
         lambda: ref[0].throughput(requests, window, "inputs", intervals))
    same(lambda: antt(cols, single, window, by), lambda: ref[0].antt(requests, single, window, by))
    same(lambda: summarize(Run(cols, intervals), single, ["stp", "antt", "fairness"], window),
         lambda: ref[1].summarize(Run(requests, intervals), single, ["stp", "antt", "fairness"],
                                  window))


class Run:
    def __init__(self, requests, intervals):
        self.requests, self.intervals = requests, intervals


@settings(max_examples=200, deadline=None)
@given(run=runs(), window=st.sampled_from(WINDOWS))
def test_summarize_equals_the_record_summarize(run, window):
    requests, intervals, single = run
    names = [m for m in old_summary.METRICS if m != "latency"] + ["latency"]
    same(lambda: summarize(Run(requests, intervals), single, names, window),
         lambda: old_summary.summarize(Run(requests, intervals), single, names, window))


TOY = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1.0, dram_bw=10.0, weight_buffer=100,
          act_buffer=1)
layer = st.builds(lambda c, w: LayerCost(compute_s=c, weight_bytes=w),
                  st.floats(0.01, 5.0), st.integers(0, 90))


@settings(max_examples=40, deadline=None)
@given(a=st.lists(layer, min_size=1, max_size=6), b=st.lists(layer, min_size=1, max_size=6),
       scheduler=st.sampled_from(["layerweaver", "sequential", "fair", "aimt"]),
       requests=st.integers(1, 4))
def test_simulated_runs_give_identical_summaries(a, b, scheduler, requests):
    result = run_streams([("a", a), ("b", b)], TOY, scheduler=scheduler, requests=requests)
    single = {"a": 1.5, "b": 0.7}
    names = list(old_summary.METRICS)
    for window in (None, "common"):
        same(lambda w=window: summarize(result, single, names, w),
             lambda w=window: old_summary.summarize(result, single, names, w))


def test_index_groups_and_merges():
    ivs = [Interval("PE", "a", 0, "u", 0.0, 2.0), Interval("DRAM", "a", 0, "u", 1.0, 1.5),
           Interval("PE", "b", 3, "u", 1.0, 4.0), Interval("PE", "a", 1, "u", 5.0, 6.0),
           Interval("PE", "a", 0, "u", 7.0, 7.0)]
    ix = as_index(ivs)
    assert as_index(ix) is ix and len(ix) == 5 and list(ix) == ivs
    assert ix.work_total("a", 0) == 2.5 and ix.work_total("zz", 0) == 0.0
    assert ix.work_inside("a", 0, 1.0, 1.25) == 0.5  # 0.25 of PE and 0.25 of DRAM
    starts, ends = ix.merged("PE")
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == \
        merge_intervals([(0.0, 2.0), (1.0, 4.0), (5.0, 6.0), (7.0, 7.0)])
    assert ix.max_end == 7.0 and IntervalIndex.build([]).max_end == 0.0
    with pytest.raises(ConfigError, match="ends before it starts"):
        as_index([Interval("PE", "a", 0, "u", 2.0, 1.0)]).merged("PE")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.floats(0.0, 1e6, allow_subnormal=True), max_size=40), min_size=1,
                max_size=20), st.randoms(use_true_random=False))
def test_request_totals_add_left_to_right_as_python_sum(segments, rnd):
    # the per-request totals: each the very float of ``sum(list)`` of its durations in
    # interval order (Python's sequential addition, not NumPy's pairwise), requests of any
    # length, interleaved in any order
    rows = [g for g, seg in enumerate(segments) for _ in seg]
    rnd.shuffle(rows)  # the requests interleaved; each takes its own values in order
    seen: dict[int, int] = {}
    ivs = []
    for g in rows:
        k = seen[g] = seen.get(g, -1) + 1
        ivs.append(Interval("PE", f"t{g % 3}", g, "u", 0.0, segments[g][k]))
    ix = IntervalIndex.build(ivs)
    for g, seg in enumerate(segments):
        assert ix.work_total(f"t{g % 3}", g).hex() == float(sum(seg)).hex()
