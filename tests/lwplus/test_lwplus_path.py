"""``sim.lwkernel.serve_auto``: the compiled serving loop where it applies, the Python loop
otherwise, with the path and the reason in the notes (no silent fallback)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from npuweave.schedule.base import Tenant
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.sim import lwkernel
from npuweave.sim.lwkernel import refusal, serve_auto
from npuweave.sim.lwserve import Batching, serve_layerwise

A = Tenant("A", ("x", "y"), (2.0, 1.0), (10, 40))
B = Tenant("B", ("z",), (1.0,), (20,))
TIMES, MODELS = np.array([0.0, 0.5, 1.0, 4.0]), np.array([0, 1, 0, 1])


def _run(policy, fn=serve_auto, **kw):
    return fn([[A, A], [B, B]], 100, 10.0, TIMES, MODELS, [6.0, 5.0], policy,
              Batching(0.5, 2), **kw)


def _same(x, y) -> bool:
    fields = [f.name for f in dataclasses.fields(x) if f.name not in ("policy_s", "notes")]
    return all(np.array_equal(getattr(x, f), getattr(y, f), equal_nan=True) for f in fields)


@pytest.mark.parametrize("kw, why", [
    (dict(grouping="per-request"), "per-request grouping"),
    (dict(inherit=True), "deadline inheritance"),
    (dict(audit=True), "audit"),
])
def test_unsupported_options_run_the_python_loop_and_say_why(kw, why) -> None:
    got = _run(LayerweaverPlus(**kw))
    assert got.notes[-1].startswith("path: Python serving loop") and why in got.notes[-1]
    assert _same(got, _run(LayerweaverPlus(**kw), serve_layerwise))


def test_supported_policy_runs_compiled_when_numba_is_there(monkeypatch) -> None:
    got = _run(LayerweaverPlus())
    if lwkernel.available():
        assert got.notes[-1] == "path: compiled serving loop"
    else:
        assert "numba is not installed" in got.notes[-1]
    assert _same(got, _run(LayerweaverPlus(), serve_layerwise))
    monkeypatch.setattr(lwkernel, "available", lambda: False)
    assert "numba is not installed" in _run(LayerweaverPlus()).notes[-1]
    off = _run(LayerweaverPlus(), compiled=False)
    assert "turned off" in off.notes[-1] and _same(off, got)


def test_refusal_is_none_exactly_when_the_kernel_takes_the_policy() -> None:
    assert refusal(LayerweaverPlus()) is None
    assert "per-request grouping" in refusal(LayerweaverPlus(grouping="per-request"))
