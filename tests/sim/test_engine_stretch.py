"""The engine run a stretch at a time (``npuweave.sim.engine_kernel``) equals the per-event
engine, float for float, on random serving runs (hypothesis).

The per-event engine is itself held equal to the heap engine kept in ``engine_ref`` by
``test_engine_reference.py``; here whole ``Simulator`` runs are compared, because a stretch
also stands in for the simulator's per-computation hook and for its source (the running
request's units). Cases: 1-3 tenants of 1-5 units (weights up to a whole buffer, zero
seconds and zero bytes included), activation spills and DRAM latency half the time, arrivals
and compute times on a coarse grid half the time (so that computations, transfers, arrivals
and the policy's periodic wake-ups often coincide), priorities, and a policy that runs,
checkpoints (units taken back) and kills (the running computation cut) at random decisions.
Compared: every request's outcome, the segments, the preemption effects, the engine's busy
totals, buffer peak and final state, the events fired and the policy's decisions.

The uncompiled rules always run; the compiled ones where numba is installed. A mutant of the
rules (a computation and a transfer ending at one instant fire transfer first) must be
caught: the comparison can fail.
"""

from __future__ import annotations

import inspect
import math
import random
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_helpers import BUF, BW, Footprint, toy

from npuweave.schedule import get_scheduler, jit
from npuweave.schedule.protocol import IDLE, Mechanism, Preempt, Run, TaskBase
from npuweave.sim import engine_kernel, stretch
from npuweave.sim.serve import Simulator


class Chooser(TaskBase):
    """Runs a random queued request; at random decisions checkpoints or kills the running one
    (kills restart it or drop it); wakes up every ``period_s``. Logs every decision."""

    name = "chooser"

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.budget = rng, rng.randint(0, 6)
        self.period_s = rng.choice([None, 0.5, 1.0, 0.7])
        self.log: list[tuple[float, object]] = []

    def decide(self, now, view):
        d = self._decide(view)
        self.log.append((now, d))
        return d

    def _decide(self, view):
        if not view.queued:
            return IDLE
        if not view.running:
            return Run(self.rng.choice(view.queued).id)
        if self.budget and self.rng.random() < 0.4:
            self.budget -= 1
            mech = self.rng.choice([Mechanism.CHECKPOINT, Mechanism.KILL])
            return Preempt(view.running[0].id, mech, None, restart=self.rng.random() < 0.8)
        return IDLE


def _grid(rng: random.Random, coarse: list[float], lo: float, hi: float) -> float:
    return rng.choice(coarse) if rng.random() < 0.5 else rng.uniform(lo, hi)


def _case(seed: int) -> dict:
    rng = random.Random(seed)
    tenants, feet = [], []
    for k in range(rng.randint(1, 3)):
        n = rng.randint(1, 5)
        comps = [rng.choice([0.0, _grid(rng, [0.5, 1.0, 2.0], 0.05, 3.0)]) for _ in range(n)]
        sizes = [rng.choice([0, 10 * rng.randint(1, 10), rng.randint(1, BUF)]) for _ in range(n)]
        tenants.append(toy(f"m{k}", comps, sizes))
        units = len(tenants[-1].units)
        feet.append(Footprint(tuple(rng.randint(0, 30) for _ in range(units)),
                              tuple(rng.choice([0, 10, rng.randint(1, 20)])
                                    for _ in range(units))))
    rows = sorted((_grid(rng, [0.0, 1.0, 2.0, 5.0], 0.0, 10.0), rng.randrange(len(tenants)),
                   rng.choice([1, 3, 9]), math.inf) for _ in range(rng.randint(1, 7)))
    traffic = rng.random() < 0.5
    policy = rng.choice(["chooser", "chooser", "fcfs", "hpf-p", "p-hpf"])
    return {"tenants": tenants, "feet": feet, "rows": rows, "traffic": traffic,
            "latency": rng.choice([0.0, 0.25]) if traffic else 0.0, "policy": policy,
            "seed": seed}


def _policy(case: dict):
    if case["policy"] == "chooser":
        return Chooser(random.Random(case["seed"] + 1))
    return get_scheduler(case["policy"])


def _run(case: dict, mode: str, fn=None):
    pol = _policy(case)
    sim = Simulator(case["tenants"], BUF, BW, pol, arrivals=case["rows"],
                    footprints=case["feet"], traffic=case["traffic"],
                    latency_s=case["latency"], segments=True, max_events=100_000,
                    stretch=mode)
    if fn is not None:
        sim.engine.stretch = stretch.Stretcher(sim, fn)
    sim.run()
    eng = sim.engine
    reqs = [(r.id, r.model, r.state, r.start_s, r.finish_s, r.progress, r.dispatched,
             r.preemptions, r.restarts, r.wasted_s, r.overhead_s) for r in sim.requests]
    out = (reqs, sim.segments, sim.effects, eng.pe_busy_s, eng.dram_busy_s, eng.last_end,
           eng.peak_claimed, eng.claimed, sim.loop.fired, sim.loop.now,
           getattr(pol, "log", None))
    return repr(out), sim  # repr: nan equals nan, floats compared exactly


SEEDS = st.integers(0, 2**32 - 1)
CHECK = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@CHECK
@given(SEEDS)
def test_uncompiled_stretches_equal_the_engine(seed):
    case = _case(seed)
    ref, _ = _run(case, "off")
    got, sim = _run(case, "python")
    assert got == ref


@pytest.mark.skipif(not jit.available(), reason="numba is not installed")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_compiled_stretches_equal_the_engine(seed):
    case = _case(seed)
    assert _run(case, "compiled")[0] == _run(case, "off")[0]


def test_stretches_ran():
    # the comparison above is not vacuous: stretches fire most of the events
    fired = 0
    for seed in range(40):
        _, sim = _run(_case(seed), "python")
        fired += sim.engine.stretch.calls
    assert fired > 40


def test_notes_say_which_path():
    case = _case(3)
    case["policy"] = "fcfs"
    assert _run(case, "off")[1].notes[-1] == "engine: per event (stretches off)"
    assert "uncompiled" in _run(case, "python")[1].notes[-1]
    lw = Simulator(case["tenants"], BUF, BW, get_scheduler("layerweaver"), stretch="python")
    assert lw.engine.stretch is None and lw.engine_note == ""


def _mutant():
    """The uncompiled rules with a tie broken the other way: at one instant a transfer part
    ends before a computation (the engine: computations first, they free space)."""
    src = inspect.getsource(engine_kernel)
    assert "if pe_end <= dma_end:" in src
    src = src.replace("if pe_end <= dma_end:", "if pe_end < dma_end:")
    src = src.replace("from npuweave.schedule.jit import kernel",
                      "def kernel(f=None, **kw):\n    return f if f is not None else (lambda g: g)")
    mod = types.ModuleType("mutant_kernel")
    exec(compile(src, "mutant_kernel", "exec"), mod.__dict__)  # noqa: S102
    return mod.run_stretch


def test_a_broken_tie_rule_is_caught():
    bad = _mutant()
    caught = sum(_run(_case(seed), "off")[0] != _run(_case(seed), "off", bad)[0]
                 for seed in range(300))
    assert caught > 0


def test_bad_mode():
    from npuweave.errors import ConfigError

    case = _case(1)
    with pytest.raises(ConfigError, match="stretch="):
        Simulator(case["tenants"], BUF, BW, get_scheduler("fcfs"), stretch="fast")
