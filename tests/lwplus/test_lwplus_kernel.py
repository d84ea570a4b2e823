"""The compiled serving loop (``sim.lwkernel``) against the Python loop it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from npuweave.schedule.aimt import AIMT
from npuweave.schedule.base import Tenant
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.schedule.sequential import Sequential
from npuweave.schedule.standalone import replay_alone
from npuweave.sim.lwkernel import policy_code, serve_compiled
from npuweave.sim.lwserve import Batching, serve_layerwise

# fine values, and a coarse grid on which idle times, deadlines and estimates tie often
# (the tie-breaks of both readings and of Mode 1 get exercised)
unit = st.one_of(st.tuples(st.integers(0, 60), st.floats(0.01, 3.0)),
                 st.tuples(st.sampled_from([0, 10, 20, 50]), st.sampled_from([0.5, 1.0, 2.0])))
POLICIES = {
    "sequential": Sequential,
    "lw-printed": lambda: Layerweaver(failsafe=False),
    "lw-npuweave": lambda: Layerweaver(failsafe=False, reading="npuweave"),
    "lw-failsafe": lambda: Layerweaver(failsafe=True),
    "plus-approx": lambda: LayerweaverPlus("approx"),
    "plus-precise": lambda: LayerweaverPlus("precise"),
    "plus-approx-noprune": lambda: LayerweaverPlus("approx", prune=False),
    "plus-precise-noprune": lambda: LayerweaverPlus("precise", prune=False),
    "plus-approx-npuweave": lambda: LayerweaverPlus("approx", reading="npuweave"),
    "plus-precise-npuweave-noprune": lambda: LayerweaverPlus("precise", prune=False,
                                                             reading="npuweave"),
    # merged blocks of at most 10 B; thresholds that take every branch, the random one too
    "aimt": lambda: AIMT(mem=0.3, dist=0.2, merge=0.1, seed=3),
}


def _costs(tenants, max_batch):
    """Model ``k`` at batch ``b``: the same units, compute ``b`` times batch 1's."""
    out = []
    for k, us in enumerate(tenants):
        names = tuple(f"L{i}" for i in range(len(us)))
        out.append([Tenant(f"T{k}", names, tuple(c * b for _, c in us),
                           tuple(s for s, _ in us)) for b in range(1, max_batch + 1)])
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=6), min_size=1, max_size=3),
       st.lists(st.tuples(st.one_of(st.floats(0.0, 30.0), st.integers(0, 12).map(float)),
                          st.integers(0, 2)), min_size=1, max_size=25),
       st.lists(st.one_of(st.floats(0.5, 20.0), st.sampled_from([2.0, 4.0, 6.0])),
                min_size=3, max_size=3),
       st.sampled_from([0.0, 0.0, 0.5, 2.0]), st.integers(1, 4),
       st.sampled_from(sorted(POLICIES)), st.sampled_from([None, 1, 3]), st.booleans(),
       st.sampled_from(["per-model-fifo", "per-request"]), st.integers(1, 3), st.booleans())
# found by a random search against mutated kernels: a tie at a positive total idle that the
# printed reading breaks on the distance alone; a Mode 1 tie broken by the earlier deadline
@example([[(0, 0.5)], [(0, 0.5)]],
         [(1.0, 0), (1.0, 1), (2.0, 0), (2.0, 1), (3.0, 0), (5.0, 1)], [4.0, 2.0, 2.0],
         0.0, 1, "lw-printed", None, False, "per-model-fifo", 1, False)
@example([[(10, 1.0), (10, 1.0)]] * 2, [(0.0, 0), (0.0, 1)], [20.0, 10.0, 1.0], 0.0, 1,
         "plus-approx", None, False, "per-model-fifo", 1, False)
@example([[(10, 1.0), (10, 1.0)]] * 2, [(0.0, 0), (0.0, 1)], [20.0, 10.0, 1.0], 0.0, 1,
         "plus-approx-npuweave", None, False, "per-model-fifo", 1, False)
# a batch of two of model 0 is compute-bound while model 0 at batch 1 is memory-bound: the
# starvation filter must see each batch's own class (lwserve classifies per batch)
@example([[(0, 0.25), (0, 0.03125), (13, 1.0)], [(0, 0.5)]], [(0.0, 0), (0.0, 0), (0.0, 1)],
         [1.0, 1.0, 1.0], 0.0, 2, "lw-failsafe", None, False, "per-model-fifo", 1, False)
# per-request grouping: two batches of one model in service at once, each a candidate
@example([[(10, 1.0), (30, 2.0)], [(20, 0.5)]], [(0.0, 0), (0.0, 0), (0.5, 1), (0.6, 0)],
         [3.0, 2.0, 1.0], 0.0, 1, "plus-approx", None, False, "per-request", 2, False)
# inheritance: the queue behind model 0's batch is urgent before the batch is
@example([[(10, 1.0), (30, 2.0)], [(20, 0.5)]], [(0.0, 0), (0.1, 1), (0.2, 0), (0.3, 0)],
         [6.0, 9.0, 1.0], 0.0, 1, "plus-approx", None, False, "per-model-fifo", 1, True)
@pytest.mark.parametrize("plain", [False, True])
def test_compiled_loop_equals_the_python_loop(plain, tenants, arrivals, deadlines, window,
                                              max_batch, name, stop, clone, grouping, inflight,
                                              inherit) -> None:
    """Same finish times (bit for bit), batches, misses, decisions, Mode 2 decisions and
    estimates as ``serve_layerwise`` for every supported policy, batching and early stop;
    Layerweaver+ with either grouping and with or without deadline inheritance. ``plain``:
    the loop as plain Python on lists (what runs without numba)."""
    costs = _costs(tenants, max_batch)
    if clone:
        costs = [costs[0]] * len(tenants)  # identical models: candidates tie often
    arrivals = sorted((a, m % len(tenants)) for a, m in arrivals)
    times = np.array([a for a, _ in arrivals])
    models = np.array([m for _, m in arrivals])
    dl = deadlines[:len(tenants)]
    ref_policy, fast_policy = POLICIES[name](), POLICIES[name]()
    for p in (ref_policy, fast_policy):
        if isinstance(p, LayerweaverPlus):
            p.grouping, p.max_inflight, p.inherit = grouping, inflight, inherit
    ref = serve_layerwise(costs, 100, 10.0, times, models, dl, ref_policy,
                          Batching(window, max_batch), stop)
    got = serve_compiled(costs, 100, 10.0, times, models, dl, fast_policy,
                         Batching(window, max_batch), stop, plain=plain)
    assert got is not None
    assert np.array_equal(got.finish_s, ref.finish_s, equal_nan=True)
    assert got.batch.tolist() == ref.batch.tolist()
    assert (got.missed, got.complete, got.decisions, got.urgent) == (
        ref.missed, ref.complete, ref.decisions, ref.urgent)
    assert got.pe_busy_s == ref.pe_busy_s and got.notes == ref.notes
    if isinstance(ref_policy, LayerweaverPlus):
        assert isinstance(fast_policy, LayerweaverPlus)
        assert (fast_policy.decisions, fast_policy.urgent, fast_policy.estimates) == (
            ref_policy.decisions, ref_policy.urgent, ref_policy.estimates)
    if isinstance(ref_policy, AIMT):  # left as its select leaves it
        assert isinstance(fast_policy, AIMT)
        assert fast_policy.box == ref_policy.box
        assert fast_policy.rng.getstate() == ref_policy.rng.getstate()


@settings(max_examples=100, deadline=None)
@given(st.lists(unit, min_size=1, max_size=8), st.integers(60, 150))
def test_precise_table_equals_the_replay(units, buffer) -> None:
    """The precise estimate the kernel looks up is ``replay_alone`` at every position
    (the Python path's estimate), bit for bit; the entry after the last unit is 0."""
    from npuweave.sim.lwkernel import _model_tables

    t = Tenant("m", tuple(f"L{i}" for i in range(len(units))), tuple(c for _, c in units),
               tuple(s for s, _ in units))
    tab = _model_tables((t,), buffer, 10.0)
    want = [replay_alone(t, p, buffer, 10.0) for p in range(len(units) + 1)]
    assert tab["precise"].tolist() == want


def test_hand_worked_two_models() -> None:
    """Two one-unit models on a 10 B/s DRAM, 100 B buffer; A: 10 B, 2 s; B: 20 B, 1 s.
    Arrivals A at 0, B at 0.5. Sequential: A fetch 0-1, compute 1-3; B is admitted at the
    next decision (t_m = 1): fetch 1-3, compute 3-4. Deadlines 3 s and 3 s: A finishes at 3
    (not late), B at 4 > 0.5 + 3 (late)."""
    a = Tenant("A", ("x",), (2.0,), (10,))
    b = Tenant("B", ("y",), (1.0,), (20,))
    got = serve_compiled([[a], [b]], 100, 10.0, np.array([0.0, 0.5]), np.array([0, 1]),
                         [3.0, 3.0], Sequential())
    assert got is not None
    assert got.finish_s.tolist() == [3.0, 4.0]
    assert (got.missed, got.decisions, got.complete) == (1, 2, True)


@pytest.mark.parametrize("policy", [LayerweaverPlus(audit=True), LayerweaverPlus(fast=False)])
def test_unsupported_policies_fall_back(policy) -> None:
    """Policies the kernel does not implement get ``None`` (the caller runs Python)."""
    a = Tenant("A", ("x",), (2.0,), (10,))
    assert serve_compiled([[a]], 100, 10.0, np.array([0.0]), np.array([0]), [3.0],
                          policy) is None


def test_policy_codes() -> None:
    assert policy_code(Sequential()) == 0
    assert policy_code(Layerweaver(failsafe=False)) == 1
    assert policy_code(Layerweaver(failsafe=False, reading="npuweave")) == 2
    assert policy_code(Layerweaver(failsafe=False, memory_idle="excess")) is None
    assert policy_code(LayerweaverPlus()) == 4  # Mode 1 in the printed reading
    assert policy_code(LayerweaverPlus(reading="npuweave")) == 3
    assert policy_code(LayerweaverPlus(grouping="per-request", inherit=True)) == 4
    assert policy_code(LayerweaverPlus(audit=True)) is None
    assert policy_code(AIMT()) == 5
