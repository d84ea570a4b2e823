"""The event loop and the NPU engine against hand-worked timelines (buffer 100 B, 10 B/s)."""

from __future__ import annotations

import pytest

from npuweave.schedule import make_tenant, plan
from npuweave.sim.engine import Engine, Kind, Unit
from npuweave.sim.events import EventLoop
from npuweave.sim.streams import run_tenants


def test_event_loop_orders_by_time_then_priority_then_insertion():
    loop, log = EventLoop(), []

    def ev(name):
        log.append((name, loop.now))

    loop.schedule(1.0, ev, "late-prio", prio=2)
    loop.schedule(1.0, ev, "first", prio=0)
    loop.schedule(1.0, ev, "second", prio=0)
    loop.schedule(0.5, ev, "early")
    loop.run()
    assert log == [("early", 0.5), ("first", 1.0), ("second", 1.0), ("late-prio", 1.0)]


def test_event_loop_run_until_and_no_past_events():
    loop, log = EventLoop(), []
    loop.schedule(1.0, log.append, 1)
    loop.schedule(3.0, log.append, 3)
    loop.run(until=2.0)
    assert log == [1] and loop.now == 2.0
    with pytest.raises(ValueError):
        loop.schedule(1.5, log.append, 0)


class _List:
    """A source from ``(tenant, request, unit, weight bytes, compute s)`` rows: a weight LOAD
    (when bytes > 0), then the COMPUTE that frees them."""

    def __init__(self, rows):
        self.jobs = []
        for t, r, i, nbytes, comp in rows:
            if nbytes:
                self.jobs.append((Unit(Kind.LOAD, t, i, nbytes, nbytes), r))
            self.jobs.append((Unit(Kind.COMPUTE, t, i, 0, nbytes, comp), r))

    def next(self, now):
        return self.jobs.pop(0) if self.jobs else None


def test_engine_fetches_in_parts_as_computations_free_space():
    # u1 (60 B, 4 s), u2 (30 B, 10 s), u3 (80 B, 1 s), in this order:
    #   DRAM u1 0-6; PE u1 6-10
    #   DRAM u2 6-9 (40 B free); PE u2 10-20
    #   DRAM u3 9-10 (10 B free), 10-16 (u1's 60 B, freed at 10), stall, 20-21 (10 B of u2's)
    #   PE u3 21-22
    src = _List([(0, 0, 0, 60, 4.0), (0, 0, 1, 30, 10.0), (0, 0, 2, 80, 1.0)])
    e = Engine(100, 10.0, src)
    e.run()
    assert [(u.index, s, t) for u, _, s, t in e.pe_log] == [(0, 6.0, 10.0), (1, 10.0, 20.0),
                                                             (2, 21.0, 22.0)]
    assert [(u.index, s, t, b) for u, _, s, t, b in e.dram_log] == [
        (0, 0.0, 6.0, 60), (1, 6.0, 9.0, 30), (2, 9.0, 10.0, 10), (2, 10.0, 16.0, 60),
        (2, 20.0, 21.0, 10)]


def test_engine_zero_byte_and_zero_time_units():
    # a (0 B, 1 s): no fetch, computes 0-1; b (100 B, 0 s): fetch 0-10, "computes" at 10;
    # c (100 B, 1 s): needs b's space, freed at 10: fetch 10-20, compute 20-21
    src = _List([(0, 0, 0, 0, 1.0), (0, 0, 1, 100, 0.0), (0, 0, 2, 100, 1.0)])
    e = Engine(100, 10.0, src)
    e.run()
    assert [(s, t) for _, _, s, t in e.pe_log] == [(0.0, 1.0), (10.0, 10.0), (20.0, 21.0)]
    assert [(s, t) for _, _, s, t, _ in e.dram_log] == [(0.0, 10.0), (10.0, 20.0)]


def test_engine_reproduces_layerweaver_prediction_exactly():
    # irregular sizes and times so that partial fetches and stalls occur
    cnn = make_tenant("cnn", [0.7, 3.1, 2.3, 0.2, 4.4, 1.9], [13, 57, 31, 88, 22, 64], 100)
    nlp = make_tenant("nlp", [0.3, 0.11, 0.9, 0.25], [91, 77, 45, 99], 100)
    s = plan("layerweaver", [cnn, nlp], 100, 7.3, requests=4)
    r = run_tenants([cnn, nlp], 100, 7.3, "layerweaver", requests=4, fast=False)
    units = (cnn.units, nlp.units)
    pe = {(iv.tenant, iv.request, iv.unit): (iv.start_s, iv.end_s)
          for iv in r.intervals if iv.resource == "PE"}
    last_part = {}
    for iv in r.intervals:
        if iv.resource == "DRAM":
            last_part[iv.tenant, iv.request, iv.unit] = iv.end_s
    labels = ("cnn", "nlp")
    assert len(pe) == len(s.order) == 4 * (6 + 4)
    for (t, q, i), fe, cs, ce in zip(s.order, s.fetch_end_s, s.compute_start_s,
                                     s.compute_end_s):
        key = (labels[t], q, units[t][i])
        assert pe[key] == (cs, ce)  # exact, not approx
        assert last_part[key] == fe
    assert r.makespan_s == s.makespan_s
