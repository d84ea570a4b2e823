"""Rows of a table read once instead of at every use, in a specialised plain-Python loop.

The compiled loops keep 2-D arrays (the decision columns ``o_int[0][n]``, the candidates'
scores ``ev[t][0]``); run as plain Python they are lists of rows, and every ``x[i][j]`` reads
the row ``x[i]`` again: three bytecodes, a few dozen times per decision. ``rows`` binds such
a row to a local where that cannot change what the code does:

* **out of a loop**: ``x[c]`` (``c`` a constant) inside a loop at the function's top level,
  where the loop uses ``x`` only as ``x[c][...]``, never rebinds ``x`` nor stores into ``x``
  itself, and every binding of ``x`` comes before the loop: read once before the loop;
* **along a run of statements**: ``x[i]`` used as ``x[i][...]`` at least three times in
  consecutive simple statements (assignments, expressions) that call nothing, rebind
  neither ``x`` nor ``i`` and store only into ``x[i][...]`` or names: read once before them.

What it assumes, as numba's arrays guarantee for the kernels: a value subscripted twice,
``x[c][j]``, is a table whose rows exist and are replaced only by a store into the table
itself (``x[c] = row``), never through another name (a kernel never passes one table under
two names, and a table never holds itself). A name read or bound in a nested scope is left
alone, and a body with a construct ``inline_tidy`` does not model is returned as it is.

Examples
--------
>>> import ast
>>> body = ast.parse('''
... for k in range(n):
...     out[0][k] = k
...     out[1][k] = 2 * k''').body
>>> print(ast.unparse(rows(body, {"n", "out"})))
row_out_0 = out[0]
row_out_1 = out[1]
for k in range(n):
    row_out_0[k] = k
    row_out_1[k] = 2 * k
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from npuweave.schedule.inline_flow import (
    REFUSED,
    SCOPES,
    Flow,
    blocks,
    fresh,
    pinned_names,
    stores,
)
from npuweave.schedule.inline_fold import known

_LOOPS = (ast.For, ast.While)


def rows(body: list[ast.stmt], params: set[str]) -> list[ast.stmt]:
    """``body`` (a function's, ``params`` its parameters; not changed) with the rows of
    tables that the module docstring describes read once."""
    if any(isinstance(n, REFUSED) for s in body for n in ast.walk(s)):
        return body
    body = fresh(body)
    taken = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name)} | params
    names = _Names(taken)
    pinned = pinned_names(body)
    flow = Flow(body, params)
    out: list[ast.stmt] = []
    for i, s in enumerate(body):
        if isinstance(s, _LOOPS):
            out.extend(_hoist(s, body[:i], flow, pinned, names))
        out.append(s)
    for block in blocks(out):
        _runs(block, pinned, names)
    return out


class _Names:
    """Fresh local names ``row_<table>_<index>``."""

    def __init__(self, taken: set[str]):
        self.taken = taken

    def __call__(self, table: str, index: ast.expr) -> str:
        hint = f"row_{table}_" + (str(known(index)[1]).replace("-", "m").replace(".", "_")
                                  if known(index)[0] else getattr(index, "id", "i"))
        for n in itertools.chain([hint], (f"{hint}_{k}" for k in itertools.count(1))):
            if n not in self.taken:
                self.taken.add(n)
                return n
        raise AssertionError  # unreachable: the count is endless


def _rows_of(node: ast.AST) -> Iterator[ast.Subscript]:
    """Every ``x[i]`` in ``node`` that is itself subscripted (``x[i][j]``): ``x`` a name."""
    for n in ast.walk(node):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Subscript) and isinstance(
                n.value.value, ast.Name):
            yield n.value


def _hoist(loop: ast.stmt, before: list[ast.stmt], flow: Flow, pinned: set[str],
           names: _Names) -> list[ast.stmt]:
    """The reads of loop-invariant rows before ``loop`` (a top-level statement), their uses
    in it replaced."""
    uses: dict[tuple[str, object], list[ast.Subscript]] = {}
    for r in _rows_of(loop):
        ok, k = known(r.slice)
        if ok:
            uses.setdefault((r.value.id, (type(k), k)), []).append(r)  # type: ignore[attr-defined]
    early = {id(s) for s in before}
    pre: list[ast.stmt] = []
    for (x, _), found in uses.items():
        rows_of_x = {id(r.value) for (y, _), rs in uses.items() if y == x for r in rs}
        refs = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == x]
        if x in pinned or x in flow.entry - flow.params or not all(
                id(d) in early for d in flow.defs.get(x, [])) or x in stores(
                _targets(loop)) or any(id(n) not in rows_of_x for n in refs) or _aliases(
                before, x) & _written(loop):
            continue
        row = names(x, found[0].slice)
        pre.append(ast.Assign([ast.Name(row, ast.Store())], _copy_row(found[0]), lineno=0))
        _replace(loop, {id(r) for r in found}, row)
    return pre


def _aliases(body: list[ast.stmt], x: str) -> set[str]:
    """``x`` and every name that a statement of ``body`` binds from a value naming one of
    them other than through a subscript (``y = x``, ``a, y = f((x, a))``): the names that
    may hold ``x``'s object."""
    out = {x}
    while True:
        more = {v for s in _walk_statements(body) if isinstance(s, (ast.Assign, ast.AugAssign))
                and _bare(s.value) & out for v in stores(s)} - out
        if not more:
            return out
        out |= more


def _walk_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    return (n for s in body for n in ast.walk(s) if isinstance(n, ast.stmt))


def _bare(node: ast.AST) -> set[str]:
    """The names ``node`` reads other than as the table of a subscript (``x`` in ``x[i]``)."""
    inner = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Subscript)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(
        n.ctx, ast.Load) and id(n) not in inner}


def _written(loop: ast.stmt) -> set[str]:
    """The names ``loop`` stores into (``y[i] = v``) or passes to a call: what may replace
    a row of the object they hold."""
    out = {n.value.id for n in ast.walk(loop) if isinstance(n, ast.Subscript)
           and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)}
    return out | {v for n in ast.walk(loop) if isinstance(n, ast.Call)
                  for a in [*n.args, *(k.value for k in n.keywords)] for v in _bare(a)}


def _targets(node: ast.AST) -> ast.Module:
    """The assignment and loop targets in ``node``, as a module to walk."""
    out: list[ast.stmt] = []
    for n in ast.walk(node):
        for t in getattr(n, "targets", None) or [getattr(n, "target", None)]:
            if isinstance(t, ast.expr):
                out.append(ast.Expr(t))
    return ast.Module(out, [])


def _copy_row(r: ast.Subscript) -> ast.Subscript:
    return ast.Subscript(ast.Name(r.value.id, ast.Load()),  # type: ignore[attr-defined]
                         ast.parse(ast.unparse(r.slice), mode="eval").body, ast.Load())


class _Replace(ast.NodeTransformer):
    def __init__(self, ids: set[int], row: str):
        self.ids, self.row = ids, row

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        if id(node) in self.ids:
            return ast.copy_location(ast.Name(self.row, ast.Load()), node)
        self.generic_visit(node)
        return node


def _replace(node: ast.AST, ids: set[int], row: str) -> None:
    _Replace(ids, row).visit(node)


def _runs(block: list[ast.stmt], pinned: set[str], names: _Names) -> None:
    """Within ``block`` (in place): each row ``x[i]`` used at least three times in a run of
    consecutive simple statements that call nothing, rebind neither ``x`` nor ``i`` and
    store only into names or into that row, read once before the run."""
    i = 0
    while i < len(block):
        for r in (r for r in _rows_of(block[i]) if _plain(r, pinned) and _always(block[i], r)):
            j, count = i, 0
            while j < len(block) and _keeps(block[j], r):
                count += sum(1 for u in _rows_of(block[j]) if _same_row(u, r))
                j += 1
            if count >= 3:  # a read and a store to save two reads: no gain below three
                row = names(r.value.id, r.slice)  # type: ignore[attr-defined]
                new = ast.Assign([ast.Name(row, ast.Store())], _copy_row(r), lineno=0)
                for s in block[i:j]:
                    _replace(s, {id(u) for u in _rows_of(s) if _same_row(u, r)}, row)
                block.insert(i, new)
                i += 1
                break
        i += 1


def _plain(r: ast.Subscript, pinned: set[str]) -> bool:
    """Whether ``r`` is ``x[i]`` with ``x`` and ``i`` names (or ``i`` a constant) of this
    scope."""
    return r.value.id not in pinned and (  # type: ignore[attr-defined]
        known(r.slice)[0] or isinstance(r.slice, ast.Name) and r.slice.id not in pinned)


def _always(s: ast.stmt, r: ast.Subscript) -> bool:
    """Whether ``s`` reads ``r`` whenever it runs (not only in a branch of ``x if c else y``
    or in a later operand of ``and``/``or``)."""
    maybe = {id(n) for c in ast.walk(s) for part in (
        [c.body, c.orelse] if isinstance(c, ast.IfExp) else
        c.values[1:] if isinstance(c, ast.BoolOp) else []) for n in ast.walk(part)}
    return id(r) not in maybe


def _same_row(u: ast.Subscript, r: ast.Subscript) -> bool:
    return ast.dump(u) == ast.dump(r)


def _keeps(s: ast.stmt, r: ast.Subscript) -> bool:
    """Whether ``s`` is a simple statement that cannot change the row ``r``: no call, no
    rebinding of its names, stores only into names or into ``r[...]``."""
    if not isinstance(s, (ast.Assign, ast.AugAssign, ast.Expr)) or any(
            isinstance(n, (ast.Call, *SCOPES)) for n in ast.walk(s)):
        return False
    names = {r.value.id} | ({r.slice.id} if isinstance(r.slice, ast.Name) else set())  # type: ignore[attr-defined]
    if names & stores(s):
        return False
    targets = s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", None)]
    flat = [e for t in targets if t is not None for e in (
        t.elts if isinstance(t, ast.Tuple) else [t])]
    return all(isinstance(t, ast.Name) or isinstance(t, ast.Subscript) and _same_row(
        t.value, r) for t in flat)  # type: ignore[arg-type]
