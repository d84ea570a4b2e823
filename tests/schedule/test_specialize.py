"""``jit.python(qualname, consts=...)``: a function specialised for run-constant parameters
(``schedule.inline_fold``) returns what the function as written returns, for every input,
with the code the constants rule out gone from its source.

The property tests compare against the function as written, run by Python itself: random
expressions and statements (hypothesis) over parameters of every constant type, with a
random subset of them fixed, and the loops of ``specialize_cases`` with their inline helpers.
Results are compared by ``repr`` (``True`` and ``1``, ``0.0`` and ``-0.0`` differ there) and
exceptions by type, together with the log of the side effects of ``note``.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from npuweave.errors import NpuweaveError
from npuweave.schedule import Board, get_scheduler, jit, loop
from npuweave.schedule.inline_fold import ConstantError, fold, fold_expr, frozen, substitute
from npuweave.schedule.inliner import inline_source
from tests.schedule import specialize_cases as c
from tests.schedule import test_sched_kernel as sk

CALLEES = {id(f): f for f in (c.clip, c.step, c.first_over, c.weight)}
VALUES = [0, 1, 2, -1, 0.0, -0.0, 1.5, float("nan"), float("inf"), True, False, None]
_count = itertools.count()


def specialised(fn, consts):
    """``fn`` rebuilt from the inliner's source for ``consts`` (the callees copied in)."""
    src, aliases = inline_source(fn, lambda obj: CALLEES.get(id(obj)), consts)
    return define(src, fn.__name__, dict(fn.__globals__, **aliases)), src


def define(src, name, space):
    """The function ``name`` defined by ``src`` in ``space``, its source readable by
    ``inspect`` (as the inliner reads it)."""
    filename = f"<specialize case {next(_count)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # ``x is 1`` in a generated case
        exec(compile(src, filename, "exec"), space)
    return space[name]


def outcome(fn, *args):
    """What a call does: its result or its exception's type, and the log of ``note``."""
    c.LOG.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", repr(fn(*args)), list(map(repr, c.LOG))
    except Exception as err:  # the same exception, raised by the same operation, is fine
        return "raise", type(err).__name__, list(map(repr, c.LOG))


def reads(src, name):
    """Whether the body of the function in ``src`` reads ``name``, other than in a
    comparison by identity (``x is 0.0``: a fixed value is not the caller's object)."""
    fdef = ast.parse(src).body[0]
    skip = {id(n) for c in ast.walk(fdef) if isinstance(c, ast.Compare) and any(
        isinstance(op, (ast.Is, ast.IsNot)) for op in c.ops) for n in ast.walk(c)}
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               and id(n) not in skip for s in fdef.body for n in ast.walk(s))


# -- random expressions and statements over a, b, c --
atoms = st.sampled_from(["a", "b", "c", "note(a)", "note(b)", "0", "1", "2", "-1", "0.0",
                         "-0.0", "1.5", "True", "False", "None"])


def _extend(inner):
    binary = st.sampled_from([" and ", " or ", "+", "-", "*", "/", "//", "%", "**", "==",
                              "!=", "<", "<=", ">", ">=", " is ", " is not "])
    return st.one_of(
        st.tuples(inner, binary, inner).map(lambda t: f"({t[0]}{t[1]}{t[2]})"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} < {t[1]} <= {t[2]})"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} and {t[1]} or {t[2]})"),
        st.tuples(st.sampled_from(["not ", "-", "~"]), inner).map(lambda t: f"({t[0]}{t[1]})"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[1]} if {t[0]} else {t[2]})"))


exprs = st.recursive(atoms, _extend, max_leaves=7)

TEMPLATE = """\
def f(a, b, c):
    out = []
    if {0}:
        out.append({1})
        if {2}:
            return out
    elif {3}:
        out.append({4})
    n = 0
    while {5}:
        n += 1
        if n > 2:
            break
    else:
        out.append('else')
    assert {6} or not {6}
    out.append({7})
    return out
"""


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(exprs, min_size=8, max_size=8), st.lists(st.sampled_from(VALUES), min_size=3,
                                                         max_size=3),
       st.sets(st.sampled_from("abc")))
def test_random_statements_fold_to_the_same_results_and_side_effects(es, values, fixed):
    src = TEMPLATE.format(*es)
    fn = define(src, "f", {"note": c.note})
    args = dict(zip("abc", values))
    fast, fast_src = specialised(fn, {k: args[k] for k in fixed})
    assert outcome(fast, *values) == outcome(fn, *values), fast_src
    assert not any(reads(fast_src, k) for k in fixed)


@settings(max_examples=300)
@given(exprs, st.lists(st.sampled_from(VALUES), min_size=3, max_size=3))
def test_folding_keeps_the_value_not_only_the_truth(e, values):
    """``fold_expr`` where the value is used: ``a and 1`` stays (``a`` may be returned)."""
    tree = ast.parse(e, mode="eval")
    space = {"note": c.note, **dict(zip("abc", values))}
    folded = ast.unparse(fold_expr(tree.body))
    assert outcome(lambda: eval(folded, space)) == outcome(lambda: eval(e, space)), folded


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(-5, 120), max_size=6), st.sampled_from([0, 1, 2]), st.booleans(),
       st.sampled_from([1, 3, 0.5]), st.sampled_from([None, 2, 50]),
       st.sets(st.sampled_from(["mode", "strict", "scale", "limit"])))
def test_a_loop_specialised_through_its_inline_helpers(xs, mode, strict, scale, limit, fixed):
    args = {"xs": xs, "mode": mode, "strict": strict, "scale": scale, "limit": limit}
    fast, src = specialised(c.loop, {k: args[k] for k in fixed})
    assert outcome(fast, *args.values()) == outcome(c.loop, *args.values())
    assert not ({"clip(", "step(", "first_over(", "weight("} & set(src.split()))
    assert not any(reads(src, k) for k in fixed)


def test_dead_branches_and_tests_are_gone_from_the_source():
    _, src = specialised(c.loop, {"mode": 0, "strict": True, "limit": None})
    assert not reads(src, "mode") and not reads(src, "limit") and not reads(src, "strict")
    assert "total - " not in src and "scale > 1" not in src  # step's other modes
    assert "is None" not in src and "2 * " not in src  # clip: no limit, strict
    assert "while total > 100:" in src  # ``strict and mode != 1 and total > 100``
    assert "return (total, hit, 0, True, False, None, " in src  # by hand: ``0 and scale`` is 0
    _, src = specialised(c.loop, {"strict": False})
    assert re.search(r"xs\[\w+\] >= ", src) and not re.search(r"xs\[\w+\] > ", src)
    assert "while " not in src  # ``False and ...``: the loop never runs


@pytest.mark.parametrize(("expr", "test", "want"), [
    ("x and 0 and y", False, "x and 0"),   # 0 decides: y never runs, x may be the value
    ("1 and x", False, "x"),               # 1 passes the result on
    ("x and 1", False, "x and 1"),         # x's value when falsy, else 1
    ("x and 1", True, "x"),                # in a test only the truth counts
    ("0 or x", False, "x"),
    ("x or 0", False, "x or 0"),
    ("x or 2 or y", False, "x or 2"),
    ("not (x and True)", False, "not x"),
    ("None or 0", False, "0"),
    ("(a if True else b) + 2 * 3 ** 2", False, "a + 18"),
    ("-1 ** 2 + (-1) ** 2", False, "0"),   # what Python computes: -(1 ** 2) + 1
    ("1 / 0 if x else 2 ** 100 << 100", False, "1 / 0 if x else 2 ** 100 << 100"),
    ("1 < 2 < 0", False, "False"),
    ("None is None", False, "True"),
    ("1 is 1", False, "1 is 1"),           # identity of numbers: not the folder's call
    ("None < 1", False, "None < 1"),       # raises at run time, as written
])
def test_and_or_keep_their_values(expr, test, want):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        node = ast.parse(expr, mode="eval").body
    got = ast.unparse(fold([ast.If(node, [ast.Pass()], [])])[0].test) if test else \
        ast.unparse(fold_expr(node))
    assert got == want


def test_a_test_of_known_truth_still_evaluates_its_operands():
    body = ast.parse("if f(x) and 0:\n    a()\nelse:\n    b()\nwhile g() or 1 or h():\n"
                     "    c()\n").body
    assert ast.unparse(fold(body)) == "if f(x):\n    pass\nb()\nwhile g() or 1:\n    c()"
    assert outcome(c.lazy, 0, 5, True) == outcome(specialised(c.lazy, {"flag": True})[0],
                                                  0, 5, True)


def test_specialisation_errors_name_the_parameter():
    with pytest.raises(ConstantError, match="assigns its parameter 'flag'"):
        specialised(c.rebinds, {"flag": True})
    with pytest.raises(ConstantError, match="no parameter 'fast'.*x, flag"):
        specialised(c.rebinds, {"fast": True})
    with pytest.raises(ConstantError, match="nested function with a parameter 'flag'"):
        specialised(c.nested_def, {"flag": True})
    with pytest.raises(ConstantError, match="flag='yes' is a str"):
        specialised(c.rebinds, {"flag": "yes"})
    with pytest.raises(ConstantError, match="binds no such name once at its top level"):
        specialised(c.late, {"mode": 1})
    assert issubclass(ConstantError, (NpuweaveError, ValueError))


@given(st.lists(st.integers(-5, 120), max_size=6), st.sampled_from([0, 1, 2]),
       st.sampled_from([1, 3, 0.5]))
def test_a_name_bound_once_at_the_top_can_be_fixed(xs, mode, scale):
    f, src = specialised(c.unpacked, {"mode": mode})
    assert f((mode, scale), xs) == c.unpacked((mode, scale), xs)
    assert not reads(src, "mode") and "mode, scale = pol" in src


def test_dead_code_that_still_means_something_stays():
    gen, src = specialised(c.generator, {"flag": True})
    assert list(gen(True)) == [] and "yield" in src  # still a generator
    f, _ = specialised(c.unbound_if_dead, {"flag": True})
    assert f(True) == 1
    # without flag ``y`` would be read unbound: an error either way (a limit: see the note)
    assert outcome(specialised(c.unbound_if_dead, {"flag": False})[0], False)[0] == "raise"
    assert substitute(ast.parse("x = a").body, {"a": 1})[0].value.value == 1
    # a module constant is read as numba reads it, unless a lambda's parameter shadows it
    space = {"EPS": 0.5, "np": np, "NAME": "x"}
    assert frozen(ast.parse("y = EPS + len(NAME) + np.inf").body, {"y"}, space) == {"EPS": 0.5}
    assert frozen(ast.parse("y = (lambda EPS: EPS)(1)").body, {"y"}, space) == {}


def test_identity_between_fixed_numbers_reads_the_parameters():
    """``a is b`` is False for two float objects passed in; with both replaced by equal
    constants it would be True (one constant object in a function). By hand: False, True,
    False, True."""
    x, y = float("0.5"), float("0.5")
    f, src = specialised(c.identity, {"a": x, "b": y})
    assert f(x, y, x) == c.identity(x, y, x) == (False, True, False, True)
    assert "(a is b, a is c, False, True)" in src


RUN_LOOP = "npuweave.schedule.loop.run_loop"


def _run(policy, board, requests, window, specialise):
    """``run_closed`` as plain Python, with ``run_loop`` specialised for each call's flags
    (``loop.plain``, what runs without numba) or not (``specialise`` False)."""
    from npuweave.schedule.closed import run_closed

    python = jit.python

    def patched(q, consts=None):
        return python(q, consts if q != RUN_LOOP or specialise else None)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jit, "python", patched)
        return run_closed(policy, board, requests, window, 16, plain=True)


def _same_rows(got, ref):
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        assert a.dtype == b.dtype and np.array_equal(a.view(np.int64), b.view(np.int64))


@pytest.mark.parametrize(("models", "npu", "name", "code"), [
    (["resnet50", "bert-base"], "memory-centric", "layerweaver", 0),  # its failsafe: FCFS
    (["mobilenetv2", "bert-base"], "compute-centric", "layerweaver", 2),
    (["resnet50", "bert-base"], "memory-centric", "aimt", 5)])
def test_the_closed_loop_specialised_equals_it_bit_for_bit(models, npu, name, code):
    from npuweave.hardware import preset
    from npuweave.schedule.closed import policy_code
    from npuweave.schedule.plan import start_streams
    from npuweave.sim.streams import costed_tenants

    hw = preset(npu)
    rows = []
    for specialise in (False, True):
        policy = get_scheduler(name, **({"reading": "npuweave"} if name != "aimt" else {}))
        board = Board(costed_tenants(models, hw, 1), hw.weight_buffer, hw.dram_bw)
        start_streams(board, policy, 3, None)
        assert policy_code(policy) == code
        rows.append(_run(policy, board, 3, None, specialise))
    assert len(rows[0][0]) > 100
    _same_rows(rows[1], rows[0])
    consts = {"code": code, "closed": True, "record": True, "inh_on": False, "prune": False,
              "slots": 1, "has_horizon": False}
    src = jit.inlined_source(RUN_LOOP, consts=consts)
    assert not any(reads(src, k) for k in consts)
    assert ("inlined evaluate" in src) == (code == 2)  # only Layerweaver scores
    assert ("inlined choose_among" in src) == (code == 5)
    assert "inlined inherit" not in src and "inlined free_slot" not in src  # open arrivals


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(sk.instance)
def test_random_boards_specialised_equal_the_loop_as_inlined(inst):
    """``test_sched_kernel``'s small boards (ties, tiles, windows, a board that fills):
    specialised for their flags, the same rows."""
    from npuweave.schedule.plan import start_streams

    ts = sk.build(inst)
    if inst["window"] is not None:
        assume(all(t.total_compute_s + t.total_weight_bytes > 0 for t in ts))
    rows = []
    for specialise in (False, True):
        policy = get_scheduler("layerweaver", failsafe=inst["failsafe"], reading=sk.NPW)
        board = Board(ts, sk.BUF, inst["bw"])
        start_streams(board, policy, inst["requests"], inst["window"])
        rows.append(_run(policy, board, inst["requests"], inst["window"], specialise))
    _same_rows(rows[1], rows[0])


def _serve(options, run, monkeypatch):
    """Layerweaver+ serving RN+BB (``lwkernel.serve_compiled``) with ``run`` as the loop."""
    from npuweave.hardware import preset
    from npuweave.schedule.layerweaver_plus import LayerweaverPlus
    from npuweave.sim.lwkernel import serve_compiled
    from npuweave.sim.lwserve import Batching
    from npuweave.sim.streams import costed_tenants

    npu = preset("memory-centric")
    costs = [list(per) for per in zip(*(costed_tenants(["resnet50", "bert-base"], npu, b)
                                        for b in (1, 2)))]
    rng = np.random.default_rng(3)
    times = np.sort(rng.uniform(0.0, 0.05, 60))  # overloaded: deadlines missed, urgent picks
    model = rng.integers(0, 2, len(times))
    monkeypatch.setattr(jit, "compile", lambda: False)  # the loop as plain Python
    monkeypatch.setattr(loop, "plain", lambda *args: run)
    s = serve_compiled(costs, npu.weight_buffer, npu.dram_bw, times, model, [0.01, 0.03],
                       LayerweaverPlus(**options), Batching(0.002, 2))
    assert s is not None
    return [s.finish_s.tobytes(), s.batch.tolist(), s.missed, s.decisions, s.urgent]


@pytest.mark.parametrize("options", [{}, {"inherit": True, "prune": False},
                                     {"reading": "npuweave", "grouping": "per-request"}])
def test_open_arrivals_specialised_equal_the_loop_as_inlined(options, monkeypatch):
    """Open arrivals (batching, grouping, inheritance, deadlines) with ``run_loop`` as plain
    Python, specialised for each call's flags or not: the same finish times, batches,
    misses and counters."""
    plain = _serve(options, jit.python(RUN_LOOP), monkeypatch)
    fixed = _serve(options, lambda *a: jit.python(RUN_LOOP, loop.flags(*a[:3], a[4]))(*a),
                   monkeypatch)
    assert fixed == plain and plain[3] > 100
    if options.get("inherit"):  # the flag matters here: fixed the other way, other results
        assert _serve({**options, "inherit": False}, jit.python(RUN_LOOP), monkeypatch) != plain


def test_python_caches_per_constants_and_respects_inline_off(monkeypatch):
    one = jit.python(RUN_LOOP, {"code": 0})
    assert jit.python(RUN_LOOP, {"code": 0}) is one
    assert jit.python(RUN_LOOP, {"code": False}) is not one  # False == 0, yet not the same
    assert jit.inlined_source(one) == jit.inlined_source(RUN_LOOP, {"code": 0})
    assert one.__code__.co_filename == f"<inlined {RUN_LOOP} code=0>"
    with pytest.raises(ConstantError, match="run_loop has no parameter 'mode'.*pol, tab"):
        jit.python(RUN_LOOP, {"mode": 1})
    with pytest.raises(ConstantError, match="assigns 'n' more than once"):
        jit.python(RUN_LOOP, {"n": 1})  # bound at the top, then counted
    with pytest.raises(TypeError, match="a dict"):
        jit.python(RUN_LOOP, [("code", 0)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a dict"):
        jit.python(RUN_LOOP, {"code": 0, 1: 2})  # type: ignore[dict-item]
    with pytest.raises(ConstantError, match="at most 1024 bits"):
        jit.python(RUN_LOOP, {"code": 10 ** 400})
    monkeypatch.setenv("NPUWEAVE_INLINE", "0")
    assert jit.python(RUN_LOOP, {"code": 0}) is jit.python(RUN_LOOP)
    with pytest.raises(LookupError, match="NPUWEAVE_INLINE=0"):
        jit.inlined_source(RUN_LOOP, {"code": 0})


def test_a_function_without_inline_calls_is_specialised_too():
    name = "npuweave.schedule.kernel.fcfs"
    f = jit.python(name, {"k": 2})
    assert f(99, [False, True], [0, 0], [1.0, 0.5]) == 1  # k is 2 whatever is passed
    assert "range(2)" in jit.inlined_source(name, {"k": 2})
