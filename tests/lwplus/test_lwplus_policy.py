"""The Layerweaver+ policy on the board: equal to Layerweaver without deadlines; Mode 2 on a
hand-worked two-request case."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.schedule import make_tenant
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.schedule.plan import plan
from npuweave.schedule.predictor import Predictor
from npuweave.schedule.protocol import Dispatch, View
from npuweave.sim.requests import Request

unit = st.tuples(st.integers(0, 80), st.floats(0.0, 8.0))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=8), min_size=1, max_size=4),
       st.integers(1, 3), st.sampled_from(["printed", "npuweave"]))
def test_without_deadlines_same_decisions_as_layerweaver(tenants, requests, reading) -> None:
    """Mode 1 is chapter IV's choice in the reading it is given (the default: printed, as
    ``Layerweaver``'s default): without deadlines every decision is Layerweaver's."""
    ts = [make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], 100)
          for k, us in enumerate(tenants)]
    ref = plan(Layerweaver(failsafe=False, reading=reading), ts, 100, 10.0, requests)
    got = plan(LayerweaverPlus(reading=reading), ts, 100, 10.0, requests)
    assert got.order == ref.order and got.compute_end_s == ref.compute_end_s


def _view(board, now, requests):
    return View(now=now, tenants=board.tenants, running=requests, board=board)


def test_two_requests_mode_switch_on_the_board() -> None:
    """Buffer 100 B, 10 B/s. Model V (vision-like): 2 units of (10 B, 4 s): approx remaining
    max(4, 1) * 2 = 8 s. Model N: 2 units of (40 B, 0.5 s): approx max(0.5, 4) * 2 = 8 s.

    At now = 0 the board is empty (t_m = t_c = 0). Chapter IV: V's first unit fetches 0-1,
    computes 1-5: compute idle 1 s, decoupling 4 s; potential idle max(0, 4 - 4) = 0 ->
    total 1 s. N's unit fetches 0-4, computes 4-4.5: compute idle 4 s -> N is worse, V wins
    either way. Now put 3 s of earlier work on the PE (t_c = 3 s, t_m = 0): V fetches 0-1,
    computes 3-7: no compute idle, decoupling 6 s; memory idle: inh = 4 - 90/10 < 0, F over
    (1, 3) = 20 B -> inh + 2 < 0: nothing charged; potential idle 0 -> V total 0. N fetches
    0-4, computes 4-4.5: compute idle 1 s -> total >= 1. Mode 1 picks V.
    If V goes, S_thput[t_c] = 7 s. Give N a deadline of 14.5 s: its slack after the pick is
    14.5 - 7 = 7.5 s < 8 s remaining -> Mode 2 -> N. Deadline 15.5 s: 8.5 s > 8 s: Mode 1 -> V.
    """
    v = make_tenant("V", [4.0, 4.0], [10, 10], 100)
    n = make_tenant("N", [0.5, 0.5], [40, 40], 100)

    def board():
        b = Predictor([v, n], 100, 10.0)
        b.issue(0, 0, 0.0)  # request ids 0 (V) and 1 (N), as the Requests below
        b.issue(1, 1, 0.0)
        b.t_c = 3.0
        return b

    rv = Request(0, model=0, arrival_s=0.0, deadline_s=math.inf, units=2)
    for deadline, want, urgent in ((14.5, 1, 1), (15.5, 0, 0), (math.inf, 0, 0)):
        rn = Request(1, model=1, arrival_s=0.0, deadline_s=deadline, units=2)
        pol = LayerweaverPlus()
        b = board()
        pol.start(b)
        assert pol.decide(0.0, _view(b, 0.0, [rv, rn])) == Dispatch(want)
        assert pol.urgent == urgent
    assert Layerweaver(failsafe=False, reading="npuweave").select(board()) == 0


def test_precise_and_audit_count_disagreements() -> None:
    """Same case with precise: N alone from empty: fetch 0-4, 4-8; compute 4-4.5, 8-8.5 ->
    8.5 s. Deadline 15.25 s: slack after V's unit 8.25 s: approx (8 s) says safe, precise
    (8.5 s) at risk."""
    v = make_tenant("V", [4.0, 4.0], [10, 10], 100)
    n = make_tenant("N", [0.5, 0.5], [40, 40], 100)
    rv = Request(0, model=0, arrival_s=0.0, units=2)
    rn = Request(1, model=1, arrival_s=0.0, deadline_s=15.25, units=2)
    picks = {}
    for mode in ("approx", "precise"):
        b = Predictor([v, n], 100, 10.0)
        b.issue(0, 0, 0.0)
        b.issue(1, 1, 0.0)
        b.t_c = 3.0
        pol = LayerweaverPlus(standalone=mode, audit=True)
        pol.start(b)
        picks[mode] = pol.decide(0.0, _view(b, 0.0, [rv, rn])).tenant
        assert pol.disagreements == 1
    assert picks == {"approx": 0, "precise": 1}


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=6), min_size=2, max_size=3),
       st.lists(st.floats(0.0, 20.0), min_size=2, max_size=10), st.floats(2.0, 30.0),
       st.sampled_from(["approx", "precise"]))
def test_pruning_never_changes_a_decision(tenants, arrivals, deadline, mode) -> None:
    import numpy as np

    from npuweave.sim.lwserve import serve_layerwise

    costs = [[make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], 100)]
             for k, us in enumerate(tenants)]
    times = np.array(sorted(arrivals))
    models = np.arange(len(times)) % len(tenants)
    dl = [deadline] * len(tenants)
    runs = [serve_layerwise(costs, 100, 10.0, times, models, dl,
                            LayerweaverPlus(standalone=mode, prune=p)) for p in (True, False)]
    assert runs[0].finish_s.tolist() == runs[1].finish_s.tolist()
    assert runs[0].urgent == runs[1].urgent


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=6), min_size=1, max_size=4),
       st.lists(st.floats(0.0, 20.0), min_size=1, max_size=12),
       st.lists(st.floats(1.0, 30.0), min_size=4, max_size=4),
       st.sampled_from(["approx", "precise"]))
def test_fast_path_equals_the_reference(tenants, arrivals, deadlines, mode) -> None:
    """The inlined hot loop makes the decisions of ``_candidates`` + ``qos.decide``."""
    import numpy as np

    from npuweave.sim.lwserve import serve_layerwise

    costs = [[make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], 100)]
             for k, us in enumerate(tenants)]
    times = np.array(sorted(arrivals))
    models = np.arange(len(times)) % len(tenants)
    dl = deadlines[:len(tenants)]
    runs = [serve_layerwise(costs, 100, 10.0, times, models, dl,
                            LayerweaverPlus(standalone=mode, fast=f, reading=r))
            for r in ("printed", "npuweave") for f in (True, False)]
    for fast, ref in (runs[:2], runs[2:]):
        assert fast.finish_s.tolist() == ref.finish_s.tolist()
        assert fast.urgent == ref.urgent


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=6), min_size=1, max_size=3),
       st.lists(st.integers(0, 2), min_size=1, max_size=8))
def test_one_request_at_a_time_loose_deadlines_same_as_layerweaver(tenants, order) -> None:
    """Requests spaced so that one is in the system at a time, deadlines loose but finite:
    Layerweaver+ never enters Mode 2 and every request finishes when Layerweaver's does."""
    import numpy as np

    from npuweave.sim.lwserve import serve_layerwise

    costs = [[make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], 100)]
             for k, us in enumerate(tenants)]
    gap = 1.0 + max(sum(c for _, c in us) + sum(s for s, _ in us) / 10.0 for us in tenants)
    models = np.array([m % len(tenants) for m in order])
    times = np.arange(len(models)) * gap
    dl = [1e6] * len(tenants)
    lw = serve_layerwise(costs, 100, 10.0, times, models, dl, Layerweaver(failsafe=False))
    lwp = LayerweaverPlus()
    plus = serve_layerwise(costs, 100, 10.0, times, models, dl, lwp)
    assert plus.finish_s.tolist() == lw.finish_s.tolist()
    assert lwp.urgent == 0 and plus.decisions == lw.decisions
