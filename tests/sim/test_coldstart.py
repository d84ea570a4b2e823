"""A first run on an empty numba cache: a small ``auto`` run goes per event (the note says why)
instead of paying the compiled loop's one-time compile, and a cold compile is announced on a
terminal (``npuweave.sim.stretch.too_small``, ``npuweave.schedule.jit.announce``).

The cache's state is simulated by replacing ``jit.cached``; the per-event engine's results are
the reference the compiled paths are held equal to (``test_taskloop``, ``test_engine_stretch``),
so a run sent there must give the same table as the same run forced per event.
"""

from __future__ import annotations

import io

import pytest

from npuweave.hardware import preset
from npuweave.schedule import jit
from npuweave.sim import stretch
from npuweave.sim.arrivals import poisson
from npuweave.sim.serving import serve

MODELS = ["resnet50", "bert-base"]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jit, "loaded", lambda: True)
    monkeypatch.setattr(jit, "cached", lambda name: False)


def test_small_run_goes_per_event_with_the_reason(cold: None) -> None:
    assert stretch.too_small("compiled", 10, True) == ""  # asked for by name: never changed
    assert stretch.too_small("auto", stretch.COLD_REQUESTS, True) == ""
    assert stretch.too_small("auto", 0, True) == ""  # online (LoadGen): arrivals come later
    note = stretch.too_small("auto", 12, True)
    assert note.startswith("engine: per event") and "whole-run loop" in note and "12 " in note
    assert "stretch kernel" in stretch.too_small("auto", 12, False)


def test_warm_cache_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jit, "loaded", lambda: True)
    monkeypatch.setattr(jit, "cached", lambda name: True)
    assert stretch.too_small("auto", 1, True) == ""


@pytest.mark.parametrize("sched", ["fcfs", "hpf-p", "prema"])
def test_cold_small_run_equals_the_per_event_run(cold: None, sched: str) -> None:
    npu = preset("memory-centric")
    arr = poisson(MODELS, [300.0, 80.0], 0.05, 1, priority=[1, 9])
    got = serve(MODELS, npu, arr, sched)
    stretch.settings.mode = "off"
    try:
        ref = serve(MODELS, npu, arr, sched)
    finally:
        stretch.settings.mode = "auto"
    assert any("numba's cache does not hold" in n for n in got.notes)
    assert len(got.table.finish_s) > 3
    for col in ("finish_s", "start_s", "model"):
        assert getattr(got.table, col).tolist() == getattr(ref.table, col).tolist()
    assert (got.rows, got.events, got.pe_busy_s) == (ref.rows, ref.events, ref.pe_busy_s)


def test_announce_only_on_a_terminal_when_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    out = Terminal()
    monkeypatch.setattr("sys.stderr", out)
    monkeypatch.delenv("NPUWEAVE_QUIET", raising=False)
    monkeypatch.setattr(jit, "cached", lambda name: True)
    jit.announce("x.y", "the loop", 40)
    assert out.getvalue() == ""
    monkeypatch.setattr(jit, "cached", lambda name: False)
    jit.announce("x.y", "the loop", 40)
    assert out.getvalue().startswith("npuweave: compiling the loop with numba") and "40 s" in (
        out.getvalue())
    monkeypatch.setenv("NPUWEAVE_QUIET", "1")
    jit.announce("x.y", "the loop", 40)
    assert out.getvalue().count("\n") == 1
    plain = io.StringIO()  # not a terminal: a log file, a test's captured output
    monkeypatch.setattr("sys.stderr", plain)
    monkeypatch.delenv("NPUWEAVE_QUIET")
    jit.announce("x.y", "the loop", 40)
    assert plain.getvalue() == ""


def test_cached_is_true_for_a_name_never_compiled() -> None:
    assert jit.cached("npuweave.no.such.function") is True
