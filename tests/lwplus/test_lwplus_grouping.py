"""Per-request candidate grouping and Triton-style batching: the predictor-only loop
(``serve_layerwise``) against the event-driven ``BatchingSimulator``, and hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError
from npuweave.schedule.base import Tenant
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.schedule.sequential import Sequential
from npuweave.sim.batch_serve import BatchingSimulator
from npuweave.sim.batcher import Batcher
from npuweave.sim.lwserve import Batching, serve_layerwise
from npuweave.sim.serve import Simulator

unit = st.tuples(st.integers(0, 60), st.floats(0.01, 3.0))
TWO = Tenant("a", ("x", "y"), (2.0, 2.0), (10, 10))   # fetch 1 s, compute 2 s per unit


def _policy(name: str, grouping: str = "per-model-fifo", cap: int = 4, inherit: bool = False):
    if name == "sequential":
        return Sequential()
    if name == "layerweaver":
        return Layerweaver(failsafe=False)
    return LayerweaverPlus(grouping=grouping, max_inflight=cap, inherit=inherit)


def _costs(tenants: list[list[tuple[int, float]]], max_batch: int) -> list[list[Tenant]]:
    """Per model, per batch size: compute grows by 30% per extra input, weights are shared."""
    return [[Tenant(f"T{k}", tuple(f"L{i}" for i in range(len(us))),
                    tuple(c * (1 + 0.3 * (b - 1)) for _, c in us), tuple(s for s, _ in us),
                    batch=b) for b in range(1, max_batch + 1)]
            for k, us in enumerate(tenants)]


def _trace(arrivals: list[tuple[float, int]], n: int) -> tuple[np.ndarray, np.ndarray]:
    # distinct times off the fetch grid: at one instant both loops admit arrivals before
    # deciding, but an arrival that coincides with a batch freeing is a measure-zero tie
    rows = sorted((a + (k + 1) * 1.2345e-6, m % n) for k, (a, m) in enumerate(arrivals))
    return np.array([a for a, _ in rows]), np.array([m for _, m in rows])


@settings(max_examples=120, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=4), min_size=1, max_size=3),
       st.lists(st.tuples(st.floats(0.0, 20.0), st.integers(0, 2)), min_size=1, max_size=14),
       st.sampled_from(["sequential", "layerweaver", "layerweaver-plus"]),
       st.sampled_from([0.0, 0.4, 2.0]), st.integers(1, 3),
       st.sampled_from(["per-model-fifo", "per-request"]), st.integers(1, 3), st.booleans())
def test_predictor_loop_equals_the_batching_simulator(tenants, arrivals, name, window, cap,
                                                      grouping, slots, inherit) -> None:
    """With batching, either grouping and with or without deadline inheritance,
    ``serve_layerwise`` gives the ``BatchingSimulator``'s finish times and batches (the
    event-driven engine, activations on chip): the two drivers share the ``Batcher`` and form
    batches at the same decision points."""
    costs = _costs(tenants, cap)
    times, models = _trace(arrivals, len(tenants))
    deadlines = [4.0 + 3 * m for m in range(len(tenants))]
    fast = serve_layerwise(costs, 100, 10.0, times, models, deadlines,
                           _policy(name, grouping, slots, inherit), Batching(window, cap))
    used = slots if grouping == "per-request" and name == "layerweaver-plus" else 1
    flat = [costs[m][b] for m in range(len(costs)) for _ in range(used) for b in range(cap)]
    dl = times + np.array(deadlines)[models]
    batcher = Batcher(times, models, len(costs), window, cap, used, dl)
    sim = BatchingSimulator(flat, 100, 10.0, _policy(name, grouping, slots, inherit), batcher,
                            times, models, deadline_abs_s=dl)
    sim.run()
    slow = np.full(len(times), np.nan)
    size = np.zeros(len(times), np.int64)
    for g, r in zip(sim.groups, sim.requests):
        slow[g[3]] = r.finish_s
        size[g[3]] = len(g[3])
    assert fast.complete
    assert fast.finish_s.tolist() == slow.tolist()
    assert fast.batch.tolist() == size.tolist()
    assert int(size.max()) <= cap


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=4), min_size=1, max_size=3),
       st.lists(st.tuples(st.floats(0.0, 20.0), st.integers(0, 2)), min_size=1, max_size=14),
       st.sampled_from(["sequential", "layerweaver", "layerweaver-plus"]))
def test_batches_of_one_serve_as_without_batching(tenants, arrivals, name) -> None:
    """Window 0, max 1, one slot: the batcher's per-model queue releases each request when
    its predecessor's last unit has gone out, which is when the board's own per-tenant queue
    would (``npuweave serve --batching none``): a layer-wise policy sees the same candidates."""
    costs = _costs(tenants, 1)
    times, models = _trace(arrivals, len(tenants))
    dl = times + np.array([4.0 + 3 * m for m in range(len(tenants))])[models]
    rows = [(float(a), int(m), 1, float(d)) for a, m, d in zip(times, models, dl)]
    plain = Simulator([c[0] for c in costs], 100, 10.0, _policy(name), arrivals=rows)
    plain.run()
    batched = BatchingSimulator([c[0] for c in costs], 100, 10.0, _policy(name),
                                Batcher(times, models, len(costs)), times, models,
                                deadline_abs_s=dl)
    batched.run()
    assert sorted(len(g[3]) for g in batched.groups) == [1] * len(times)
    # requests are numbered in the order their batches formed: compare per arrival
    by_row = {g[3][0]: r.finish_s for g, r in zip(batched.groups, batched.requests)}
    assert [by_row[i] for i in range(len(times))] == [r.finish_s for r in plain.requests]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=5), min_size=1, max_size=3),
       st.lists(st.floats(0.0, 10.0), min_size=3, max_size=3), st.integers(2, 4),
       st.sampled_from([0.0, 0.5]))
def test_per_request_with_one_request_per_model_equals_per_model_fifo(tenants, at, cap,
                                                                       window) -> None:
    """One request per model: every request is its model's only one, so holding them per
    request or per model gives the same candidates, decisions and times."""
    costs = _costs(tenants, 2)
    times, models = _trace([(at[m], m) for m in range(len(tenants))], len(tenants))
    deadlines = [1.0 + 2 * m for m in range(len(tenants))]  # tight: Mode 2 fires
    fifo = serve_layerwise(costs, 100, 10.0, times, models, deadlines, LayerweaverPlus(),
                           Batching(window, 2))
    per = serve_layerwise(costs, 100, 10.0, times, models, deadlines,
                          LayerweaverPlus(grouping="per-request", max_inflight=cap),
                          Batching(window, 2))
    assert per.finish_s.tolist() == fifo.finish_s.tolist()
    assert (per.decisions, per.urgent, per.missed) == (fifo.decisions, fifo.urgent, fifo.missed)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=4), min_size=1, max_size=3),
       st.lists(st.tuples(st.floats(0.0, 20.0), st.integers(0, 2)), min_size=1, max_size=14))
def test_per_request_with_a_cap_of_one_is_per_model_fifo(tenants, arrivals) -> None:
    costs = _costs(tenants, 1)
    times, models = _trace(arrivals, len(tenants))
    deadlines = [2.0 + 3 * m for m in range(len(tenants))]
    fifo = serve_layerwise(costs, 100, 10.0, times, models, deadlines, LayerweaverPlus())
    one = serve_layerwise(costs, 100, 10.0, times, models, deadlines,
                          LayerweaverPlus(grouping="per-request", max_inflight=1))
    assert one.finish_s.tolist() == fifo.finish_s.tolist()


def test_two_requests_of_one_model_hand_worked() -> None:
    """Two-unit model (fetch 1 s, compute 2 s per unit, 100 B buffer), relative deadline 5 s,
    requests at 0 (deadline 5) and 0.5 (deadline 5.5).

    Per model FIFO: 0 fetches 0-1, 1-2, computes 1-3, 3-5 (met); 1 fetches 2-3, 3-4,
    computes 5-7, 7-9 (late): 1 miss.

    Per request, 1 is a candidate at the decision at 1 (S[t_c] = 3): both next units would
    fetch 1-2 and compute 3-5 with no idle, so Mode 1 picks the earlier deadline (request 0,
    slack 5 - 3 = 2, remaining 2: safe); after that pick request 1's slack is 5.5 - 5 = 0.5
    below its approx remaining 2 + 2 = 4, so Mode 2 sends request 1's first unit: fetch 1-2,
    compute 3-5. At 2 (S[t_c] = 5) request 0's slack is 0 < 2: Mode 2, request 0 (least
    slack): fetch 2-3, compute 5-7; request 1's second unit fetches 3-4, computes 7-9. Both
    late (2 misses): pulling the later request forward made the earlier one late too.
    With a 9 s deadline nobody is at risk and the per-request run keeps FIFO order.
    """
    times, models = np.array([0.0, 0.5]), np.array([0, 0])
    for grouping, want, missed in (("per-model-fifo", [5.0, 9.0], 1),
                                   ("per-request", [7.0, 9.0], 2)):
        pol = LayerweaverPlus(grouping=grouping, max_inflight=2)
        out = serve_layerwise([[TWO]], 100, 10.0, times, models, [5.0], pol)
        assert out.finish_s.tolist() == want and out.missed == missed
    pol = LayerweaverPlus(grouping="per-request", max_inflight=2)
    out = serve_layerwise([[TWO]], 100, 10.0, times, models, [9.0], pol)
    assert out.finish_s.tolist() == [5.0, 9.0] and out.missed == 0 and pol.urgent == 0


def test_a_batch_inherits_the_deadline_of_its_queue_hand_worked() -> None:
    """Model a: units x (10 B: fetch 1 s, compute 1 s) and y (30 B: fetch 3 s, compute 1 s),
    deadline 9 s; model b: one unit (10 B, compute 3 s), deadline 100 s. 100 B buffer at
    10 B/s; arrivals a0 at 0, b0 at 0.1, a1 at 0.2 (a1 queues behind a0). Both runs: a0.x
    fetches 0-1, computes 1-2.

    Without inheritance, at 1 (S[t_c] = 2): a0.y would fetch 1-4 (2 s of compute idle, total
    idle 4) and b0 1-2 (idle 0), so Mode 1 takes b0; a0 is safe (slack 9 - 5 = 4 > 3). b0
    computes 2-5; a0.y fetches 2-5, computes 5-6. a1 forms at the next decision (5): fetches
    5-6, 6-9, computes 6-7, 9-10: late (deadline 9.2).

    With inheritance, at 1 a0 inherits a1's deadline less a1's standalone time,
    9.2 - (1 + 3) = 5.2: slack 5.2 - 5 = 0.2 < 3, Mode 2 sends a0.y (fetch 1-4, compute 4-5).
    At 4 a1 forms; Mode 1 prefers b0 (a1.x leaves 2 s of potential idle) but a1 is at risk
    (9.2 - 8 = 1.2 < 4): a1.x fetches 4-5, computes 5-6; at 5 again (9.2 - 9 = 0.2 < 3): a1.y
    fetches 5-8, computes 8-9 (met); b0 fetches 8-9, computes 9-12 (met).
    """
    a = Tenant("a", ("x", "y"), (1.0, 1.0), (10, 30))
    b = Tenant("b", ("z",), (3.0,), (10,))
    times, models = np.array([0.0, 0.1, 0.2]), np.array([0, 1, 0])
    for inherit, want, missed in ((False, [6.0, 5.0, 10.0], 1), (True, [5.0, 12.0, 9.0], 0)):
        pol = LayerweaverPlus(inherit=inherit)
        out = serve_layerwise([[a], [b]], 100, 10.0, times, models, [9.0, 100.0], pol)
        assert out.finish_s.tolist() == want and out.missed == missed


def test_grouping_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="grouping"):
        LayerweaverPlus(grouping="per-batch")
    with pytest.raises(ConfigError, match="max_inflight"):
        LayerweaverPlus(grouping="per-request", max_inflight=0)
    # a huge cap would build models x cap x max_batch board tenants: refused before any work
    with pytest.raises(ConfigError, match="from 1 to 64"):
        LayerweaverPlus(grouping="per-request", max_inflight=10**9)
    assert LayerweaverPlus(grouping="per-request", max_inflight=64).max_inflight == 64
    with pytest.raises(ConfigError, match="--grouping"):
        serve_layerwise([[TWO]], 100, 10.0, np.array([0.0]), np.array([0]), [5.0],
                        Sequential(), grouping="nope")
