"""Which names are live where in a function body: the analysis ``inline_tidy`` and
``inline_rows`` rest on.

The bodies are the inliner's (``npuweave.schedule.inliner``): statements nested in ``if``,
``for`` and ``while`` with ``break``, ``continue`` and ``else``, and nothing that changes
the flow otherwise (``REFUSED``: a body holding one is left as it is by both passes). A
name is live after a statement when some path from there reads it before binding it again;
``Flow`` computes that backwards, each loop to its fixed point. A read inside a nested scope
(a lambda, a comprehension) counts where the scope is written, which is wrong for a closure
called later: the passes leave such names alone (``pinned_names``).

Examples
--------
>>> import ast
>>> body = ast.parse("y = 0\\nwhile p:\\n    y = x\\n    x = p\\nq(y)").body
>>> sorted(Flow(body, {"p", "q"}).entry)  # x: read before it is bound, on the first round
['p', 'q', 'x']
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

REFUSED = (ast.Try, ast.With, ast.AsyncWith, ast.AsyncFor, ast.Global, ast.Nonlocal,
            ast.Delete, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Yield,
            ast.YieldFrom, ast.Await, ast.NamedExpr, ast.Match,
            *[getattr(ast, n) for n in ("TryStar",) if hasattr(ast, n)])
SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Assert, ast.Pass)


def fresh(body: list[ast.stmt]) -> list[ast.stmt]:
    """A copy of ``body`` in which no node is in two places (the inliner and ``fold``
    share nodes; the passes here change nodes in place)."""
    return ast.parse(ast.unparse(ast.Module(body, []))).body


def pinned_names(body: list[ast.stmt]) -> set[str]:
    """Names that appear inside a nested scope (left alone: closures, shadowing)."""
    return {n.id for s in body for sc in ast.walk(s) if isinstance(sc, SCOPES)
            for n in ast.walk(sc) if isinstance(n, ast.Name)}


def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without descending into nested scopes."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def loads(node: ast.AST | None) -> frozenset[str]:
    """Every name ``node`` reads (nested scopes included: read there at some point)."""
    if node is None:
        return frozenset()
    return frozenset(n.id for n in ast.walk(node)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def stores(node: ast.AST | None) -> frozenset[str]:
    """The names ``node`` (a target, or a simple statement) binds in this scope."""
    if node is None:
        return frozenset()
    return frozenset(n.id for n in walk_scope(node)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


class Flow:
    """Liveness of a function body: ``after[id(s)]``, the names live right after statement
    ``s`` binds its names (for a ``for``: after its target is bound, where its body
    starts); ``entry``, live where the body starts (read before any binding on some path);
    ``defs[name]``: the statements that bind it."""

    def __init__(self, body: list[ast.stmt], params: set[str]):
        self.after: dict[int, frozenset[str]] = {}
        self.defs: dict[str, list[ast.stmt]] = {}
        self.params = params
        self.entry = self.block(body, frozenset(), frozenset(), frozenset())
        for s in statements(body):
            target = s.target if isinstance(s, ast.For) else s if isinstance(s, SIMPLE) \
                else None
            for v in stores(target):
                self.defs.setdefault(v, []).append(s)

    def block(self, stmts: list[ast.stmt], out: frozenset[str], brk: frozenset[str],
              cont: frozenset[str]) -> frozenset[str]:
        for s in reversed(stmts):
            out = self.stmt(s, out, brk, cont)
        return out

    def stmt(self, s: ast.stmt, out: frozenset[str], brk: frozenset[str],
             cont: frozenset[str]) -> frozenset[str]:
        self.after[id(s)] = out
        if isinstance(s, ast.Break):
            return brk
        if isinstance(s, ast.Continue):
            return cont
        if isinstance(s, (ast.Return, ast.Raise)):
            return loads(s)
        if isinstance(s, ast.If):
            return loads(s.test) | self.block(s.body, out, brk, cont) | self.block(
                s.orelse, out, brk, cont)
        if isinstance(s, ast.While):
            head: frozenset[str] = frozenset()
            while True:
                new = loads(s.test) | self.block(s.body, head, out, head) | self.block(
                    s.orelse, out, brk, cont)
                if new == head:
                    return head
                head = new
        if isinstance(s, ast.For):
            head = self.block(s.orelse, out, brk, cont)
            while True:
                start = self.block(s.body, head, out, head)
                new = head | (start - stores(s.target)) | loads(s.target)
                if new == head:
                    self.after[id(s)] = start
                    return loads(s.iter) | head
                head = new
        read = loads(s) | (stores(s) if isinstance(s, ast.AugAssign) else frozenset())
        return (out - stores(s)) | read


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in ``body``, nested ones included."""
    for s in body:
        yield s
        for field in ("body", "orelse"):
            yield from statements(getattr(s, field, None) or [])


def blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """``body`` and every statement list nested in it."""
    yield body
    for s in statements(body):
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if inner:
                yield inner
