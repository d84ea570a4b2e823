"""The inliner's clean-up of a specialised function: the copies and stores that inlining
leaves behind, removed by a liveness analysis.

Copying a step into the loop binds its parameters, results and flags to fresh names
(``t = pick_choose7``, ``ev_choose3, ok_choose4 = work``, ``done_only1 = False``), and
specialisation leaves locals that hold a constant (``printed_choose9 = False``). numba's
optimiser removes all of them; run as plain Python, each costs bytecode at every decision.
``tidy`` removes them from a function body, computing which names are live where (a
backward analysis over the structured statements, loops to their fixed point):

* **copies**: ``x = y`` where ``x`` and ``y`` never hold different values that are both
  needed (no definition of one where the other is live): the two become one name and the
  copy goes (a parameter's name is kept, else the shorter one);
* **constants**: a local with one definition, ``x = <constant>``, that every read comes
  after (not live where the function starts), is replaced by the constant and folded
  (``npuweave.schedule.inline_fold``);
* **tuples of names**: ``a, b = w`` where the top level bound ``w = (x, y)`` once, after
  the last binding of ``x`` and ``y``, becomes ``a = x`` and ``b = y`` (then copies);
* **dead stores**: ``x = <constant, local or tuple of those>`` whose value is never read;
* **flags**: ``done = False``, a ``for`` that sets ``done = True`` before each of its own
  ``break``, then ``if not done: ...``: the inliner's single exit out of a loop, as Python's
  ``for ... else``;
* **steady tests** (``steady``, a separate step): ``while c:`` whose test compares names the
  loop never rebinds (``missed < limit`` in a closed loop) becomes ``if c: while True:``.

Only local names that the whole function reads and writes directly are touched: a name read
or written inside a nested scope (a lambda, a comprehension), a parameter, or one that may
be read before it is bound, keeps its every store. A body with ``try``, ``with``, ``del``,
``global``/``nonlocal``, ``yield`` or a nested definition is returned as it is.

Examples
--------
>>> import ast
>>> body = ast.parse('''
... flag = False
... r_step1 = x * 2
... y = r_step1
... if flag:
...     y = -y
... print(y)''').body
>>> print(ast.unparse(tidy(body, {"x"})))
y = x * 2
print(y)
"""

from __future__ import annotations

import ast
import copy

from npuweave.schedule.inline_flow import (
    REFUSED,
    Flow,
    blocks,
    fresh,
    loads,
    pinned_names,
    statements,
    stores,
)
from npuweave.schedule.inline_fold import fold, known, literal

_ROUNDS = 50  # each round removes something; a loop body of a few hundred lines needs ~20


def tidy(body: list[ast.stmt], params: set[str],
         local: frozenset[str] = frozenset()) -> list[ast.stmt]:
    """``body`` (a function's, with ``params`` its parameters; not changed) without the
    copies, constant locals, tuple unpacking and dead stores that ``tidy``'s module
    docstring lists; as it is when it holds a construct the analysis does not model.
    A name that ``body`` (or ``local``: names the function bound before dead code went)
    binds stays local where the clean-up leaves only reads of it: ``if False: x = None``
    first (no bytecode), so such a read still raises ``UnboundLocalError``, not
    ``NameError``."""
    if any(isinstance(n, REFUSED) for s in body for n in ast.walk(s)):
        return body
    local = local | {v for s in body for v in stores(s)}
    body = _cleaned(body, params)
    lost = sorted(v for v in local - params - {v for s in body for v in stores(s)}
                  if any(v in loads(s) for s in body))
    if lost:
        keep = ast.Assign([ast.Name(v, ast.Store()) for v in lost], ast.Constant(None),
                          lineno=0)
        doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
        body.insert(1 if doc else 0, ast.If(ast.Constant(False), [keep], []))
    return body


def _cleaned(body: list[ast.stmt], params: set[str]) -> list[ast.stmt]:
    pinned = pinned_names(body)
    body = _for_else(fresh(body), pinned | params)
    for _ in range(_ROUNDS):
        flow = Flow(body, params)
        if _spread(body, flow, pinned) or _constants(body, flow, pinned):
            body = fresh(fold(body) or [ast.Pass()])
        elif not (_coalesce(body, flow, pinned) or _dead(body, flow, pinned)):
            break
    return body


def _free(v: str, flow: Flow, pinned: set[str]) -> bool:
    """Whether ``v`` may be renamed or dropped: a local of this scope alone, bound before
    every read."""
    return v in flow.defs and v not in flow.params and v not in pinned and v not in flow.entry


def _copy(s: ast.stmt) -> tuple[str, str] | None:
    """``(x, y)`` when ``s`` is ``x = y`` between two names."""
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(
            s.targets[0], ast.Name) and isinstance(s.value, ast.Name) and \
            s.targets[0].id != s.value.id:
        return s.targets[0].id, s.value.id
    return None


def _interfere(x: str, y: str, flow: Flow) -> bool:
    """Whether one of ``x``, ``y`` is bound (other than by a copy of the other) where the
    other is live: then they hold two values that are both needed."""
    for a, b in ((x, y), (y, x)):
        for d in flow.defs.get(a, []):
            if _copy(d) in ((x, y), (y, x)):
                continue
            bound = stores(d.target if isinstance(d, ast.For) else d)
            if b in bound or b in flow.after[id(d)]:
                return True
    return False


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node


def _coalesce(body: list[ast.stmt], flow: Flow, pinned: set[str]) -> bool:
    """Copies whose two names do not interfere: one name, the copy gone."""
    merged: dict[str, str] = {}
    busy: set[str] = set()
    for s in statements(body):
        pair = _copy(s)
        if pair is None or busy & set(pair):
            continue
        fixed = [v for v in pair if v in flow.params and v not in flow.defs and v not in pinned]
        if len(fixed) + sum(_free(v, flow, pinned) for v in pair) == 2 and len(
                fixed) < 2 and not _interfere(*pair, flow):
            # a parameter never rebound holds its value from the start: it stays
            keep, drop = sorted(pair, key=lambda v: (v not in fixed, len(v), v))
            merged[drop] = keep
            busy |= set(pair)
    if not merged:
        return False
    rename = _Rename(merged)
    for s in body:
        rename.visit(s)
    for block in blocks(body):
        block[:] = [s for s in block if not (isinstance(s, ast.Assign) and _same(s))] or [
            ast.Pass()]
    return True


def _same(s: ast.Assign) -> bool:
    """``x = x``."""
    t = s.targets[0]
    return len(s.targets) == 1 and isinstance(t, ast.Name) and isinstance(
        s.value, ast.Name) and t.id == s.value.id


def _constants(body: list[ast.stmt], flow: Flow, pinned: set[str]) -> bool:
    """Locals bound once to a constant, before any read: the constant at each read."""
    by_identity = {n.id for s in body for c in ast.walk(s) if isinstance(c, ast.Compare)
                   and any(isinstance(op, (ast.Is, ast.IsNot)) for op in c.ops)
                   for n in [c.left, *c.comparators] if isinstance(n, ast.Name)}
    values = {}
    for v, ds in flow.defs.items():
        d = ds[0]
        if len(ds) == 1 and _free(v, flow, pinned) and v not in by_identity and isinstance(
                d, ast.Assign) and len(d.targets) == 1 and isinstance(
                d.targets[0], ast.Name) and known(d.value)[0]:
            values[v] = known(d.value)[1]
    if not values:
        return False
    gone = {id(d) for v in values for d in flow.defs[v]}
    _drop(body, gone)
    _Substitute(values).visit(ast.Module(body, []))
    return True


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return ast.copy_location(literal(self.values[node.id]), node)
        return node


def _drop(body: list[ast.stmt], gone: set[int]) -> None:
    """Remove the statements whose ids are in ``gone`` (in place; an emptied block: pass)."""
    for block in blocks(body):
        if any(id(s) in gone for s in block):
            block[:] = [s for s in block if id(s) not in gone] or [ast.Pass()]


def _spread(body: list[ast.stmt], flow: Flow, pinned: set[str]) -> bool:
    """``a, b = w`` where the top level bound ``w = (x, y)`` once, after every binding of
    ``x`` and ``y``: ``a = x``, ``b = y``."""
    for i, s in enumerate(body):
        done = False
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], ast.Name) and isinstance(s.value, ast.Tuple)):
            continue
        w, elts = s.targets[0].id, s.value.elts
        before = {id(p) for p in body[:i]}
        if len(flow.defs[w]) != 1 or not _free(w, flow, pinned) or not all(
                known(e)[0] or isinstance(e, ast.Name) and e.id not in pinned and all(
                    id(d) in before for d in flow.defs.get(e.id, [])) for e in elts):
            continue
        for block in blocks(body):
            for j, u in enumerate(block):
                if _unpacks(u, w, len(elts)):
                    names = [t.id for t in u.targets[0].elts]  # type: ignore[attr-defined]
                    block[j:j + 1] = [ast.Assign([ast.Name(n, ast.Store())], copy.deepcopy(e),
                                                 lineno=0) for n, e in zip(names, elts)]
                    done = True
        if done:  # one tuple per round: the names it binds change ``flow``
            return True
    return False


def _unpacks(s: ast.stmt, w: str, n: int) -> bool:
    """Whether ``s`` is ``a, b, ... = w`` into ``n`` distinct names."""
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(
            s.value, ast.Name) and s.value.id == w and isinstance(s.targets[0], ast.Tuple)):
        return False
    elts = s.targets[0].elts
    return len(elts) == n and all(isinstance(t, ast.Name) for t in elts) and len(
        {t.id for t in elts}) == n  # type: ignore[attr-defined]


def _pure(e: ast.expr, flow: Flow) -> bool:
    """Whether evaluating ``e`` cannot fail or do anything: a constant, a bound local, or a
    tuple of those."""
    if known(e)[0] or isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.Name):
        return e.id in flow.params or e.id in flow.defs and e.id not in flow.entry
    return isinstance(e, ast.Tuple) and all(_pure(v, flow) for v in e.elts)


def _dead(body: list[ast.stmt], flow: Flow, pinned: set[str]) -> bool:
    """Stores of pure values that nothing reads."""
    gone = set()
    for s in statements(body):
        if isinstance(s, ast.Assign) and all(
                isinstance(t, ast.Name) or isinstance(t, ast.Tuple) and all(
                    isinstance(n, ast.Name) for n in t.elts) for t in s.targets):
            bound = stores(s)
            unpacks = any(isinstance(t, ast.Tuple) and not (isinstance(
                s.value, ast.Tuple) and len(s.value.elts) == len(t.elts)) for t in s.targets)
            if not bound & (flow.after[id(s)] | pinned) and _pure(s.value, flow) and \
                    not unpacks:  # ``a, b = x`` iterates ``x``: it may fail
                gone.add(id(s))
    _drop(body, gone)
    return bool(gone)


def _for_else(body: list[ast.stmt], keep: set[str]) -> list[ast.stmt]:
    """The inliner's flag out of a loop (``f = False``; a ``for`` that sets ``f = True``
    before each of its ``break``; ``if not f: rest``) as ``for ... else: rest``."""
    for block in blocks(body):
        i = 0
        while i + 2 < len(block):
            f, loop, after = block[i:i + 3]
            flag = _flag(f, False)
            if flag and flag not in keep and isinstance(loop, ast.For) and not loop.orelse \
                    and isinstance(after, ast.If) and not after.orelse and isinstance(
                    after.test, ast.UnaryOp) and isinstance(after.test.op, ast.Not) and \
                    isinstance(after.test.operand, ast.Name) and \
                    after.test.operand.id == flag and _reads(body, flag) == 1:
                sets = _breaks(loop.body, flag)
                if sets is not None and len(sets) == sum(
                        1 for n in ast.walk(loop) if isinstance(n, ast.Name)
                        and n.id == flag):
                    _drop(loop.body, {id(s) for s in sets})
                    loop.orelse = after.body
                    block[i:i + 3] = [loop]
            i += 1
    return body


def _flag(s: ast.stmt, value: bool) -> str | None:
    """``f`` when ``s`` is ``f = <value>``."""
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(
            s.targets[0], ast.Name) and isinstance(s.value, ast.Constant) and \
            s.value.value is value:
        return s.targets[0].id
    return None


def _reads(body: list[ast.stmt], v: str) -> int:
    return sum(1 for s in body for n in ast.walk(s) if isinstance(n, ast.Name)
               and n.id == v and isinstance(n.ctx, ast.Load))


def _breaks(stmts: list[ast.stmt], flag: str) -> list[ast.stmt] | None:
    """The ``flag = True`` right before each ``break`` of the loop whose body is
    ``stmts`` (None when one has none)."""
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Break):
            if i == 0 or _flag(stmts[i - 1], True) != flag:
                return None
            out.append(stmts[i - 1])
        inner = [s.body, s.orelse] if isinstance(s, ast.If) else [s.orelse] if isinstance(
            s, (ast.For, ast.While)) else []
        for b in inner:
            got = _breaks(b, flag)
            if got is None:
                return None
            out.extend(got)
    return out


def steady(body: list[ast.stmt]) -> list[ast.stmt]:
    """``while c:`` whose test reads only names the loop never rebinds, through comparisons,
    ``and``/``or``/``not`` and constants (numbers, in the kernels: its value cannot change
    while the loop runs), as ``if c: while True:`` (the ``else`` runs when ``c`` is false,
    as before: the new loop ends only by ``break``, ``return`` or ``raise``). In place;
    ``body`` as it is where ``tidy`` would leave it so. Run last: ``inline_rows`` hoists
    out of top-level loops only."""
    if any(isinstance(n, REFUSED) for s in body for n in ast.walk(s)):
        return body
    pinned = pinned_names(body)
    for block in blocks(body):
        for i, s in enumerate(block):
            if isinstance(s, ast.While) and not known(s.test)[0] and _steady_test(s.test) and \
                    not (loads(s.test) & (stores(s) | pinned)):
                loop = ast.While(ast.Constant(True), s.body, [])
                block[i] = ast.If(s.test, [loop], s.orelse)
    return body


def _steady_test(e: ast.expr) -> bool:
    if isinstance(e, (ast.Name, ast.Constant)) or known(e)[0]:
        return True
    parts = [e.left, *e.comparators] if isinstance(e, ast.Compare) else e.values if \
        isinstance(e, ast.BoolOp) else [e.operand] if isinstance(e, ast.UnaryOp) and \
        isinstance(e.op, ast.Not) else None
    return parts is not None and all(_steady_test(p) for p in parts)
