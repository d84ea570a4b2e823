"""The predictor-only serving loop against the event-driven NPU engine, and its bookkeeping."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError
from npuweave.schedule.aimt import AIMT
from npuweave.schedule.base import Tenant
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.schedule.sequential import Sequential
from npuweave.sim.lwserve import Batching, serve_layerwise
from npuweave.sim.serve import Simulator

unit = st.tuples(st.integers(0, 60), st.floats(0.01, 3.0))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=5), min_size=1, max_size=3),
       st.lists(st.tuples(st.floats(0.0, 30.0), st.integers(0, 2)), min_size=1, max_size=12),
       st.sampled_from(["sequential", "layerweaver", "layerweaver-plus", "aimt"]))
def test_predictor_loop_equals_the_serving_simulator(tenants, arrivals, name) -> None:
    """Without batching, the predictor-only loop gives the serving simulator's finish times
    (``npuweave.sim.serve.Simulator``: the event-driven engine, activations on chip)."""
    costs = [[Tenant(f"T{k}", tuple(f"L{i}" for i in range(len(us))),
                     tuple(c for _, c in us), tuple(s for s, _ in us))]
             for k, us in enumerate(tenants)]
    # Distinct arrival times off the round grid of the fetch times: at one instant the two
    # loops order an arrival and a decision differently (the simulator decides first, the
    # predictor loop admits the arrival first); Poisson arrivals never tie.
    arrivals = sorted((a + (k + 1) * 1.2345e-6, m % len(tenants))
                      for k, (a, m) in enumerate(arrivals))
    times = np.array([a for a, _ in arrivals])
    models = np.array([m for _, m in arrivals])
    deadlines = [4.0 + 3 * m for m in range(len(tenants))]

    def pol():
        return {"sequential": Sequential(), "layerweaver": Layerweaver(failsafe=False),
                "layerweaver-plus": LayerweaverPlus(), "aimt": AIMT(merge=0.1)}[name]

    fast = serve_layerwise(costs, 100, 10.0, times, models, deadlines, pol())
    rows = [(float(a), int(m), 1, float(a) + deadlines[m]) for a, m in arrivals]
    sim = Simulator([c[0] for c in costs], 100, 10.0, pol(), arrivals=rows)
    sim.run()
    slow = sorted((r.id, r.finish_s) for r in sim.requests)
    assert fast.complete
    assert fast.finish_s.tolist() == [f for _, f in slow]
    assert np.all(fast.finish_s > times)
    assert fast.missed == int(np.sum(fast.finish_s > times + np.array(deadlines)[models]))


def test_batching_hand_worked() -> None:
    """One model, one unit: 10 B (1 s at 10 B/s), compute 2 s at batch 1, 3 s at batch 2.
    Arrivals 0, 0.5, 1.0; window 1 s, max 2. Request 0 waits for 0.5 (batch of 2 at 0.5):
    fetch 0.5-1.5, compute 1.5-4.5. Request 2 (arrived 1.0) forms its batch alone at 2.0 (its
    window ends); fetch 2-3, compute max(4.5, 3) -> 4.5-6.5."""
    a1 = Tenant("a", ("x",), (2.0,), (10,))
    a2 = Tenant("a", ("x",), (3.0,), (10,))
    s = serve_layerwise([[a1, a2]], 100, 10.0, np.array([0.0, 0.5, 1.0]), np.array([0, 0, 0]),
                        [5.0], Sequential(), Batching(1.0, 2))
    assert s.finish_s.tolist() == [4.5, 4.5, 6.5]
    assert s.batch.tolist() == [2, 2, 1]
    assert s.missed == 1  # 6.5 > 1.0 + 5.0


def test_stop_missed_stops_early() -> None:
    a = Tenant("a", ("x",), (2.0,), (10,))
    times = np.arange(20) * 0.1
    s = serve_layerwise([[a]], 100, 10.0, times, np.zeros(20, np.int64), [2.5], Sequential(),
                        stop_missed=3)
    assert s.missed == 3 and not s.complete and math.isnan(s.finish_s[-1])


@pytest.mark.parametrize("kw, match", [
    ({"deadline_s": [0.0]}, "deadline"),
    ({"deadline_s": [-1.0]}, "deadline"),
    ({"batching": Batching(0.0, 2)}, "batch sizes"),
    ({"batching": Batching(math.inf, 1)}, "window"),
])
def test_bad_input(kw, match) -> None:
    a = Tenant("a", ("x",), (2.0,), (10,))
    args = {"deadline_s": [1.0], "batching": Batching()} | kw
    with pytest.raises(ConfigError, match=match):
        serve_layerwise([[a]], 100, 10.0, np.array([0.0]), np.array([0]), args["deadline_s"],
                        Sequential(), args["batching"])
