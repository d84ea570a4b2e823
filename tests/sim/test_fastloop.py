"""The closed-loop fast path (``npuweave.sim.fastloop``) against the engine it stands in for.

The main property: on random instances (1-3 tenants of 1-6 units, sizes up to 1.5 buffers so
fetches split into parts and units are tiled, zero bytes and zero seconds included; every
layer-wise policy that only selects; counted requests or a time window) the fast path's
``SimResult`` equals the engine's in every field, floats compared bit for bit. The metrics of
both, and of the same intervals given as plain records, are equal too.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError
from npuweave.metrics import summarize
from npuweave.metrics.index import IntervalIndex
from npuweave.schedule import get_scheduler, make_tenant
from npuweave.sim import fastloop
from npuweave.sim.arrival_processes import ClosedLoop
from npuweave.sim.events import EventBudgetError
from npuweave.sim.intervals import IntervalColumns
from npuweave.sim.result import RequestColumns
from npuweave.sim.streams import run_tenants

BUF = 100
EXAMPLES = settings(max_examples=1500, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
SEQ = get_scheduler("sequential")
SELECTING = ["aimt", "aimt-fetchahead", "compute-only", "fair", "layerweaver", "memory-only",
             "random", "sequential"]

unit = st.tuples(st.one_of(st.just(0), st.integers(1, 150)),
                 st.one_of(st.just(0.0), st.floats(0.01, 5.0)))
instance = st.fixed_dictionaries({
    "tenants": st.lists(st.lists(unit, min_size=1, max_size=6), min_size=1, max_size=3),
    "bw": st.floats(1.0, 50.0),
    "policy": st.sampled_from(SELECTING),
    "requests": st.integers(1, 4),
    "window_s": st.one_of(st.none(), st.floats(0.5, 30.0)),
    "opts": st.one_of(st.just({}), st.fixed_dictionaries({"failsafe": st.booleans(),
                                                          "reading": st.sampled_from(
                                                              ["printed", "npuweave"])})),
    "seed": st.integers(0, 3),
})


def tenants(inst):
    return [make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], BUF)
            for k, us in enumerate(inst["tenants"])]


def both(inst):
    ts = tenants(inst)
    # a tenant with no work never lets a time window close: the engine's event budget stops
    # such a run (after minutes), and the fast path leaves it to the engine
    loop = ClosedLoop(inst["requests"], inst["window_s"])
    assume(fastloop.fast_path_refusal(ts, inst["bw"], SEQ, loop, 200_000) is None)
    opts = inst["opts"] if inst["policy"] == "layerweaver" else {}
    args = (ts, BUF, inst["bw"], inst["policy"], inst["requests"], inst["window_s"],
            inst["seed"])
    return (run_tenants(*args, fast=True, **opts), run_tenants(*args, fast=False, **opts))


def exact(x):
    """A value with every float replaced by its hex form (tells -0.0 from 0.0, no tolerance)."""
    if isinstance(x, float):
        return x.hex()
    if isinstance(x, (IntervalColumns, RequestColumns)):
        return exact(tuple(x))
    if isinstance(x, dict):
        return tuple((k, exact(v)) for k, v in x.items())
    if isinstance(x, (tuple, list)):
        return tuple(exact(v) for v in x)
    if hasattr(x, "__dataclass_fields__"):
        return (type(x).__name__, *(exact(getattr(x, f)) for f in x.__dataclass_fields__))
    return x


@EXAMPLES
@given(instance)
def test_fast_path_result_equals_the_engine_field_by_field(inst):
    fast, engine = both(inst)
    assert fast == engine
    for name in engine.__dataclass_fields__:
        if name != "path":  # which path ran: the one field that must differ
            assert exact(getattr(fast, name)) == exact(getattr(engine, name)), name
    assert fast.path.startswith("closed-loop fast path") and engine.path.startswith("engine")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance)
def test_metrics_of_columns_equal_metrics_of_records(inst):
    fast, engine = both(inst)
    assume(fast.requests and fast.makespan_s > 0)  # else no window to measure over
    names = ["stp", "antt", "fairness", "pe_utilization", "dram_utilization", "throughput"]
    single = {t: 1.0 + k for k, t in enumerate(fast.tenants)}

    class Plain:  # the same run with its intervals as a tuple of records
        requests, intervals = engine.requests, tuple(engine.intervals)

    want = summarize(Plain, single, names, window=None)
    assert exact(summarize(fast, single, names, window=None)) == exact(want)
    cols, plain = IntervalIndex.build(fast.intervals), IntervalIndex.build(Plain.intervals)
    assert list(cols.groups) == list(plain.groups)
    assert exact(cols.totals) == exact(plain.totals)
    for key, (s, e) in plain.groups.items():
        assert np.array_equal(cols.groups[key][0], s) and np.array_equal(cols.groups[key][1], e)
        assert cols.work_inside(*key, 0.5, 3.0) == plain.work_inside(*key, 0.5, 3.0)


def test_split_fetch_worked_by_hand():
    # 10-byte buffer at 10 B/s, one request of two units under "sequential":
    # u0 (6 B, 2 s): fetch 0-0.6, compute 0.6-2.6.
    # u1 (8 B, 1 s): 4 B free -> part 0.6-1.0; the other 4 B wait for u0's 6 B, freed at
    # 2.6 -> part 2.6-3.0; compute 3.0-4.0.
    a = make_tenant("a", [2.0, 1.0], [6, 8], 10)
    r = run_tenants([a], 10, 10.0, "sequential", 1, fast=True)
    got = [(iv.resource, iv.unit, iv.start_s, iv.end_s) for iv in r.intervals]
    want = [("DRAM", "L0", 0.0, 0.6), ("DRAM", "L1", 0.6, 1.0), ("PE", "L0", 0.6, 2.6),
            ("DRAM", "L1", 2.6, 3.0), ("PE", "L1", 3.0, 4.0)]
    assert [g[:2] for g in got] == [w[:2] for w in want]
    assert [g[2:] for g in got] == [pytest.approx(w[2:]) for w in want]
    assert r.dram_busy_s == pytest.approx(1.4) and r.pe_busy_s == pytest.approx(3.0)
    assert r.makespan_s == pytest.approx(4.0)
    rec = r.requests[0]
    assert (rec.arrival_s, rec.start_s, rec.finish_s) == pytest.approx((0.0, 0.6, 4.0))


def test_forcing_either_path(monkeypatch):
    a = make_tenant("a", [2.0], [10], 10)
    calls = []
    real = fastloop.run_fast

    def spy(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr("npuweave.sim.streams.run_fast", spy)
    run_tenants([a], 10, 10.0, "sequential", 2)
    assert calls == [1]  # auto: valid here
    run_tenants([a], 10, 10.0, "sequential", 2, fast=False)
    monkeypatch.setenv(fastloop.ENV, "engine")
    run_tenants([a], 10, 10.0, "sequential", 2)
    assert calls == [1]
    monkeypatch.setenv(fastloop.ENV, "fast")
    run_tenants([a], 10, 10.0, "sequential", 2)
    assert calls == [1, 1]
    monkeypatch.setenv(fastloop.ENV, "quick")
    with pytest.raises(ConfigError, match="NPUWEAVE_CLOSED_LOOP='quick'.*auto, fast, engine"):
        run_tenants([a], 10, 10.0, "sequential", 2)


@pytest.mark.parametrize("policy, why", [("fcfs", "task-level"),
                                         ("layerweaver-plus", "decides with the clock")])
def test_fast_path_refuses_policies_that_need_the_engine(policy, why):
    a = make_tenant("a", [2.0], [10], 10)
    with pytest.raises(ConfigError, match=f"fast path cannot run this: policy {policy} .*{why}"):
        run_tenants([a], 10, 10.0, policy, 2, fast=True)
    assert run_tenants([a], 10, 10.0, policy, 2).makespan_s == pytest.approx(6.0)


def test_event_budget_still_enforced_by_the_engine():
    a = make_tenant("a", [2.0] * 10, [10] * 10, 10)
    why = fastloop.fast_path_refusal([a], 10.0, SEQ, ClosedLoop(50), 1000)
    assert "event budget (1000)" in why
    with pytest.raises(EventBudgetError):
        run_tenants([a], 10, 10.0, "sequential", 50, max_events=1000)


def test_interval_columns_behave_as_a_tuple_of_records():
    a = make_tenant("a", [2.0, 1.0], [6, 8], 10)
    r = run_tenants([a], 10, 10.0, "sequential", 2, fast=True)
    cols = r.intervals
    assert isinstance(cols, IntervalColumns)
    rows = tuple(cols)
    assert cols == rows and len(cols) == len(rows) > 5 and cols[-1] == rows[-1]
    assert cols[1:3] == rows[1:3] and hash(cols) == hash(rows)
    assert pickle.loads(pickle.dumps(r)) == r
    assert cols != rows[:-1]


def test_compiled_fetch_parts_equal_plain_python():
    from npuweave.schedule import fetchparts, jit, kernel

    if not kernel.available():
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(5)
    a = make_tenant("a", list(rng.uniform(0, 3, 40)), list(rng.integers(0, 150, 40)), 100)
    b = make_tenant("b", list(rng.uniform(0, 1, 30)), list(rng.integers(0, 150, 30)), 100)
    plain = run_tenants([a, b], 100, 13.0, "fair", 5, fast=True)  # plain Python parts
    kernel.load()
    assert fetchparts._parts is not jit.plain("npuweave.schedule.fetchparts._parts")
    compiled = run_tenants([a, b], 100, 13.0, "fair", 5, fast=True)
    assert exact(compiled) == exact(plain)
    assert compiled == run_tenants([a, b], 100, 13.0, "fair", 5, fast=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 2), st.sampled_from([0.0, 1.0, 2.0]),
                          st.sampled_from([0.0, 1.0, 2.0, 3.0])), max_size=12), st.booleans())
def test_interval_columns_order_rows_as_the_engine_sorts_them(rows, each_in_order):
    # in order or not (the compiled merge or the lexsort path), rows come out as the engine's
    # ``sort(key=(start, resource != "DRAM", end))`` of PE rows then DRAM rows
    from unittest import mock

    from npuweave.schedule import kernel
    from npuweave.sim import intervals
    from npuweave.sim.records import Interval

    rows = [(is_pe, t, s, s + d) for is_pe, t, s, d in rows]
    if each_in_order:  # as the engine runs each resource: the merge applies
        rows.sort(key=lambda r: (r[2], r[3]))
    pe = [r for r in rows if r[0]]
    dram = [r for r in rows if not r[0]]

    def arrays(part):
        return (np.array([r[1] for r in part], np.int64), np.zeros(len(part), np.int64),
                np.zeros(len(part), np.int64), np.array([r[2] for r in part], np.float64),
                np.array([r[3] for r in part], np.float64))

    tenants, units = ["a", "b", "c"], [["x"]] * 3
    want = [Interval("PE" if p else "DRAM", tenants[t], 0, "x", s, e) for p, t, s, e in pe + dram]
    want.sort(key=lambda iv: (iv.start_s, iv.resource != "DRAM", iv.end_s))
    kernel.load()  # the compiled merge where numba is installed
    assert list(intervals.interval_columns(tenants, units, arrays(pe), arrays(dram))) == want
    with mock.patch.object(intervals, "loaded", lambda: False):  # the sort alone
        assert list(intervals.interval_columns(tenants, units, arrays(pe),
                                               arrays(dram))) == want
