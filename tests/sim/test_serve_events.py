"""Event logs of hand-made two-request runs, one per decision (SimPy-style ``(event, now)``).

Every case: buffer 100 B, DRAM 10 B/s (10 B of weights take 1 s). Model ``a`` has three units
of 4 s compute and 10 B weights (one for the dispatch case); model ``b`` one unit of 1 s and
10 B. Request 0 is ``a``, arriving at 0; request 1 is ``b``, arriving at 0.5 (``LATE``: at 1.5,
while a0 computes 1-5). A checkpoint of ``a`` after any unit stores 20 B (2 s each way). A
checkpoint takes effect when the computation running at the decision ends, a kill at once (the
computation running is cut off); units dispatched but not started are taken back (a fetch in
progress goes on and is discarded). Times are worked by hand in each test.
"""

from __future__ import annotations

import math

import pytest
from serve_helpers import Footprint, Mechanism, Script, dram_log, pe_log, simulate, toy

from npuweave.schedule import get_scheduler
from npuweave.sim.requests import State

A3 = toy("a", [4.0, 4.0, 4.0], [10, 10, 10])
B1 = toy("b", [1.0], [10])
FEET = [Footprint((20, 20, 20), (0, 0, 0)), Footprint((0,), (0,))]
ARR = [(0.0, 0, 1, math.inf), (0.5, 1, 1, math.inf)]
LATE = [(0.0, 0, 1, math.inf), (1.5, 1, 1, math.inf)]


def test_dispatch_fcfs_overlaps_the_next_requests_fetch():
    # a0 fetch 0-1, compute 1-5; a1 fetch 1-2, compute 5-9. a holds the NPU (and could be
    # preempted) until its last computation starts at 5; then b (queued since 0.5) is run:
    # b0 fetch 5-6 overlaps a1, compute 9-10.
    a2 = toy("a", [4.0, 4.0], [10, 10])
    sim = simulate([a2, B1], get_scheduler("fcfs"), ARR)
    assert pe_log(sim) == [("a", 0, 0, 1.0, 5.0), ("a", 0, 1, 5.0, 9.0), ("b", 1, 0, 9.0, 10.0)]
    assert [(k, r, s, e) for k, r, _, s, e, _ in dram_log(sim)] == [
        ("LOAD", 0, 0.0, 1.0), ("LOAD", 0, 1.0, 2.0), ("LOAD", 1, 5.0, 6.0)]
    assert [r.finish_s for r in sim.requests] == [9.0, 10.0]


def test_checkpoint_stores_after_the_layer_and_restores_before_resuming():
    # a0 fetch 0-1, compute 1-5; a1 fetch 1-2. 1.5: preempt a while a0 computes: a1's
    # computation is taken back (its fetch goes on to 2, discarded); the checkpoint STORE of
    # 20 B waits for a0 and runs 5-7; b0 fetch 7-8, compute 8-9. Then a resumes: restore LOAD
    # 20 B 8-10, a1 fetch 10-11, compute 11-15; a2 fetch 11-12, compute 15-19.
    pol = Script(Mechanism.CHECKPOINT)
    sim = simulate([A3, B1], pol, LATE, FEET)
    assert pe_log(sim) == [("a", 0, 0, 1.0, 5.0), ("b", 1, 0, 8.0, 9.0), ("a", 0, 1, 11.0, 15.0),
                           ("a", 0, 2, 15.0, 19.0)]
    assert dram_log(sim) == [("LOAD", 0, 0, 0.0, 1.0, 10), ("LOAD", 0, 1, 1.0, 2.0, 10),
                             ("STORE", 0, -1, 5.0, 7.0, 20),
                             ("LOAD", 1, 0, 7.0, 8.0, 10), ("LOAD", 0, -1, 8.0, 10.0, 20),
                             ("LOAD", 0, 1, 10.0, 11.0, 10), ("LOAD", 0, 2, 11.0, 12.0, 10)]
    a, b = sim.requests
    assert (a.finish_s, b.finish_s) == (19.0, 9.0)
    assert (a.preemptions, a.restarts, a.overhead_s, a.wasted_s) == (1, 0, 4.0, 0.0)
    assert [(t, type(d).__name__) for t, d in pol.log][:2] == [(0.0, "Run"), (1.5, "Preempt")]
    assert sim.effects == [(0, 1.5, 5.0)]  # decided at 1.5, effective when a0 ends
    assert sim.engine.claimed == 0  # the discarded fetch left the buffer


def test_checkpoint_before_any_unit_started_takes_everything_back():
    # 0.5: a0's fetch (0-1) is in flight and nothing of a has started: a0's computation is
    # taken back, the fetch ends at 1 and is discarded; the checkpoint is empty. b0 fetch 1-2,
    # compute 2-3; a restarts at unit 0: fetches 2-3, 3-4, 4-5; computes 3-7, 7-11, 11-15.
    sim = simulate([A3, B1], Script(Mechanism.CHECKPOINT), ARR, FEET)
    assert pe_log(sim) == [("b", 1, 0, 2.0, 3.0), ("a", 0, 0, 3.0, 7.0), ("a", 0, 1, 7.0, 11.0),
                           ("a", 0, 2, 11.0, 15.0)]
    a, b = sim.requests
    assert (a.finish_s, b.finish_s, a.overhead_s, a.preemptions) == (15.0, 3.0, 0.0, 1)
    assert sim.effects == [(0, 0.5, 0.5)]


def test_kill_restarts_from_the_first_unit_and_counts_the_waste():
    # 1.5: kill a, at once (PREMA's KILL): a0 (fetched 0-1, computing since 1) is cut off at
    # 1.5 and its 0.5 s are wasted; a1's computation is taken back (its fetch 1-2 goes on and
    # is discarded); the PE is free from 1.5. b0 fetch 2-3, compute 3-4. a restarts once b's
    # last computation starts (3): fetches 3-4, 4-5, 5-6; computes 4-8, 8-12, 12-16.
    sim = simulate([A3, B1], Script(Mechanism.KILL), LATE, FEET)
    assert pe_log(sim) == [("a", 0, 0, 1.0, 1.5), ("b", 1, 0, 3.0, 4.0), ("a", 0, 0, 4.0, 8.0),
                           ("a", 0, 1, 8.0, 12.0), ("a", 0, 2, 12.0, 16.0)]
    assert [(k, r, i, s, e) for k, r, i, s, e, _ in dram_log(sim)] == [
        ("LOAD", 0, 0, 0.0, 1.0), ("LOAD", 0, 1, 1.0, 2.0), ("LOAD", 1, 0, 2.0, 3.0),
        ("LOAD", 0, 0, 3.0, 4.0), ("LOAD", 0, 1, 4.0, 5.0), ("LOAD", 0, 2, 5.0, 6.0)]
    a, b = sim.requests
    assert (a.finish_s, b.finish_s) == (16.0, 4.0)
    assert (a.preemptions, a.restarts, a.wasted_s, a.state) == (1, 1, 0.5, State.DONE)
    assert sim.engine.pe_busy_s == 12.0 + 1.0 + a.wasted_s  # work conserved
    assert sim.effects == [(0, 1.5, 1.5)]  # effective at the decision
    assert sim.engine.claimed == 0  # the cut and the discarded fetch left the buffer


def test_kill_without_restart_drops_the_request():
    # a0 is cut off at 1.5 (0.5 s wasted); a is reported killed at 1.5; a1's fetch 1-2 is
    # discarded; b0 fetch 2-3, compute 3-4.
    sim = simulate([A3, B1], Script(Mechanism.KILL, restart=False), LATE, FEET)
    assert pe_log(sim) == [("a", 0, 0, 1.0, 1.5), ("b", 1, 0, 3.0, 4.0)]
    a, b = sim.requests
    assert (a.state, a.finish_s, a.wasted_s, b.finish_s) == (State.KILLED, 1.5, 0.5, 4.0)


def test_drain_lets_the_running_request_finish_first():
    # a keeps the NPU: fetches 0-1, 1-2, 2-3; computes 1-5, 5-9, 9-13. b follows once a's
    # last computation starts: fetch 9-10, compute 13-14.
    sim = simulate([A3, B1], Script(Mechanism.DRAIN), ARR, FEET)
    assert pe_log(sim) == [("a", 0, 0, 1.0, 5.0), ("a", 0, 1, 5.0, 9.0), ("a", 0, 2, 9.0, 13.0),
                           ("b", 1, 0, 13.0, 14.0)]
    assert [(r, s, e) for _, r, _, s, e, _ in dram_log(sim)] == [
        (0, 0.0, 1.0), (0, 1.0, 2.0), (0, 2.0, 3.0), (1, 9.0, 10.0)]
    a = sim.requests[0]
    assert (a.preemptions, a.overhead_s, a.finish_s) == (1, 0.0, 13.0)


def test_idle_waits_for_the_wake_up_and_a_second_idle_replaces_the_first():
    # Idle(2) at 0 and again at 0.5 (the first wake-up is cancelled, so exactly one fires at
    # 2). At 2: Run(a): fetch 2-3, compute 3-7; b fetch 3-4, compute 7-8.
    pol = Script(idle_until=2.0)
    sim = simulate([toy("a", [4.0], [10]), B1], pol, ARR)
    assert [t for t, _ in pol.log][:3] == [0.0, 0.5, 2.0]
    assert [t for t, _ in pol.log].count(2.0) == 1
    assert pe_log(sim) == [("a", 0, 0, 3.0, 7.0), ("b", 1, 0, 7.0, 8.0)]


def test_layerwise_request_arriving_after_idle_is_predicted_from_now():
    # The case: a alone 0-3 (fetch 0-1, compute 1-3); b arrives at 5. The predictor is
    # told now = 5: predicted fetch 5-6, compute 6-7, exactly what the engine does.
    a = toy("a", [2.0], [10])
    sim = simulate([a, B1], get_scheduler("sequential"), [(0.0, 0, 1, math.inf),
                                                         (5.0, 1, 1, math.inf)], predict=True)
    assert sim.predicted[1] == (1, 0, 5.0, 5.0, 6.0, 6.0, 7.0)
    assert pe_log(sim) == [("a", 0, 0, 1.0, 3.0), ("b", 1, 0, 6.0, 7.0)]


def test_event_budget_stops_a_run_with_a_clear_message():
    from npuweave.sim.events import EventBudgetError

    with pytest.raises(EventBudgetError, match="budget of 5 events.*max_events"):
        simulate([A3, B1], get_scheduler("fcfs"), ARR, max_events=5)


def test_layerwise_drop_of_a_request_that_has_not_started():
    # sequential-like layer policy that drops request 1 (b, arrived 0.5) at its first look:
    # a runs alone (fetch 0-1, compute 1-5, ...); b is reported killed at the decision time.
    from npuweave.schedule.protocol import Dispatch, Preempt
    from npuweave.schedule.sequential import Sequential

    class Dropper(Sequential):
        def decide(self, now, view):
            for r in view.queued:
                if r.id == 1:
                    return Preempt(1, Mechanism.KILL, restart=False)
            return Dispatch(self.select(view.board))

    sim = simulate([A3, B1], Dropper(), ARR)
    a, b = sim.requests
    assert b.state is State.KILLED and b.finish_s == 1.0  # first decision after 0.5: at 1
    assert pe_log(sim) == [("a", 0, 0, 1.0, 5.0), ("a", 0, 1, 5.0, 9.0), ("a", 0, 2, 9.0, 13.0)]
    with pytest.raises(Exception, match="layer-wise runs only drop"):
        class Bad(Sequential):
            def decide(self, now, view):
                return Preempt(0, Mechanism.CHECKPOINT)

        simulate([A3, B1], Bad(), ARR)


class _Shedder:
    """Sequential that drops request 0 (a) for good once request 1 (b) waits, if a still has
    units to dispatch (``Preempt(0, KILL, restart=False)``); every decision is logged."""

    @staticmethod
    def make():
        from npuweave.schedule.protocol import Dispatch, Preempt
        from npuweave.schedule.sequential import Sequential

        class Shedder(Sequential):
            name = "shedder"

            def __init__(self):
                self.log = []

            def decide(self, now, view):
                waiting = any(r.id == 1 for r in view.queued)
                for r in view.running:
                    if r.id == 0 and waiting and r.dispatched < r.units:
                        self.log.append((now, "kill 0"))
                        return Preempt(0, Mechanism.KILL, restart=False)
                d = Dispatch(self.select(view.board))
                self.log.append((now, f"dispatch {d.tenant}"))
                return d

        return Shedder()


def test_layerwise_kill_of_a_started_request_at_a_unit_boundary():
    # Decisions come when the DMA is free. 0: only a: a0 fetch 0-1 (compute 1-5). 1: b waits
    # (arrived 0.5) and a has 2 units left: kill a; asked again at once: b0 fetch 1-2, compute
    # at max(PE free 5, 2) = 5-6. a0 was handed to the NPU, so it still computes 1-5 and its
    # 4 s are wasted; a is reported killed at 1 (no restart), b finishes at 6.
    pol = _Shedder.make()
    sim = simulate([A3, B1], pol, ARR, predict=True)
    assert pol.log == [(0.0, "dispatch 0"), (1.0, "kill 0"), (1.0, "dispatch 1")]
    assert pe_log(sim) == [("a", 0, 0, 1.0, 5.0), ("b", 1, 0, 5.0, 6.0)]
    assert dram_log(sim) == [("LOAD", 0, 0, 0.0, 1.0, 10), ("LOAD", 1, 0, 1.0, 2.0, 10)]
    a, b = sim.requests
    assert (a.state, a.start_s, a.finish_s, a.wasted_s, a.preemptions, a.restarts) == (
        State.KILLED, 1.0, 1.0, 4.0, 1, 0)
    assert (b.state, b.start_s, b.finish_s, b.wasted_s) == (State.DONE, 5.0, 6.0, 0.0)
    # the predictor still holds a0's computation: b's prediction equals the engine's times
    assert sim.predicted[1] == (1, 0, 1.0, 1.0, 2.0, 5.0, 6.0)
    assert sim.engine.pe_busy_s == 5.0  # work conserved: 4 s wasted + 1 s of b


def test_layerwise_kill_with_two_units_in_flight():
    # b arrives at 1.5. 0: a0 fetch 0-1; 1: a1 fetch 1-2 (b not there yet); 2: kill a (a0
    # computes 1-5, a1 5-9: both handed over, both wasted, 8 s); b0 fetch 2-3, compute 9-10.
    pol = _Shedder.make()
    sim = simulate([A3, B1], pol, [(0.0, 0, 1, math.inf), (1.5, 1, 1, math.inf)])
    assert pol.log == [(0.0, "dispatch 0"), (1.0, "dispatch 0"), (2.0, "kill 0"),
                       (2.0, "dispatch 1")]
    assert pe_log(sim) == [("a", 0, 0, 1.0, 5.0), ("a", 0, 1, 5.0, 9.0), ("b", 1, 0, 9.0, 10.0)]
    a, b = sim.requests
    assert (a.state, a.finish_s, a.wasted_s, a.progress) == (State.KILLED, 2.0, 8.0, 0)
    assert b.finish_s == 10.0 and not sim.stale


def test_layerwise_kill_refused_without_units_left_or_with_restart():
    from npuweave.errors import ConfigError
    from npuweave.schedule.protocol import Dispatch, Preempt
    from npuweave.schedule.sequential import Sequential

    class Late(Sequential):
        # a2 (a's last unit) is dispatched at 2; at 3 a has nothing left to stop
        def decide(self, now, view):
            if now >= 3.0 and any(r.id == 0 for r in view.running):
                return Preempt(0, Mechanism.KILL, restart=False)
            return Dispatch(self.select(view.board))

    with pytest.raises(ConfigError, match=r"request 0 \(running, 3 of 3 units dispatched\)"):
        simulate([A3, B1], Late(), ARR)

    class Restart(Sequential):
        def decide(self, now, view):
            if now >= 1.0 and any(r.id == 0 for r in view.running):
                return Preempt(0, Mechanism.KILL, restart=True)
            return Dispatch(self.select(view.board))

    with pytest.raises(ConfigError, match="layer-wise runs only drop"):
        simulate([A3, B1], Restart(), ARR)
