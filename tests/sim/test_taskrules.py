"""A new rule-stated policy runs in the compiled task loop by its own module and one registry
entry (issue 23: "add a new policy and it should be fast everywhere by touching its own module
and the registry").

The toy policy here, largest remaining first (``lrf``; preemptive ``lrf-p``: a request with
strictly more work left preempts the running one), is declared as a policy module declares
one and registered with ``register_scheduler``; nothing in ``npuweave.sim`` names it. On the
random cases of ``test_taskloop`` its whole runs in the uncompiled loop and, with numba, in
the compiled loop equal the per-event engine's (the reference: ``Ruled.decide`` in Python),
float for float; the compiled loop is not compiled again for it. The cases are not vacuous:
``lrf-p`` preempts, and ``lrf`` orders requests differently from ``sjf`` on some of them.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_taskloop import _run, _task_case

from npuweave.errors import ConfigError
from npuweave.schedule import jit, registry
from npuweave.schedule.protocol import IDLE
from npuweave.schedule.task import Ruled
from npuweave.sim import taskloop, taskrules


@jit.kernel(inline=True)
def key(arrival_s, priority, remaining_s):
    """Most work left first (ties: lower id)."""
    return -remaining_s, 0.0


class LRF(Ruled, key=key):
    """Largest remaining first (a test's toy policy)."""

    name = "lrf"
    preemptive_name = "lrf-p"


@pytest.fixture(autouse=True)
def lrf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_TASK", dict(registry._TASK))
    registry.register_scheduler("lrf", LRF, "task-level: largest remaining first")
    registry.register_scheduler("lrf-p", LRF, "task-level: largest remaining first, "
                                "preemptive", preemptive=True)


def _case(seed: int, name: str = "lrf") -> dict:
    case = _task_case(seed)
    _, preemptive, mech = case["policy"]

    def make(preemptive: bool, mechanism: str) -> object:
        return registry.get_scheduler(f"{name}-p" if preemptive else name, mechanism=mechanism)

    case["policy"] = (make, preemptive, mech)
    return case


SEEDS = st.integers(0, 2**32 - 1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_a_registered_rule_runs_in_the_uncompiled_loop(seed):
    case = _case(seed)
    got, sim = _run(case, "loop-python")
    assert sim.notes[-1].startswith("engine: the whole run by the uncompiled task loop")
    assert got == _run(case, "off")[0]


@pytest.mark.skipif(not jit.available(), reason="numba is not installed")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_a_registered_rule_runs_in_the_compiled_loop_compiled_once(seed):
    case = _case(seed)
    _run(_case(seed, "sjf"), "loop")  # the loop compiled (or loaded) for a built-in rule
    loops = list(taskloop.run_tasks.signatures)
    got, sim = _run(case, "loop")
    assert "one compiled loop" in sim.notes[-1]
    assert got == _run(case, "off")[0]
    assert list(taskloop.run_tasks.signatures) == loops  # the new rule compiled no loop


def test_the_cases_exercise_the_new_rule():
    preempted = differs = 0
    for seed in range(200):
        case = _case(seed)
        got, sim = _run(case, "loop-python")
        preempted += sum(r.preemptions for r in sim.requests)
        differs += got != _run(_case(seed, "sjf"), "loop-python")[0]
    assert preempted > 5 and differs > 20


def test_rule_of_takes_only_a_policy_deciding_by_registered_functions():
    assert taskrules.rule_of(registry.get_scheduler("lrf-p")) == (LRF.key, Ruled.wins)

    class OwnDecide(LRF):
        def decide(self, now, view):
            return IDLE

    class Unregistered(Ruled, key=lambda a, p, r: (a, 0.0)):
        name = "unregistered"

    assert taskrules.rule_of(OwnDecide()) is None
    assert taskrules.rule_of(Unregistered()) is None
    assert taskrules.rule_of(registry.get_scheduler("rr")) is None


@jit.kernel(inline=True)
def _worded(arrival_s, priority, remaining_s):
    return "late", 0.0


class Worded(Ruled, key=_worded):
    """A rule numba cannot compile (its key is a string)."""

    name = "worded"


@pytest.mark.skipif(not jit.available(), reason="numba is not installed")
def test_a_rule_numba_cannot_compile_is_a_one_line_config_error():
    jit.compile()
    with pytest.raises(ConfigError) as err:
        taskrules.compiled(taskrules.rule_of(Worded()))
    msg = str(err.value)
    assert "_worded: numba cannot compile this rule function" in msg and "\n" not in msg
