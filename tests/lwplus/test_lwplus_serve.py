"""The predictor-only serving loop against the event-driven NPU engine, and its bookkeeping."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError
from npuweave.experiments.lwserve import Batching, _State, serve_layerwise
from npuweave.schedule.base import Tenant
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.schedule.predictor import Predictor
from npuweave.schedule.protocol import View
from npuweave.schedule.sequential import Sequential
from npuweave.sim.engine import Engine
from npuweave.sim.events import EventLoop


def _engine_run(costs, buf, bw, times, models, deadlines, policy, batching):
    """The same admission rules, but time kept by the engine: arrivals and window ends are
    events that wake the DMA engine; the DMA pulls one decision whenever it frees."""
    board = Predictor([c[0] for c in costs], buf, bw)
    stt = _State(costs, board, times, models, deadlines, batching)
    board.on_dispatched = lambda t, r, f: None  # finish times come from the engine here
    policy.start(board)
    view = View(now=0.0, tenants=board.tenants, board=board)
    last: dict[tuple[int, int], list[int]] = {}
    finish = np.full(len(times), np.nan)

    class Source:
        def next(self, now):
            board.tell(now)
            stt.admit(now)
            if not board.active:
                return None
            view.now = now
            view.running = [stt.current[m] for m in board.active]
            t = policy.decide(now, view).tenant
            r, i = board.req[t], board.pos[t]
            unit = (t, r, i, board.size[t][i], board.comp[t][i])
            if i == len(board.size[t]) - 1:
                last[t, r] = stt.members[t]
                stt.members[t] = []
                stt.current[t] = None
                stt.dirty = True
            board.commit(t)
            return unit

    def on_end(unit, now):
        for q in last.get((unit[0], unit[1]), []) if unit[2] == len(
                costs[unit[0]][0].units) - 1 else []:
            finish[q] = now

    loop = EventLoop()
    eng = Engine(buf, bw, Source(), on_end=on_end, loop=loop)
    # Engine takes ``loop or EventLoop()``: an empty EventLoop is falsy (it has __len__), so
    # the engine would run its own loop and never see our arrival events.
    eng.loop = loop
    for a in times:
        loop.schedule(float(a), eng.kick, prio=3)
        if batching.window_s:
            loop.schedule(float(a) + batching.window_s, eng.kick, prio=3)
    eng.run()
    return finish


unit = st.tuples(st.integers(0, 60), st.floats(0.01, 3.0))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(unit, min_size=1, max_size=5), min_size=1, max_size=3),
       st.lists(st.tuples(st.floats(0.0, 30.0), st.integers(0, 2)), min_size=1, max_size=12),
       st.sampled_from(["sequential", "layerweaver", "layerweaver-plus"]),
       st.sampled_from([(0.0, 1), (0.0, 3), (1.5, 2)]))
def test_predictor_loop_equals_the_engine(tenants, arrivals, name, bat) -> None:
    costs = []
    for k, us in enumerate(tenants):
        per = []
        for b in range(1, 4):  # compute grows with the batch, weights do not
            per.append(Tenant(f"T{k}", tuple(f"L{i}" for i in range(len(us))),
                              tuple(c * (1 + 0.5 * (b - 1)) for _, c in us),
                              tuple(s for s, _ in us)))
        costs.append(per)
    arrivals = sorted((a, m % len(tenants)) for a, m in arrivals)
    times = np.array([a for a, _ in arrivals])
    models = np.array([m for _, m in arrivals])
    deadlines = [4.0 + 3 * m for m in range(len(tenants))]
    batching = Batching(*bat)

    def pol():
        return {"sequential": Sequential(), "layerweaver": Layerweaver(failsafe=False),
                "layerweaver-plus": LayerweaverPlus()}[name]

    fast = serve_layerwise(costs, 100, 10.0, times, models, deadlines, pol(), batching)
    slow = _engine_run(costs, 100, 10.0, times, models, deadlines, pol(), batching)
    assert fast.complete
    assert fast.finish_s.tolist() == slow.tolist()
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
