"""``inline_tidy.tidy`` and ``inline_rows.rows`` (the clean-up of a specialised loop) leave
what a function does unchanged: random functions in the subset the kernels use (locals,
copies, tuples, flags, ``for``/``while`` with ``break``/``continue``/``else``, a table of
rows, a call with a side effect) run by Python itself before and after, compared by their
result or exception type and the log of their calls; and hand-written cases whose cleaned
source is checked line by line (each expected line derived by hand from the rules)."""

from __future__ import annotations

import ast
import itertools
import linecache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuweave.schedule import inliner, jit, loop
from npuweave.schedule.inline_rows import rows
from npuweave.schedule.inline_tidy import Flow, steady, tidy

LOCALS = ["a", "b", "x", "y", "done"]
NAMES = LOCALS + ["p", "q"]
_count = itertools.count()

name = st.sampled_from(NAMES)
local = st.sampled_from(LOCALS)
const = st.sampled_from(["0", "1", "2", "-1", "True", "False", "None", "0.5"])
atom = st.one_of(name, const)
index = st.sampled_from(["0", "1", "2"])
ARGS = [0, 1, 2, -1, True, False, None, 0.5, (1, 2)]


def _simple() -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(local, name).map(lambda t: f"{t[0]} = {t[1]}"),
        st.tuples(local, const).map(lambda t: f"{t[0]} = {t[1]}"),
        st.tuples(local, name, atom).map(lambda t: f"{t[0]} = ({t[1]}, {t[2]})"),
        st.tuples(local, local, name).map(lambda t: f"{t[0]}, {t[1]} = {t[2]}"),
        st.tuples(local, local, atom, atom).map(lambda t: f"{t[0]}, {t[1]} = {t[2]}, {t[3]}"),
        st.tuples(local, name).map(lambda t: f"{t[0]} += num({t[1]})"),
        st.tuples(name).map(lambda t: f"log({t[0]})"),
        st.tuples(index, name, atom).map(lambda t: f"tb[{t[0]}][num({t[1]}) % 3] = {t[2]}"),
        st.tuples(local, index, name).map(lambda t: f"{t[0]} = tb[{t[1]}][num({t[2]}) % 3]"),
        st.tuples(name, atom, atom).map(lambda t: (
            f"tb[num({t[0]}) % 3][0] = {t[1]}; tb[num({t[0]}) % 3][1] = {t[2]}; "
            f"tb[num({t[0]}) % 3][2] = tb[num({t[0]}) % 3][0]")),
        st.tuples(index, atom).map(lambda t: f"tb[{t[0]}] = [{t[1]}, 0, 1]"),
        st.tuples(local).map(lambda t: f"{t[0]} = tb"),
        st.tuples(local, index, atom).map(lambda t: f"{t[0]}[{t[1]}] = [{t[2]}]"),
        st.just("break"), st.just("continue"))


def _compound(inner: st.SearchStrategy) -> st.SearchStrategy:
    block = st.lists(inner, min_size=1, max_size=4)
    return st.one_of(
        st.tuples(st.just("if"), name, block, st.lists(inner, max_size=3)),
        st.tuples(st.just("for"), st.sampled_from(["x", "y", "i"]), name, block,
                  st.lists(inner, max_size=2)),
        st.tuples(st.just("while"), name, block),
        st.tuples(st.just("steady"), name, block, st.lists(inner, max_size=2)),
        st.tuples(st.just("flag"), local, name, block, block))


statements = st.recursive(_simple(), _compound, max_leaves=12)


def render(stmts, depth=1, in_loop=False):
    """Source lines of the random statements (``break``/``continue`` only inside loops)."""
    pad = "    " * depth
    out = []
    for s in stmts:
        if isinstance(s, str):
            if s in ("break", "continue") and not in_loop:
                continue
            out.append(pad + s)
        elif s[0] == "if":
            out += [f"{pad}if {s[1]}:", *_sub(s[2], depth + 1, in_loop)]
            if s[3]:
                out += [f"{pad}else:", *_sub(s[3], depth + 1, in_loop)]
        elif s[0] == "for":
            out += [f"{pad}for {s[1]} in range(num({s[2]}) % 4):",
                    *_sub(s[3], depth + 1, True)]
            if s[4]:
                out += [f"{pad}else:", *_sub(s[4], depth + 1, in_loop)]
        elif s[0] == "while":
            n = f"n{depth}"  # one counter per depth: an inner loop leaves the outer's alone
            out += [f"{pad}{n} = 0", f"{pad}while {n} < num({s[1]}) % 3:", f"{pad}    {n} += 1",
                    *render(s[2], depth + 1, True)]
        elif s[0] == "steady":  # a test that may or may not change in the loop
            m = f"m{depth}"
            out += [f"{pad}{m} = 0", f"{pad}while {s[1]} != 5:", f"{pad}    {m} += 1",
                    f"{pad}    if {m} > 2:", f"{pad}        break", *render(s[2], depth + 1, True)]
            if s[3]:
                out += [f"{pad}else:", *_sub(s[3], depth + 1, in_loop)]
        else:  # the inliner's flag out of a loop
            _, f, bound, body, rest = s
            out += [f"{pad}{f} = False", f"{pad}for i in range(num({bound}) % 4):",
                    *render(body, depth + 1, True), f"{pad}    if log(i):",
                    f"{pad}        {f} = True", f"{pad}        break",
                    f"{pad}if not {f}:", *_sub(rest, depth + 1, in_loop)]
    return out


def _sub(stmts, depth, in_loop):
    return render(stmts, depth, in_loop) or ["    " * depth + "pass"]


def define(src, space):
    filename = f"<tidy case {next(_count)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), space)
    return space["f"]


def cleaned(src):
    """``src``'s function with ``tidy``, ``rows`` and ``steady`` applied to its body (as the
    inliner applies them)."""
    fdef = ast.parse(src).body[0]
    params = {a.arg for a in fdef.args.args}
    fdef.body = steady(rows(tidy(fdef.body, params), params))
    return ast.unparse(ast.fix_missing_locations(ast.Module([fdef], [])))


def run(fn, p, q, cells):
    """What a call does: result (by repr) or exception type, the log, the table after."""
    log = []

    def note(v):
        log.append(repr(v))
        return v is True or v == 1

    tb = [list(r) for r in cells]
    space = fn.__globals__
    space["log"], space["tb"] = note, tb
    try:
        got = ("ok", repr(fn(p, q)))
    except Exception as err:
        got = ("raise", type(err).__name__)
    return got, log, repr(tb)


def num(v):
    return v if isinstance(v, int) else len(v) if isinstance(v, (tuple, list)) else 1


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(statements, min_size=1, max_size=8), st.sets(local), st.sampled_from(ARGS),
       st.sampled_from(ARGS),
       st.sampled_from([[[0, 1, 2], [3, 4, 5], [6, 7, 8]], [[0.5, 1, 1], [1, 2, 3], [0, 0, 0]]]))
def test_random_functions_do_the_same_after_the_clean_up(stmts, bound, p, q, cells):
    pre = [f"    {v} = {k}" for k, v in enumerate(sorted(bound))]  # the rest may be unbound
    lines = ["def f(p, q):", *pre, *render(stmts),
             f"    return ({', '.join(LOCALS)},)"]
    src = "\n".join(lines) + "\n"
    new = cleaned(src)
    got = run(define(new, {"num": num}), p, q, cells)
    want = run(define(src, {"num": num}), p, q, cells)
    assert got == want, f"{src}\n-- cleaned --\n{new}"


def _body(src):
    return ast.parse(src).body


def test_copies_constants_tuples_and_flags_by_hand():
    """Each line by the rules: ``r_step1 = p * 2; y = r_step1`` is one name (the shorter
    kept); ``flag`` is bound once to False before every read: folded, its branch gone;
    ``w = (p, q)`` is bound once after p and q: ``a, b = w`` becomes ``a = p; b = q``, which
    coalesce into the parameters, and ``w`` is then never read; ``y`` is live across the
    loop, so ``i`` keeps its name; the loop's flag becomes ``for ... else``."""
    src = ("def f(p, q):\n    flag = False\n    w = (p, q)\n    r_step1 = p * 2\n"
           "    y = r_step1\n    if flag:\n        y = -y\n    a, b = w\n    done = False\n"
           "    for i in range(q):\n        if i > a:\n            y = y + i\n"
           "            done = True\n            break\n    if not done:\n        y = y - b\n"
           "        done = True\n    return y\n")
    assert cleaned(src).splitlines()[1:] == [
        "    y = p * 2", "    for i in range(q):", "        if i > p:",
        "            y = y + i", "            break", "    else:", "        y = y - q",
        "    return y"]
    f, g = define(src, {}), define(cleaned(src), {})
    assert [f(p, q) for p in range(-1, 3) for q in range(4)] == [
        g(p, q) for p in range(-1, 3) for q in range(4)]


def test_what_the_clean_up_leaves_alone():
    """Two copies whose values are both needed stay; a name read before it is bound keeps
    its stores (Python's UnboundLocalError stays); a name a lambda reads is not touched; an
    unpacking stays though its names are never read (``c = 1`` goes); a body with ``try``
    is returned as it is."""
    kept = "y = p\np = p + 1\nz = y + p"
    assert ast.unparse(tidy(_body(kept), {"p"})) == kept
    unbound = "if p:\n    y = 1\nz = y\nprint(z)"
    assert "y = 1" in ast.unparse(tidy(_body(unbound), {"p"}))
    closure = "y = p\ng = lambda: y\nprint(g())"
    assert ast.unparse(tidy(_body(closure), {"p"})) == closure
    unpack = "a, b = p\nc = 1"  # never read, but unpacking ``p`` may raise
    assert ast.unparse(tidy(_body(unpack), {"p"})) == "a, b = p"
    guarded = "try:\n    y = p\nexcept E:\n    pass\nz = y"
    assert tidy(body := _body(guarded), {"p"}) is body and rows(body, {"p"}) is body


def test_rows_are_read_once_only_where_nothing_can_replace_them():
    """By hand: the loop writes only cells of ``out``: its rows are read before it; ``out2``
    has a row replaced in the loop, ``alias`` holds the table ``tb`` under another name
    that the loop stores into, and the loop itself names ``tc`` bare (``mine = tc``): all
    three read as written. Along a run, ``ev[t]`` three times:
    one read; twice: no gain, left."""
    src = ("for k in range(n):\n    out[0][k] = k\n    out2[1][k] = k\n    out2[0] = [k]\n"
           "    tb[0][k] = 1\n    alias[0] = k\n    tc[0][k] = 1\n    mine = tc\n"
           "    mine[0] = [k]\nev[t][0] = a\nev[t][1] = b\nev[t][2] = ev[t][0]\n"
           "ev[u][0] = a\nev[u][1] = b")
    body = _body("alias = tb\n" + src)
    got = ast.unparse(rows(body, {"n", "out", "out2", "tb", "tc", "ev", "t", "u", "a", "b"}))
    assert got.splitlines() == [
        "alias = tb", "row_out_0 = out[0]", "for k in range(n):", "    row_out_0[k] = k",
        "    out2[1][k] = k", "    out2[0] = [k]", "    tb[0][k] = 1", "    alias[0] = k",
        "    tc[0][k] = 1", "    mine = tc", "    mine[0] = [k]",
        "row_ev_t = ev[t]", "row_ev_t[0] = a", "row_ev_t[1] = b", "row_ev_t[2] = row_ev_t[0]",
        "ev[u][0] = a", "ev[u][1] = b"]


def test_liveness_through_loops_by_hand():
    """``x`` is read in the next round of the loop before it is bound again: live after
    its binding, and so is ``y`` (the loop may end there, and ``q(y)`` reads it); ``z`` is
    never read: live nowhere."""
    body = _body("y = 0\nwhile p:\n    y = x\n    x = p\n    z = 1\nq(y)")
    flow = Flow(body, {"p", "q"})
    loop = body[1]
    assert flow.after[id(loop.body[1])] == {"p", "x", "q", "y"}
    assert "z" not in flow.after[id(loop.body[2])]
    assert flow.entry == {"p", "q", "x"}  # x: read before bound on the first round


def test_markers_compile_to_nothing():
    """``inliner.code`` drops the ``'inlined name'`` markers (each a NOP) and keeps the
    other statements on their lines."""
    src = "def f(x):\n    'inlined g'\n    y = x\n    if y:\n        'inlined h'\n    return y\n"
    consts = inliner.code(src, "<markers>").co_consts
    fn = next(c for c in consts if hasattr(c, "co_code"))
    assert "inlined g" not in fn.co_consts and "inlined h" not in fn.co_consts
    assert [ln for _, _, ln in fn.co_lines() if ln][-1] == 6  # ``return y`` stays on line 6


def test_the_loops_specialised_source_is_cleaned():
    """The one loop's closed-loop specialisations (what ``loop.plain`` runs): by the rules, no inliner flag (``done_*``: every one guards a ``for``'s own
    ``break``), no step's copy of the work arrays (``ev_choose*``: ``work`` is a tuple of
    names bound once at the top), the decision columns' rows read before the loop, and in
    Layerweaver's scoring ``ev[t]`` read once for its five cells."""
    flags = {"prune": False, "inh_on": False, "slots": 1, "closed": True,
             "has_horizon": False, "record": True}
    q = f"{loop.__name__}.run_loop"
    for code in (0, 2):
        src = jit.inlined_source(q, consts={"code": code, **flags})
        assert "done_" not in src and "ev_choose" not in src and " = work" not in src
        assert "row_o_int_0 = o_int[0]" in src and "row_o_float_3[n]" in src
        assert ("row_ev_" in src) == (code == 2)


def test_a_steady_while_test_is_read_once():
    """By the rule: ``p < q`` reads names the loop never binds: tested once; ``x < q``
    reads ``x``, which the loop binds: left; the ``else`` stays with the first test."""
    body = _body("while p < q:\n    f()\nelse:\n    g()\nwhile x < q:\n    x = f()")
    assert ast.unparse(steady(body)).splitlines() == [
        "if p < q:", "    while True:", "        f()", "else:", "    g()", "while x < q:",
        "    x = f()"]
