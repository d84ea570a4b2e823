"""The whole-run compiled task loop (``npuweave.sim.taskloop``) equals the Python simulator
with the per-event engine, float for float, on random serving runs (hypothesis).

Cases (the tenants, footprints, arrivals and traffic of ``test_engine_stretch``: 1-3 tenants
of 1-5 units, weights up to a whole buffer, zero seconds and bytes, spills and DRAM latency
half the time, times on a coarse grid half the time so that events coincide, priorities 1/3/9)
run under every rule-stated policy (``fcfs``, ``hpf``, ``sjf``, each non-preemptive and
preemptive) with every mechanism (checkpoint, kill, drain), half of them with a progress
callback (its ticks are events too). Compared: every request's fields, the segments, the
preemption effects, the policy's decisions, the progress reports, the engine's busy totals,
buffer peak and final state, the events fired and the clock. A small event budget must stop
both at the same event with the same message.

The uncompiled loop always runs (so the comparison needs no numba); the compiled one where
numba is installed. Mutants of the loop (ties in the queue broken by the higher id; an
arrival that comes before the engine's events at one instant) must be caught.
"""

from __future__ import annotations

import contextlib
import inspect
import random
import re
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_helpers import BUF, BW
from test_engine_stretch import _case

from npuweave.errors import NpuweaveError
from npuweave.schedule import jit
from npuweave.schedule.fcfs import FCFS
from npuweave.schedule.hpf import HPF
from npuweave.schedule.sjf import SJF
from npuweave.sim import taskloop, taskqueue, taskrun
from npuweave.sim.serve import Simulator

POLICIES = (FCFS, HPF, SJF)
MECHANISMS = ("checkpoint", "kill", "drain")


def _task_case(seed: int) -> dict:
    case = _case(seed)
    rng = random.Random(seed ^ 0x5EED)
    case["policy"] = (rng.choice(POLICIES), rng.random() < 0.7, rng.choice(MECHANISMS))
    case["progress"] = rng.random() < 0.5
    return case


def _run(case: dict, mode: str, max_events: int = 100_000, fn=None):
    cls, preemptive, mech = case["policy"]
    reports: list[float] = []
    sim = Simulator(case["tenants"], BUF, BW, cls(preemptive, mech), arrivals=case["rows"],
                    footprints=case["feet"], traffic=case["traffic"],
                    latency_s=case["latency"], segments=True, max_events=max_events,
                    stretch=mode, progress=reports.append if case["progress"] else None)
    if fn is not None:
        sim.taskrun.fn = fn
    sim.decisions = []
    try:
        sim.run()
        error = None
    except NpuweaveError as exc:
        error = str(exc)
    eng = sim.engine
    reqs = [(r.id, r.model, r.arrival_s, r.priority, r.deadline_s, r.batch, r.units, r.state,
             r.progress, r.dispatched, r.start_s, r.finish_s, r.preemptions, r.restarts,
             r.overhead_s, r.wasted_s, r.restore_bytes) for r in sim.requests]
    out = (error, reqs, sim.segments, sim.effects, sim.decisions, reports, eng.pe_busy_s,
           eng.dram_busy_s, eng.last_end, eng.peak_claimed, eng.claimed, sim.loop.fired,
           sim.loop.now, sim.notes[:-1])
    return repr(out), sim  # repr: nan equals nan, floats compared exactly


SEEDS = st.integers(0, 2**32 - 1)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_uncompiled_loop_equals_the_engine(seed):
    case = _task_case(seed)
    ref, _ = _run(case, "off")
    got, sim = _run(case, "loop-python")
    assert sim.notes[-1].startswith("engine: the whole run by the uncompiled task loop")
    assert got == ref


@pytest.mark.skipif(not jit.available(), reason="numba is not installed")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_compiled_loop_equals_the_engine(seed):
    case = _task_case(seed)
    got, sim = _run(case, "loop")
    assert "one compiled loop" in sim.notes[-1]
    assert got == _run(case, "off")[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS, st.integers(1, 60))
def test_the_budget_stops_both_at_one_event(seed, budget):
    case = _task_case(seed)
    ref, _ = _run(case, "off", budget)
    assert _run(case, "loop-python", budget)[0] == ref


def test_arrays_grow_as_needed(monkeypatch):
    # every array starts too small: the loop stops, Python grows it, the loop goes on
    monkeypatch.setattr(taskrun, "ROOM", 0)
    grown = 0
    for seed in range(150):
        case = _task_case(seed)
        got, sim = _run(case, "loop-python")
        assert got == _run(case, "off")[0]
        grown += sim.taskrun.grown
    assert grown > 150


def test_cases_cover_preemptions_ties_and_budgets():
    # the comparisons above are not vacuous: preemptions of each mechanism happen, requests
    # queue, and small budgets stop runs
    seen = {m: 0 for m in MECHANISMS}
    stopped = queued = 0
    for seed in range(300):
        case = _task_case(seed)
        _, sim = _run(case, "loop-python")
        seen[case["policy"][2]] += sum(r.preemptions for r in sim.requests)
        queued += sum(1 for now, d in sim.decisions if type(d).__name__ == "Idle")
        stopped += _run(case, "loop-python", 5)[1].loop.fired == 5
    assert min(seen.values()) > 5 and queued > 20 and stopped > 20


def _mutant(old: str, new: str, module=taskloop):
    """The uncompiled ``run_tasks`` with one line of ``module`` changed."""
    src = inspect.getsource(module)
    assert old in src
    plain = ("def kernel(f=None, **kw):\n    return f if f is not None else (lambda g: g)\n"
             "def borrow(arrays):\n    return arrays\n")
    src = re.sub(r"from npuweave\.schedule\.jit import [\w, ]+\n", plain, src.replace(old, new))
    mod = types.ModuleType(f"mutant_{module.__name__.rsplit('.', 1)[-1]}")
    exec(compile(src, mod.__name__, "exec"), mod.__dict__)  # noqa: S102
    if module is taskloop:  # its callees elsewhere plain too (the rule is plain Python)
        for k, v in list(vars(mod).items()):
            f = getattr(v, "py_func", v)
            with contextlib.suppress(KeyError, AttributeError):
                vars(mod)[k] = jit.python(f"{f.__module__}.{f.__name__}")
        return mod.run_tasks
    patched = jit.python("npuweave.sim.taskloop.run_tasks")
    clone = types.FunctionType(patched.__code__, dict(patched.__globals__))
    return _rebind(clone, mod)


def _rebind(fn, mod):
    """``fn`` (a plain ``run_tasks``) calling ``mod``'s queue functions, all the way down."""
    seen: dict[int, types.FunctionType] = {}

    def swap(f):
        if id(f) in seen:
            return seen[id(f)]
        g = types.FunctionType(f.__code__, dict(f.__globals__), f.__name__)
        seen[id(f)] = g
        for k, v in list(g.__globals__.items()):
            if isinstance(v, types.FunctionType) and v.__module__.startswith("npuweave.sim"):
                g.__globals__[k] = getattr(mod, k) if hasattr(mod, k) else swap(v)
        return g

    return swap(fn)


@pytest.mark.parametrize("old,new,module", [
    ("    return a < b\n", "    return a > b\n", taskqueue),  # ties in the queue: higher id
    # an arrival at the instant of an engine event fires first
    ("        if ht >= t:", "        if ht > t or t == INF:", taskloop),
])
def test_a_broken_rule_is_caught(old, new, module):
    bad = _mutant(old, new, module)
    caught = sum(_run(_task_case(seed), "off")[0] !=
                 _run(_task_case(seed), "loop-python", fn=bad)[0] for seed in range(200))
    assert caught > 0
