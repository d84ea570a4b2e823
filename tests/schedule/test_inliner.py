"""``schedule.inliner`` and ``jit.python``'s inlined loops: the same results as the functions
as written (each case runs both on random inputs), tracebacks into the generated source, and
a clear refusal where a callee cannot be copied in."""

from __future__ import annotations

import ast
import logging
import traceback

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.schedule import jit, loop
from npuweave.schedule.inliner import NotInlinable, inline_source
from tests.schedule import inline_cases as c

CALLEES = {id(f): f for f in (c.sq, c.twice, c.add_k, c.first_neg, c.find, c.norm2,
                              c.pos_or_none, c.swap_inc, c.bump, c.lerp, c.count_down,
                              c.fact, c.guarded)}


def inlined(fn):
    """``fn`` rebuilt from the inliner's source (every callee above copied in)."""
    src, aliases = inline_source(fn, lambda obj: CALLEES.get(id(obj)))
    space = dict(fn.__globals__, **aliases)
    made: dict = {}
    exec(compile(src, f"<inlined {fn.__name__}>", "exec"), space, made)
    return made[fn.__name__], src


def calls_left(src: str) -> set[str]:
    """Names of the callees still called in ``src``."""
    names = {f.__name__ for f in CALLEES.values()}
    return {n.func.id for n in ast.walk(ast.parse(src))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names}


def same(fn, *args) -> str:
    """``fn`` inlined gives ``fn``'s result on ``args`` and calls no callee; its source."""
    f, src = inlined(fn)
    assert f(*args) == fn(*args)
    assert not calls_left(src)
    return src


ints = st.integers(-6, 6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(ints, max_size=5), max_size=5))
def test_early_returns_inside_loops(rows):
    same(c.firsts, rows)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(ints, max_size=4), max_size=4), ints, st.integers(-2, 6))
def test_returns_from_nested_loops_and_while_else(grid, v, n):
    same(c.loops, grid, v, n)


@given(ints, ints)
def test_name_clashes_with_caller_locals_and_globals(kk, y):
    same(c.clash, kk, y)
    assert c.clash(kk, y) == (kk + 3 + y, kk, y)  # by hand: the global k is 3


@given(ints, ints)
def test_nested_inline_calls(a, b):
    same(c.nested, a, b)


@given(ints, ints, ints)
def test_arguments_evaluated_once_and_in_order(a, b, x):
    assert same(c.ordered, a, b, x).count("note(") == 3  # the log of ``note`` calls compared


@given(st.booleans(), ints)
def test_and_or_ifexp_and_while_tests_keep_short_circuits(flag, x):
    same(c.lazy, flag, x)  # note() runs only where Python would run it


@given(ints, ints)
def test_direct_targets_fall_off_the_end_and_tuple_swaps(y, z):
    same(c.direct, y, z)


@given(st.floats(-10, 10), st.floats(-10, 10))
def test_keywords_and_defaults(a, b):
    same(c.keywords, a, b)


@given(st.lists(ints, max_size=6))
def test_results_dropped_and_augmented_assignment(xs):
    same(c.dropped, xs)


def test_refuses_recursion_and_try():
    with pytest.raises(NotInlinable, match="calls itself"):
        inline_source(c.calls_fact, lambda obj: CALLEES.get(id(obj)))
    with pytest.raises(NotInlinable, match="try"):
        inline_source(c.calls_guarded, lambda obj: CALLEES.get(id(obj)))


def test_refused_kernel_runs_as_written_and_says_why(monkeypatch, caplog):
    """A registered function whose callee cannot be copied in: the plain function, the
    reason at debug level and from ``inlined_source``."""
    name = f"{c.__name__}.calls_fact"
    monkeypatch.setattr(jit, "_PLAIN", {**jit._PLAIN, name: c.calls_fact,
                                        f"{c.__name__}.fact": c.fact})
    monkeypatch.setattr(jit, "_INLINE", jit._INLINE | {f"{c.__name__}.fact"})
    monkeypatch.setattr(jit, "_PY", {})
    monkeypatch.setattr(jit, "_NOT_INLINED", {})
    with caplog.at_level(logging.DEBUG, logger=jit.__name__):
        f = jit.python(name)
    assert f(5) == 120 and f.__code__.co_filename == c.calls_fact.__code__.co_filename
    assert "calls itself" in caplog.text
    with pytest.raises(LookupError, match="calls itself"):
        jit.inlined_source(name)


RUN_KERNEL = f"{loop.__name__}.run_loop"  # (importing loop registers it)


def test_the_closed_loop_runs_inlined():
    src = jit.inlined_source(RUN_KERNEL)
    calls = {n.func.id for n in ast.walk(ast.parse(src))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert calls.isdisjoint({"choose", "pick_lw", "fcfs", "choose_among", "evaluate",
                             "commit_in_place", "pool", "urgency", "reissues"})
    assert jit.python(RUN_KERNEL).__code__.co_filename == f"<inlined {RUN_KERNEL}>"


def test_traceback_shows_the_generated_line():
    scores = jit.python("npuweave.schedule.kernel.evaluate_all")
    with pytest.raises(IndexError) as info:  # three tenants, arrays for two
        scores(3, [True, True], [0, 0], [0, 1], False, 0.0, 0.0, 10, 0.0, [1, 1], [1.0, 1.0],
               [0.1, 0.1], [0.0, 0.0], [0], [0.0], [0.0], 0, 0, 1.0, [[0.0] * 5] * 2,
               [0.0] * 2)
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert frame.filename == "<inlined npuweave.schedule.kernel.evaluate_all>"
    assert "active[" in frame.line


@pytest.mark.parametrize("case", ["greedy", "failsafe"])
def test_closed_loop_inlined_equals_as_written(case, monkeypatch):
    """``run_closed`` as plain Python: the inlined loop and the loop as written give
    the same decisions and times, bit for bit."""
    from npuweave.hardware import preset
    from npuweave.schedule.board import Board
    from npuweave.schedule.closed import run_closed
    from npuweave.schedule.plan import start_streams
    from npuweave.schedule.registry import get_scheduler
    from npuweave.sim.streams import costed_tenants

    models, npu = {"greedy": (["mobilenetv2", "bert-base"], "compute-centric"),
                   "failsafe": (["resnet50", "bert-base"], "memory-centric")}[case]

    def run():
        hw = preset(npu)
        policy = get_scheduler("layerweaver", reading="npuweave")
        board = Board(costed_tenants(models, hw, 1), hw.weight_buffer, hw.dram_bw)
        start_streams(board, policy, 3, None)
        return run_closed(policy, board, 3, None, 16, plain=True)

    fast = run()
    monkeypatch.setenv("NPUWEAVE_INLINE", "0")
    assert jit.python(RUN_KERNEL).__code__.co_filename != f"<inlined {RUN_KERNEL}>"
    slow = run()
    assert len(fast[0]) > 100
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype and np.array_equal(a.view(np.int64), b.view(np.int64))


def test_inlined_loop_calls_its_callees_plain_form_not_the_stand_in(monkeypatch):
    """Without numba a loop kernel's module holds a stand-in that looks the plain form up
    at each call; a loop built after that must call the plain form itself."""
    from npuweave.sim import engine_kernel

    pull = "npuweave.sim.engine_kernel._pull"
    standin = jit._deferred(pull)
    monkeypatch.setattr(engine_kernel, "_pull", standin)
    monkeypatch.setattr(jit, "_PY", {})
    loop = jit.python("npuweave.sim.engine_kernel.run_stretch")
    assert "_pull(" in jit.inlined_source(loop)
    assert loop.__globals__["_pull"] is jit.python(pull)
    assert jit.inlined_source(standin) == jit.inlined_source(pull)


def test_a_loop_built_after_compile_is_inlined(monkeypatch):
    """After ``compile`` the modules hold numba's forms (or stand-ins): still recognised."""
    import npuweave.sim.engine_kernel  # noqa: F401 (registers the loop)

    jit.compile()
    monkeypatch.setattr(jit, "_PY", {})
    loop = jit.python("npuweave.sim.engine_kernel.run_stretch")
    assert loop.__code__.co_filename == "<inlined npuweave.sim.engine_kernel.run_stretch>"
