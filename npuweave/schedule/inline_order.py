"""The inliner's evaluation order: one function's statements with their inlined calls.

See ``npuweave.schedule.inliner``. An inlined call becomes statements before the statement
that holds it; whatever Python would evaluate before the call is kept in a temporary first,
``and``/``or``/``x if c else y`` become ``if`` statements (unless each inlined operand is a
single expression), and a ``while`` test with statements is evaluated at the top of
``while True``.
"""

from __future__ import annotations

import ast
import copy
from types import FunctionType
from typing import Any

from npuweave.schedule.inline_steps import NotInlinable, assign, assignments, name

_ORDERED = {ast.BinOp: ("left", "right"), ast.UnaryOp: ("operand",),
            ast.Subscript: ("value", "slice"), ast.Attribute: ("value",),
            ast.Tuple: ("elts",), ast.List: ("elts",), ast.Starred: ("value",),
            ast.Slice: ("lower", "upper", "step"), ast.Compare: ("left", "comparators")}


class Statements:
    """Inline calls of one function's body expanded, in evaluation order."""

    def __init__(self, ex: Any, glob: dict, local: set[str]):
        self.ex, self.glob, self.local = ex, glob, local
        self.where = ex.stack[-1].__name__ if ex.stack else "root"

    def has(self, node: ast.AST | None) -> bool:
        return node is not None and any(self.ex.callee(n, self.glob, self.local) is not None
                                        for n in ast.walk(node))

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.If):
            pre, test = self.expr(s.test)
            return pre + [ast.If(test, self.block(s.body), self.block(s.orelse))]
        if isinstance(s, ast.For):
            if self.has(s.target):
                raise NotInlinable("an inlined call in a for target")
            pre, it = self.expr(s.iter)
            loop = copy.copy(s)
            loop.iter, loop.body, loop.orelse = it, self.block(s.body), self.block(s.orelse)
            return pre + [loop]
        if isinstance(s, ast.While):
            body, orelse = self.block(s.body), self.block(s.orelse)
            pre, test = self.expr(s.test)
            if not pre:
                return [ast.While(test, body, orelse)]
            if orelse:
                raise NotInlinable("an inlined call in the test of a while with else")
            stop = ast.If(ast.UnaryOp(ast.Not(), test), [ast.Break()], [])
            return [ast.While(ast.Constant(True), pre + [stop] + body, [])]
        if not self.has(s):
            return [s]
        return self.simple(s)

    def simple(self, s: ast.stmt) -> list[ast.stmt]:
        fn = self.ex.callee(getattr(s, "value", None), self.glob, self.local)
        if isinstance(s, ast.Expr):
            if fn is not None:
                return self.inline(fn, s.value, None, discard=True)[0]
            pre, value = self.expr(s.value)
            return pre + [ast.Expr(value)]
        if isinstance(s, ast.Assign) and not any(self.has(t) for t in s.targets):
            target = s.targets[0]
            if fn is not None and len(s.targets) == 1 and all(
                    isinstance(n, ast.Name) for n in ast.walk(target)
                    if not isinstance(n, (ast.Tuple, ast.expr_context))):
                return self.inline(fn, s.value, target)[0]
            pre, value = self.expr(s.value)
            return pre + [ast.Assign(s.targets, value, lineno=0)]
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            pre, value = self.expr(s.value)
            return pre + [ast.AugAssign(s.target, s.op, value)]
        if isinstance(s, ast.Return):
            pre, value = self.expr(s.value)  # type: ignore[arg-type]
            return pre + [ast.Return(value)]
        raise NotInlinable(f"an inlined call in a {type(s).__name__} statement")

    def inline(self, fn: FunctionType, node: Any, target: ast.expr | None,
               discard: bool = False) -> tuple[list[ast.stmt], ast.expr | None]:
        # with keywords, parameters are bound out of call order: every argument spilled
        pre, values = self.ordered([*node.args, *(k.value for k in node.keywords)],
                                   bool(node.keywords))
        call = copy.copy(node)
        call.keywords = [ast.keyword(k.arg, v)
                         for k, v in zip(node.keywords, values[len(node.args):])]
        flat = self.ex.expression(fn, call, values[:len(node.args)])
        if flat is not None:  # no statement needed: ``return <expression>``
            if discard:
                return pre + [ast.Expr(flat)], None
            if target is not None:
                return pre + assignments(target, flat), None
            return pre, flat
        stmts, out = self.ex.call(fn, call, values[:len(node.args)], target, discard)
        return pre + stmts, out

    def ordered(self, nodes: list[Any], spill_all: bool = False) -> tuple[list[ast.stmt],
                                                                          list[Any]]:
        """``nodes`` evaluated left to right: statements, then each as a name, a constant or
        (for those after the last inlined call) the expression itself."""
        parts = [self.expr(n) for n in nodes]
        last = max((i for i, (pre, _) in enumerate(parts) if pre), default=-1)
        pre: list[ast.stmt] = []
        out: list[Any] = []
        for i, (p, e) in enumerate(parts):
            pre += p
            if (i < last or spill_all) and not isinstance(e, (ast.Name, ast.Constant)):
                tmp = self.ex.fresh("t", self.where)
                if isinstance(e, ast.Starred):  # *xs: xs evaluated now, unpacked later
                    pre.append(assign(name(tmp, True), e.value))
                    e = ast.Starred(name(tmp), ast.Load())
                else:
                    pre.append(assign(name(tmp, True), e))
                    e = name(tmp)
            out.append(e)
        return pre, out

    def expr(self, e: ast.expr) -> tuple[list[ast.stmt], ast.expr]:
        if not self.has(e):
            return [], e
        fn = self.ex.callee(e, self.glob, self.local)
        if fn is not None:
            pre, out = self.inline(fn, e, None)
            return pre, out  # type: ignore[return-value]
        if isinstance(e, ast.BoolOp):
            return self.boolop(e)
        if isinstance(e, ast.IfExp):
            pre, test = self.expr(e.test)
            (pb, b), (po, o) = self.expr(e.body), self.expr(e.orelse)
            if not pb and not po:
                return pre, ast.IfExp(test, b, o)
            r = self.ex.fresh("v", self.where)
            return pre + [ast.If(test, pb + [assign(name(r, True), b)],
                                 po + [assign(name(r, True), o)])], name(r)
        if isinstance(e, ast.Compare) and len(e.ops) > 1 and self.has(
                ast.Tuple(e.comparators[1:], ast.Load())):
            raise NotInlinable("an inlined call inside a chained comparison")
        return self.generic(e)

    def generic(self, e: Any) -> tuple[list[ast.stmt], Any]:
        if isinstance(e, ast.Call):  # func, positional, then keyword arguments
            pre, done = self.ordered([e.func, *e.args, *(k.value for k in e.keywords)])
            n = len(e.args) + 1
            return pre, ast.Call(done[0], done[1:n], [ast.keyword(k.arg, v) for k, v in
                                                       zip(e.keywords, done[n:])])
        fields = _ORDERED.get(type(e))
        if fields is None:
            raise NotInlinable(f"an inlined call inside {type(e).__name__}")
        kids: list[Any] = []
        for f in fields:
            v = getattr(e, f)
            kids.extend(v if isinstance(v, list) else [v])
        present = [k for k in kids if k is not None]
        pre, done = self.ordered(present)
        it = iter(done)
        new = copy.copy(e)
        for f in fields:
            v = getattr(e, f)
            if isinstance(v, list):
                setattr(new, f, [next(it) for _ in v])
            elif v is not None:
                setattr(new, f, next(it))
        return pre, new

    def boolop(self, e: ast.BoolOp) -> tuple[list[ast.stmt], ast.expr]:
        parts = [self.expr(v) for v in e.values]
        if not any(p for p, _ in parts[1:]):  # every inlined operand an expression
            return parts[0][0], ast.BoolOp(e.op, [x for _, x in parts])
        first = next(i for i, (p, _) in enumerate(parts) if p)
        r = self.ex.fresh("v", self.where)
        values = [x for _, x in parts]
        head = values[0] if first <= 1 else ast.BoolOp(e.op, values[:first])
        code: list[ast.stmt] = [*(parts[0][0] if first == 0 else []), assign(name(r, True),
                                                                             head)]
        inner: list[ast.stmt] = code
        for p, x in parts[max(first, 1):]:
            test: ast.expr = name(r)
            if isinstance(e.op, ast.Or):
                test = ast.UnaryOp(ast.Not(), test)
            step: list[ast.stmt] = p + [assign(name(r, True), x)]
            inner.append(ast.If(test, step, []))
            inner = step
        return code, name(r)


