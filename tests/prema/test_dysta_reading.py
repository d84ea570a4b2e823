"""The ``dysta`` reading makes Dysta's decisions, decision by decision (issue 20, item 2).

Hand-worked cases for each difference the issue found (A-E), then the whole runs against a
small re-implementation of Dysta's loop (``dysta_ref``, written from reading its code) on
generated task sets: the PE segments must be identical, float for float.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from npuweave.sim.tasksets import serve_tasks, task_set_from_rows

sys.path.insert(0, str(Path(__file__).parent))
from dysta_ref import dysta_run, random_task_set  # noqa: E402

MS = 1e-3


def _segs(rows, sched, **opts):
    res = serve_tasks(task_set_from_rows(rows, "t.json"), sched, **opts)
    return [(s["id"], round(s["start_s"] / MS, 9), round(s["end_s"] / MS, 9))
            for s in res.segments]


def _row(i, at_ms, prio, lat_ms):
    return {"id": i, "model": i, "arrival_s": at_ms * MS, "priority": prio,
            "layer_latencies_s": [x * MS for x in lat_ms]}


def test_a_a_new_token_is_left_out_of_the_maximum():
    # X (1) [1,1,1] at 0; H (9) [5] at 0.5. At 1 ms H is new: token 9, left out of the
    # maximum (X's 1) -> threshold 1 -> candidates X (2 ms left) and H (5) -> X. At 2 ms H
    # has 9 + 9 * 1.5 / 5 = 11.7 -> threshold 9 -> H runs 2-7; X ends 7-8.
    rows = [_row("X", 0, 1, [1, 1, 1]), _row("H", 0.5, 9, [5])]
    assert _segs(rows, "p-prema", reading="dysta") == [("X", 0, 2), ("H", 2, 7), ("X", 7, 8)]
    # counting the new token (the paper's reading of the threshold): H preempts at 1 ms
    assert _segs(rows, "p-prema", reading="dysta", options={"threshold_of": "all"}) == [
        ("X", 0, 1), ("H", 1, 6), ("X", 6, 8)]


def test_b_a_task_starts_at_its_priority():
    # X (3) [2]*5 at 0; Y (1) [1] at 0. At 2 ms Dysta gives Y its priority, 1 < threshold 3
    # (X's 3) -> X. At 4 ms Y has 1 + 1 * 4 / 1 = 5 -> candidates X, Y -> Y (shorter) 4-5.
    rows = [_row("X", 0, 3, [2] * 5), _row("Y", 0, 1, [1])]
    assert _segs(rows, "p-prema", reading="dysta") == [("X", 0, 4), ("Y", 4, 5), ("X", 5, 11)]
    # crediting the wait at the first visit: Y = 1 + 2 / 1 = 3 at 2 ms, a candidate -> 2-3
    assert _segs(rows, "p-prema", reading="dysta", options={"first_visit": "credit"}) == [
        ("X", 0, 2), ("Y", 2, 3), ("X", 3, 11)]


class _Counting:
    """Wraps a policy and records the time of every decision."""

    def __init__(self, inner):
        self.inner, self.times = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def decide(self, now, view):
        self.times.append(now)
        return self.inner.decide(now, view)


def test_c_d_one_decision_per_layer_boundary_and_none_between():
    # (C) a preemption is one decision; (D) decisions fall on layer ends (or on an arrival
    # to an idle NPU), never on 100 us wake-ups. Three tasks, preemptions included.
    from npuweave.schedule.registry import get_scheduler

    rows = [_row("X", 0, 1, [1, 1, 1]), _row("H", 0.5, 9, [5]), _row("Z", 0.7, 3, [0.5] * 4)]
    pol = _Counting(get_scheduler("p-prema", reading="dysta"))
    res = serve_tasks(task_set_from_rows(rows, "t.json"), pol)
    lat = {r["id"]: list(r["layer_latencies_s"]) for r in rows}
    bounds = {r["start_s"] for r in res.requests if r["start_s"] == r["arrival_s"]}
    for s in res.segments:  # every layer end, with the simulator's float sums
        t = s["start_s"]
        while t < s["end_s"]:
            t += lat[s["id"]].pop(0)
            bounds.add(t)
    assert len(res.segments) > len(rows)  # it did preempt
    assert len(pol.times) == len(set(pol.times))  # never two decisions at one instant
    assert set(pol.times) <= bounds


def test_e_no_decision_counts_an_unfinished_layer():
    # X (1) [2, 2] at 0; Y (1) [3] at 1 ms. The paper reading decides at Y's arrival, when X's
    # unfinished first layer still counts: 4 ms left > 3 -> Y takes the NPU at X's layer end
    # (2 ms). Dysta decides at 2 ms: 2 ms left < 3 -> X continues.
    rows = [_row("X", 0, 1, [2, 2]), _row("Y", 1, 1, [3])]
    assert _segs(rows, "p-sjf") == [("X", 0, 2), ("Y", 2, 5), ("X", 5, 7)]
    assert _segs(rows, "p-sjf", reading="dysta") == [("X", 0, 4), ("Y", 4, 7)]


SCHEDS = (("fcfs", "np-fcfs", {}), ("sjf", "p-sjf", {"reading": "dysta"}),
          ("prema", "p-prema", {"reading": "dysta"}))


@pytest.mark.parametrize("rate", [50.0, 150.0, 400.0])
def test_whole_runs_equal_dystas_decisions(rate):
    agree = {k: 0 for k, _, _ in SCHEDS}
    paper_differs = 0
    for seed in range(40):
        rows = random_task_set(seed, 8, rate)
        ts = task_set_from_rows(rows, "t.json")
        for key, sched, opts in SCHEDS:
            ours = [[s["id"], s["start_s"], s["end_s"]] for s in serve_tasks(ts, sched,
                                                                              **opts).segments]
            ref, raw = dysta_run(rows, key)[1], dysta_run(rows, key, sane=False)
            agree[key] += ours == ref
            if not raw[2]:  # Dysta's own clock never ran backwards: the very same run
                assert ours == raw[1]
        paper = serve_tasks(ts, "p-prema", reading="paper").segments
        paper_differs += [[s["id"], s["start_s"], s["end_s"]] for s in paper] != dysta_run(
            rows, "prema")[1]
    assert agree == {"fcfs": 40, "sjf": 40, "prema": 40}
    assert paper_differs > 0  # the paper reading is a different scheduler
