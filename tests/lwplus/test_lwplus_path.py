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


def test_unsupported_options_run_the_python_loop_and_say_why() -> None:
    got = _run(LayerweaverPlus(audit=True))
    assert got.notes[-1].startswith("path: Python serving loop") and "audit" in got.notes[-1]
    assert _same(got, _run(LayerweaverPlus(audit=True), serve_layerwise))


@pytest.mark.parametrize("kw", [dict(grouping="per-request"), dict(inherit=True),
                                dict(grouping="per-request", max_inflight=2, inherit=True)])
def test_grouping_and_inheritance_run_compiled(kw) -> None:
    """Per-request grouping and deadline inheritance are in the compiled loop: same outcome
    as the Python loop, and the notes say which path ran."""
    got = _run(LayerweaverPlus(**kw))
    want = "path: compiled serving loop" if lwkernel.available() else "numba is not installed"
    assert want in got.notes[-1]
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
    assert refusal(LayerweaverPlus(grouping="per-request", inherit=True)) is None
    assert "audit" in refusal(LayerweaverPlus(audit=True))
