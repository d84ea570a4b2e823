"""A closed loop's columns: the compiled walk (``IntervalColumns.work``) against NumPy and records.

On random closed-loop runs (fast path, kernels loaded): the per-request totals, reach, first
computation start and last unit end, and the per-resource busy totals of the compiled walk
equal, float for float, those NumPy computes from the merged columns, and the totals and spans
equal what ``IntervalIndex`` finds in the same intervals given as plain records (Python's
``sum`` order, checked bit for bit in ``tests/metrics``).
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuweave.metrics.index import IntervalIndex
from npuweave.schedule import kernel, make_tenant
from npuweave.sim import intervals
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
        pytest.skip("numba is not installed: no compiled walk")
    ts = [make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], 100)
          for k, us in enumerate(inst["tenants"])]
    result = run_tenants(ts, 100, inst["bw"], inst["policy"], inst["requests"], fast=True)
    cols = result.intervals
    assert isinstance(cols, intervals.IntervalColumns)
    assert isinstance(result.requests, RequestColumns)
    walked = cols.work()  # the fast path walked the runs (compiled)
    assert walked.in_order
    fresh = intervals.interval_columns(cols.tenants, cols.units, cols.pe, cols.dram)
    with mock.patch.object(intervals, "loaded", lambda: False):
        numpy = fresh.work()  # merged by the sort, summed by np.bincount
    assert not numpy.in_order and walked.span == numpy.span
    for field in ("total", "lo", "hi", "start_s", "finish_s", "busy"):
        assert hexes(getattr(walked, field)) == hexes(getattr(numpy, field)), field
    records = IntervalIndex.build(tuple(cols))
    indexed = IntervalIndex.build(cols)
    for key, (s, e) in records.groups.items():
        slot = cols.tenants.index(key[0]) * walked.span + key[1]
        assert float(walked.total[slot]).hex() == records.work_total(*key).hex()
        got = cols.request_spans(cols.tenants.index(key[0]), key[1])
        assert np.array_equal(got[0], s) and np.array_equal(got[1], e)
        for t0, t1 in ((0.5, 3.0), (0.0, float(walked.hi[slot]) / 2)):
            assert indexed.work_inside(*key, t0, t1) == records.work_inside(*key, t0, t1)
    assert result.pe_busy_s == walked.busy[0] and result.dram_busy_s == walked.busy[1]


tracked_runs = st.fixed_dictionaries({
    "tenants": st.lists(st.lists(unit, min_size=1, max_size=6), min_size=1, max_size=3),
    "bw": st.floats(1.0, 50.0),
    "failsafe": st.booleans(),
    "requests": st.integers(1, 5),
    "window_s": st.one_of(st.none(), st.floats(0.5, 30.0)),
    "cap": st.sampled_from([1, 3, None]),
})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tracked_runs)
def test_kernel_tracked_parts_and_totals_equal_the_replay_and_the_walk(inst):
    """Layerweaver's compiled kernel with ``tracked`` (the fast path's own pass) records the
    same DMA parts as ``replay_parts`` and the same ``RunWork`` as the walk over the runs,
    float for float, whatever the starting capacity (1 and 3: every tracked array grows);
    the whole result equals the engine's."""
    if not kernel.load():
        pytest.skip("numba is not installed: no compiled kernel")
    from importlib import import_module

    from npuweave.schedule import fetchparts
    from npuweave.sim import fastloop

    plan = import_module("npuweave.schedule.plan")  # the module, not the function
    from npuweave.sim.arrival_processes import ClosedLoop

    ts = [make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], 100)
          for k, us in enumerate(inst["tenants"])]
    loop = ClosedLoop(inst["requests"], inst["window_s"])
    opts = {"failsafe": inst["failsafe"], "reading": "npuweave"}
    if fastloop.fast_path_refusal(ts, inst["bw"], kernel_policy(opts), loop, 20_000):
        return  # a tenant without work never closes a time window
    cap = inst["cap"]
    real = fastloop._decisions
    with mock.patch.object(plan, "KERNEL_LOADED_MIN_DECISIONS", 0), \
            mock.patch.object(fastloop, "_decisions",
                              lambda *a: real(*a) if cap is None else cap):
        fast = run_tenants(ts, 100, inst["bw"], "layerweaver", inst["requests"],
                           inst["window_s"], fast=True, **opts)
    assert "compiled Layerweaver kernel" in fast.path
    cols = fast.intervals
    assert cols.work_given is not None  # recorded by the kernel, not walked
    t, r, i, cs, ce = cols.pe
    policy = kernel_policy(opts)
    board = fastloop.Board(ts, 100, inst["bw"])
    fastloop.start_streams(board, policy, loop.requests, loop.window_s)
    d = plan.plan_arrays(policy, board, loop.requests, loop.window_s, "kernel")
    off, flat = board.tables.flat()[:2]
    parts = fetchparts.replay_parts(*d[:3], off, flat, *d[3:5], d[6], board.buf, board.bw)
    assert parts is not None
    for got, want in zip(cols.dram, parts[:5]):
        assert got.tolist() == want.tolist()
    walked = intervals.interval_columns(cols.tenants, cols.units, cols.pe, parts[:5]).work()
    given_work = cols.work()
    assert given_work.span == walked.span and given_work.in_order == walked.in_order
    for field in ("total", "lo", "hi", "start_s", "finish_s", "busy"):
        assert hexes(getattr(given_work, field)) == hexes(getattr(walked, field)), field
    for k in range(len(ts)):  # request spans read from the parts alone
        for q in range(given_work.span):
            want_s = cols.request_spans(k, q)  # before the DRAM run is gathered
            fresh = intervals.interval_columns(cols.tenants, cols.units, cols.pe, parts[:5])
            got_s = fresh.request_spans(k, q)
            assert hexes(want_s[0]) == hexes(got_s[0]) and hexes(want_s[1]) == hexes(got_s[1])
    engine = run_tenants(ts, 100, inst["bw"], "layerweaver", inst["requests"],
                         inst["window_s"], fast=False, **opts)
    assert fast == engine
    assert (fast.pe_busy_s, fast.dram_busy_s) == (engine.pe_busy_s, engine.dram_busy_s)
    assert [(x.start_s, x.finish_s) for x in fast.requests] == [
        (x.start_s, x.finish_s) for x in engine.requests]


def kernel_policy(opts):
    from npuweave.schedule import get_scheduler

    return get_scheduler("layerweaver", **opts)
