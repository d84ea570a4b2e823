"""``plan``'s result says which path made it and why (issue 23: no silent fallback)."""

from __future__ import annotations

import pytest

from npuweave.schedule import jit
from npuweave.schedule.plan import plan, plan_using
from npuweave.schedule.tiling import make_tenant

TS = [make_tenant("a", [4.0], [10], 100), make_tenant("b", [0.5], [40], 100)]


def test_a_policy_without_a_code_runs_the_reference_and_says_so() -> None:
    s = plan("fair", TS, 100, 10.0, 3)
    assert s.path == "the reference loop (policy.select): fair states no loop code"


def test_a_short_run_says_it_was_too_short_for_the_loop() -> None:
    s = plan_using("auto", "sequential", TS, 100, 10.0, 2)
    if s.path.startswith("the reference loop"):
        assert "about 4 decisions" in s.path or "numba is not installed" in s.path
    else:  # the loop is already loaded in this process: any run takes it
        assert "about" in s.path


def test_the_asked_path_is_named_and_does_not_change_equality() -> None:
    k = plan_using("kernel", "layerweaver", TS, 100, 10.0, 3, reading="npuweave")
    p = plan_using("python", "layerweaver", TS, 100, 10.0, 3, reading="npuweave")
    what = ("the compiled decision loop" if jit.available()
            else "the decision loop as plain Python")
    assert k.path == f"{what}: path='kernel' asked for"
    assert p.path == "the reference loop (policy.select): path='python' asked for"
    assert k == p  # same decisions and times: the path is not part of the schedule


def test_a_bad_path_is_refused() -> None:
    with pytest.raises(ValueError, match="path must be"):
        plan_using("fast", "layerweaver", TS, 100, 10.0, 1)
