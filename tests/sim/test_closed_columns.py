"""A closed loop's columns: the compiled passes (``IntervalColumns.work``, ``request_totals``)
against NumPy and records.

On random closed-loop runs (fast path, kernels loaded): each request's reach (some busy time,
earliest start, latest end), first computation start and last unit end, and the per-resource
busy totals equal, float for float, those NumPy computes, both as the compiled replay folds
them while it moves the DMA parts and as the compiled pass over each finished run reads them;
the per-request totals of the compiled merge equal NumPy's over the merged columns; and the
totals and spans equal what ``IntervalIndex`` finds in the same intervals given as plain
records (Python's ``sum`` order, checked bit for bit in ``tests/metrics``).
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuweave.metrics.index import IntervalIndex
from npuweave.schedule import kernel, make_tenant
from npuweave.sim import intervals, runwork
from npuweave.sim.result import RequestColumns
from npuweave.sim.streams import run_tenants

unit = st.tuples(st.one_of(st.just(0), st.integers(1, 150)),
                 st.one_of(st.just(0.0), st.floats(0.01, 5.0)))
runs = st.fixed_dictionaries({
    "tenants": st.lists(st.lists(unit, min_size=1, max_size=6), min_size=1, max_size=3),
    "bw": st.floats(1.0, 50.0),
    "policy": st.sampled_from(["layerweaver", "sequential", "fair", "aimt"]),
    "requests": st.integers(1, 5),
})


def hexes(a):
    return [float(x).hex() for x in np.asarray(a, np.float64).tolist()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs)
def test_compiled_walk_equals_numpy_and_the_records(inst):
    if not kernel.load():
        pytest.skip("numba is not installed: no compiled passes")
    ts = [make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], 100)
          for k, us in enumerate(inst["tenants"])]
    result = run_tenants(ts, 100, inst["bw"], inst["policy"], inst["requests"], fast=True)
    cols = result.intervals
    assert isinstance(cols, intervals.IntervalColumns)
    assert isinstance(result.requests, RequestColumns)
    assert cols.dram.reach is not None  # folded by the compiled replay, in its own pass
    walked = cols.work()  # ... which the fast path reads instead of the runs
    totals = cols.request_totals()  # the compiled merge, summed by np.bincount
    assert walked.in_order
    bare = runwork.Parts(*cols.dram[:3])  # the same parts without the replay's fold
    passes = intervals.interval_columns(cols.tenants, cols.units, cols.pe, bare).work()
    fresh = intervals.interval_columns(cols.tenants, cols.units, cols.pe, bare)
    with mock.patch.object(runwork, "loaded", lambda: False), \
            mock.patch.object(intervals, "loaded", lambda: False):
        numpy = fresh.work()  # NumPy over each run
        numpy_totals = fresh.request_totals()  # merged by the sort, summed by np.bincount
    assert numpy.in_order and walked.span == numpy.span == passes.span
    for field in ("lo", "hi", "start_s", "finish_s", "busy"):
        want = hexes(getattr(numpy, field))
        assert hexes(getattr(walked, field)) == want == hexes(getattr(passes, field)), field
    assert hexes(totals) == hexes(numpy_totals)
    assert (walked.worked.tolist() == numpy.worked.tolist() == passes.worked.tolist()
            == (totals > 0).tolist())
    records = IntervalIndex.build(tuple(cols))
    indexed = IntervalIndex.build(cols)
    # the DRAM run as five columns (as the engine's result gives it) instead of ``Parts``
    five = IntervalIndex.build(intervals.interval_columns(cols.tenants, cols.units, cols.pe,
                                                          cols.dram_run()))
    for key, (s, e) in records.groups.items():
        slot = cols.tenants.index(key[0]) * walked.span + key[1]
        assert float(totals[slot]).hex() == records.work_total(*key).hex()
        got = cols.request_spans(cols.tenants.index(key[0]), key[1])
        assert np.array_equal(got[0], s) and np.array_equal(got[1], e)
        for t0, t1 in ((0.5, 3.0), (0.0, float(walked.hi[slot]) / 2)):
            want = records.work_inside(*key, t0, t1), records.work_total(*key)
            for index in (indexed, five):
                inside, total = index.work_split(*key, t0, t1)
                assert inside.hex() == want[0].hex() and total.hex() == want[1].hex()
    assert result.pe_busy_s == walked.busy[0] and result.dram_busy_s == walked.busy[1]
