"""The inliner's building blocks: names, renaming, and ``return`` as a single exit.

See ``npuweave.schedule.inliner``. ``Exits`` rewrites a callee's body so that each
``return`` assigns the call's result (or, for a dropped result, evaluates it) and leaves:
after a ``return`` in a branch, what follows moves into the other branch; in a loop the
``return`` ends with ``break``, and a flag set with it guards what follows the loop.
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
from types import FunctionType
from typing import Any

NONE, ALWAYS, MAYBE = 0, 1, 2  # does a statement list return: never, on every path, maybe


class NotInlinable(Exception):
    """The function cannot be rewritten; the message says why."""


def definition(fn: FunctionType) -> ast.FunctionDef:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError) as err:
        raise NotInlinable(f"no source for {fn.__qualname__}: {err}") from None
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__name__:
        raise NotInlinable(f"{fn.__qualname__} is not a plain def")
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or fn.__closure__:
        raise NotInlinable(f"{fn.__qualname__} takes *args, **kwargs, keyword-only "
                           "arguments or closes over names")
    return node


def local_names(fdef: ast.FunctionDef) -> set[str]:
    """Parameters and every name the function assigns (Python's rule for a local)."""
    names = {a.arg for a in fdef.args.posonlyargs + fdef.args.args}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
    return names


class Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        new = self.names.get(node.id)
        if new is None:
            return node
        if isinstance(new, ast.Name):
            return ast.copy_location(ast.Name(new.id, node.ctx), node)
        return ast.copy_location(copy.copy(new), node)


def name(ident: str, store: bool = False) -> ast.Name:
    return ast.Name(ident, ast.Store() if store else ast.Load())


def assign(target: ast.expr, value: ast.expr) -> ast.Assign:
    return ast.Assign([target], value, lineno=0)


def assignments(target: ast.expr, value: ast.expr) -> list[ast.stmt]:
    """``target = value``; a tuple of names from a tuple one by one where no name is read
    after it is assigned (no tuple built), leaving out ``x = x``."""
    if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
            and all(isinstance(t, ast.Name) for t in target.elts)
            and not any(isinstance(v, ast.Starred) for v in value.elts)):
        return [assign(copy.deepcopy(target), value)]
    out: list[ast.stmt] = []
    done: set[str] = set()
    for t, v in zip(target.elts, value.elts):
        if done & {n.id for n in ast.walk(v) if isinstance(n, ast.Name)}:
            return [assign(copy.deepcopy(target), value)]
        if not (isinstance(v, ast.Name) and v.id == t.id):  # type: ignore[attr-defined]
            out.append(assign(name(t.id, True), v))  # type: ignore[attr-defined]
        done.add(t.id)  # type: ignore[attr-defined]
    return out


class Exits:
    """``return`` rewritten as an assignment to ``out`` and a single exit."""

    def __init__(self, ex: Any, out: ast.expr | None, where: str):
        self.ex, self.out, self.where = ex, out, where
        self.flag: str | None = None
        self.guarded = False

    def rewrite(self, body: list[ast.stmt], direct: bool) -> list[ast.stmt] | None:
        """The body with one exit; None when ``direct`` (``out`` is the caller's own
        target) and the body may end without ``return`` (the caller then uses a temporary:
        setting its target to None first could change what the body reads)."""
        code, kind = self._list(body, False)
        if kind != ALWAYS and direct and self.out is not None:
            return None
        if self.guarded:  # a return the rest must know of: again, setting a flag
            self.flag = self.ex.fresh("done", self.where)
            code, kind = self._list(body, False)
            code = [assign(name(self.flag, True), ast.Constant(False)), *code]
        if kind != ALWAYS and self.out is not None:
            code = [assign(copy.deepcopy(self.out), ast.Constant(None)), *code]
        return code or [ast.Pass()]

    def _ret(self, node: ast.Return, in_loop: bool) -> list[ast.stmt]:
        value = node.value if node.value is not None else ast.Constant(None)
        out: list[ast.stmt] = []
        if self.out is not None:
            out.extend(assignments(self.out, value))
        elif not isinstance(value, (ast.Name, ast.Constant)):  # evaluated, result dropped
            out.append(ast.Expr(value))
        if self.flag is not None:
            out.append(assign(name(self.flag, True), ast.Constant(True)))
        return out + ([ast.Break()] if in_loop else [])

    def _guard(self, rest: list[ast.stmt], in_loop: bool) -> tuple[list[ast.stmt], int]:
        self.guarded = True
        flag = name(self.flag or "_")
        if in_loop:
            code, kind = self._list(rest, True)
            return [ast.If(flag, [ast.Break()], []), *code], kind
        code, kind = self._list(rest, False)
        return ([ast.If(ast.UnaryOp(ast.Not(), flag), code, [])] if code else []), kind

    def _list(self, stmts: list[ast.stmt], in_loop: bool) -> tuple[list[ast.stmt], int]:
        out: list[ast.stmt] = []
        kind = NONE
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(s, ast.Return):
                return out + self._ret(s, in_loop), ALWAYS
            if isinstance(s, ast.If):
                (b, kb), (o, ko) = self._list(s.body, in_loop), self._list(s.orelse, in_loop)
                out.append(ast.If(s.test, b or [ast.Pass()], o))
                if kb == ko == NONE:
                    continue
                if kb == ko == ALWAYS:
                    return out, ALWAYS
                if not in_loop and (kb == ALWAYS or ko == ALWAYS) and MAYBE not in (kb, ko):
                    if kb == ALWAYS:  # the rest runs only on the other branch
                        o, k = self._list(s.orelse + rest, False)
                    else:
                        b, k = self._list(s.body + rest, False)
                    out[-1] = ast.If(s.test, b or [ast.Pass()], o)
                    return out, (ALWAYS if k == ALWAYS else MAYBE)
                if MAYBE in (kb, ko) or not in_loop:
                    code, k = self._guard(rest, in_loop)
                    return out + code, (ALWAYS if k == ALWAYS else MAYBE)
                kind = MAYBE  # in a loop, a branch that returned has left by break
                continue
            if isinstance(s, (ast.For, ast.While)):
                b, kb = self._list(s.body, True)
                o, ko = self._list(s.orelse, in_loop)
                loop = copy.copy(s)
                loop.body, loop.orelse = b or [ast.Pass()], o
                out.append(loop)
                if kb != NONE or ko != NONE:
                    code, k = self._guard(rest, in_loop)
                    return out + code, (ALWAYS if k == ALWAYS else MAYBE)
                continue
            out.append(s)
        return out, kind


