"""A loop with its small helpers copied in, as plain Python source generated from its own.

Without numba, a compiled loop runs as plain Python, and every call of an ``inline=True``
kernel costs a Python call (about 1 us with 20 arguments, more than the decision itself).
``inline_source`` rewrites a function's syntax tree so that each such call is replaced by
the callee's body, which is how numba treats them: the loop stays written once, with its
steps in their own functions, and runs without the calls.

The rewrite of one call: every local name of the callee gets a fresh name; a parameter whose
argument is a plain name or a constant (and that the callee never assigns) is replaced by
that argument, any other argument is evaluated once, in order, into the renamed parameter;
each ``return`` becomes an assignment to the call's result, followed by ``break`` inside a
loop and a ``_done`` flag that guards what follows (single exit). An argument or operand
evaluated before an inlined call is kept in a temporary first, so evaluation order is
unchanged; ``and``/``or``/``x if c else y`` with an inlined call become ``if`` statements, a
``while`` test with one is evaluated at the top of ``while True``. Names the callee reads
from its own module are bound in the caller's namespace under fresh names (``aliases``).

``inline_source(fn, resolve, consts)`` also specialises ``fn`` for fixed values of some of
its parameters (or names its top level binds once): ``npuweave.schedule.inline_fold``; the
specialised body is then cleaned of the copies, flags and dead stores the copying left
(``npuweave.schedule.inline_tidy``) and reads the rows of its tables once
(``npuweave.schedule.inline_rows``).

What it does not copy in (``NotInlinable``, with the reason): recursion, ``*args`` and
``**kwargs``, keyword-only parameters, a callee with ``try``/``with``/``global``/nested
functions, generators, and an inlined call inside a comprehension, a lambda, an assignment
target or a ``while ... else``.

Examples
--------
>>> def twice(x):
...     return 2 * x
>>> def f(a):
...     return twice(a + 1) - 1
>>> src, aliases = inline_source(f, lambda obj: obj if obj is twice else None)
>>> print(src)
def f(a):
    x_twice1 = a + 1
    r_twice2 = 2 * x_twice1
    return r_twice2 - 1
"""

from __future__ import annotations

import ast
import builtins
import copy
import itertools
from collections.abc import Callable
from types import FunctionType
from typing import Any

from npuweave.schedule.inline_fold import (
    VALUES,
    check,
    fold,
    fold_expr,
    frozen,
    known,
    literal,
    substitute,
)
from npuweave.schedule.inline_order import Statements
from npuweave.schedule.inline_rows import rows
from npuweave.schedule.inline_steps import (
    Exits,
    NotInlinable,
    Rename,
    assign,
    definition,
    local_names,
    name,
)
from npuweave.schedule.inline_tidy import steady, stores, tidy

__all__ = ["NotInlinable", "code", "inline_source"]

_REFUSED = (ast.Try, ast.With, ast.AsyncWith, ast.Global, ast.Nonlocal, ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Yield, ast.YieldFrom,
            ast.Await, ast.Delete, ast.NamedExpr)


class _Expander:
    """One root function's expansion: fresh names, aliases and the call stack."""

    def __init__(self, root: FunctionType, resolve: Callable[[Any], Any],
                 consts: dict[str, Any] | None):
        self.resolve = resolve
        self.consts = consts  # None: no partial evaluation (``inline_fold``)
        self.space = root.__globals__
        self.root_locals = local_names(definition(root))
        self.taken = set(self.space) | set(dir(builtins)) | {
            n.id for n in ast.walk(definition(root)) if isinstance(n, ast.Name)}
        self.aliases: dict[str, Any] = {}
        self.stack: list[FunctionType] = []
        self.count = itertools.count(1)

    def fresh(self, hint: str, where: str) -> str:
        while True:
            name = f"{hint}_{where.lstrip('_')}{next(self.count)}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def callee(self, node: ast.AST, glob: dict, local: set[str]) -> FunctionType | None:
        """The inline kernel ``node`` calls (a name bound in ``glob``), or None."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id not in local):
            return None
        target = self.resolve(glob.get(node.func.id))
        if target is not None and (any(isinstance(a, ast.Starred) for a in node.args)
                                   or any(k.arg is None for k in node.keywords)):
            raise NotInlinable(f"call of {node.func.id} with * or ** arguments")
        return target

    def body(self, fn: FunctionType) -> tuple[ast.FunctionDef, set[str], list[ast.stmt]]:
        """``fn``'s definition, locals and body with its own inline calls expanded and the
        names it reads from its module made valid in the root's namespace."""
        if fn in self.stack:
            raise NotInlinable(f"{fn.__qualname__} calls itself (through "
                               f"{' -> '.join(f.__name__ for f in self.stack)})")
        fdef = definition(fn)
        local = local_names(fdef)
        if self.stack and any(isinstance(n, _REFUSED) for s in fdef.body for n in ast.walk(s)):
            raise NotInlinable(f"{fn.__qualname__} uses try/with/global/nested functions/"
                               "del/yield/:=")
        body = fdef.body
        if self.stack and body and isinstance(body[0], ast.Expr) and isinstance(
                body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body = body[1:]  # a callee's docstring
        if self.consts is not None:  # specialised: its module's constants and ``consts``
            fixed = frozen(body, local, fn.__globals__)
            if not self.stack:
                check(fdef, self.consts)
                fixed.update(self.consts)
            body = fold(substitute(body, fixed))
        self.stack.append(fn)
        try:
            stmts = self._aliased(body, fn.__globals__, local)
            return fdef, local, Statements(self, fn.__globals__, local).block(stmts)
        finally:
            self.stack.pop()

    def _aliased(self, stmts: list[ast.stmt], glob: dict, local: set[str]) -> list[ast.stmt]:
        """``stmts`` with each free name that means something else in the root's namespace
        (or is a root local there) bound to a fresh alias; inline calls' names kept."""
        names: dict[str, ast.expr] = {}
        skip = {id(n.func) for n in ast.walk(ast.Module(stmts, []))
                if isinstance(n, ast.Call) and self.callee(n, glob, local) is not None}
        for node in ast.walk(ast.Module(stmts, [])):
            if not isinstance(node, ast.Name) or node.id in local or id(node) in skip:
                continue
            if node.id in names or glob is self.space and node.id not in self.root_locals:
                continue
            missing = object()
            obj = glob.get(node.id, getattr(builtins, node.id, missing))
            if obj is missing:
                raise NotInlinable(f"name {node.id!r} is not defined")
            if self.space.get(node.id, getattr(builtins, node.id, missing)) is obj and \
                    node.id not in self.root_locals:
                continue
            alias = self.fresh(node.id, "g")
            self.aliases[alias] = obj
            names[node.id] = name(alias)
        rename = Rename(names)
        return [rename.visit(copy.deepcopy(s)) for s in stmts] if names else stmts

    def expression(self, fn: FunctionType, node: ast.Call,
                   args: list[ast.expr]) -> ast.expr | None:
        """The call as one expression when ``fn`` is ``return <expression>`` of its
        parameters and every argument is a name or a constant; else None."""
        fdef, local, body = self.body(fn)
        params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        if not (len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value
                and local == set(params)):
            return None
        bound = self._bind(fn, params, node, args)
        if not all(isinstance(a, ast.Name) or _fixed(a) for a in bound):
            return None
        flat = Rename(dict(zip(params, bound))).visit(body[0].value)
        return flat if self.consts is None else fold_expr(flat)

    def call(self, fn: FunctionType, node: ast.Call, args: list[ast.expr],
             target: ast.expr | None, discard: bool) -> tuple[list[ast.stmt], ast.expr | None]:
        """Statements computing the call ``node`` of ``fn`` (arguments already evaluated as
        ``args``: names, constants or temporaries), the result in ``target`` or a new
        temporary (returned; None when ``target`` was given or the result is dropped:
        ``discard``)."""
        fdef, local, body = self.body(fn)
        where = fn.__name__
        params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        bound = self._bind(fn, params, node, args)
        stored = {n.id for n in ast.walk(ast.Module(body, []))
                  if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        names: dict[str, ast.expr] = {}
        pre: list[ast.stmt] = []
        # a parameter the callee assigns may work on the caller's own variable when the call
        # assigns that variable anyway (``head = step(head)``) and passes it only once
        overwritten = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} if target else set()
        once = [a.id for a in bound if isinstance(a, ast.Name)]
        for p, arg in zip(params, bound):
            if (isinstance(arg, ast.Name) or _fixed(arg)) and p not in stored or isinstance(
                    arg, ast.Name) and arg.id in overwritten and once.count(arg.id) == 1:
                names[p] = arg
            else:
                names[p] = name(self.fresh(p, where))
                pre.append(assign(name(names[p].id, True), arg))  # type: ignore[attr-defined]
        for v in sorted(local - set(params)):
            names[v] = name(self.fresh(v, where))
        body = [Rename(names).visit(s) for s in body]
        body = body if self.consts is None else fold(body) or [ast.Pass()]  # constants came in
        marker = ast.Expr(ast.Constant(f"inlined {fn.__name__}"))
        if target is not None or discard:
            code = Exits(self, target, where).rewrite(body, direct=True)
            if code is not None:
                return [marker, *pre, *code], None
        out = name(self.fresh("r", where))
        code = Exits(self, out, where).rewrite(body, direct=False)
        assert code is not None
        if target is not None:  # it may end without return: None, as Python would
            return [marker, *pre, *code, assign(target, out)], None
        return [marker, *pre, *code], out

    def _bind(self, fn: FunctionType, params: list[str], node: ast.Call,
              args: list[ast.expr]) -> list[ast.expr]:
        """The argument expression of each parameter (defaults as aliases)."""
        if len(args) > len(params):
            raise NotInlinable(f"{fn.__name__} called with {len(args)} arguments")
        got: list[ast.expr | None] = [*args, *[None] * (len(params) - len(args))]
        for k in node.keywords:
            if k.arg not in params or got[params.index(k.arg)] is not None:
                raise NotInlinable(f"{fn.__name__} called with keyword {k.arg}")
            got[params.index(k.arg)] = k.value
        defaults = fn.__defaults__ or ()
        for i, g in enumerate(got):
            j = i - (len(params) - len(defaults))
            if g is None:
                if j < 0:
                    raise NotInlinable(f"{fn.__name__} called without {params[i]}")
                if self.consts is not None and type(defaults[j]) in VALUES:
                    got[i] = literal(defaults[j])
                    continue
                alias = self.fresh(params[i], "default")
                self.aliases[alias] = defaults[j]
                got[i] = name(alias)
        return got  # type: ignore[return-value]


def _fixed(arg: ast.expr) -> bool:
    """Whether ``arg`` is a constant (a negative number included) that may replace a
    parameter."""
    return isinstance(arg, ast.Constant) or known(arg)[0]


def inline_source(fn: FunctionType, resolve: Callable[[Any], Any],
                  consts: dict[str, Any] | None = None) -> tuple[str, dict]:
    """``fn``'s source with every call of an inline kernel replaced by its body, and the
    names the copied bodies need bound in ``fn``'s module namespace (``aliases``).

    ``resolve(obj)``: the plain function to copy in when ``obj`` (a global ``fn`` or a
    callee calls by name) is an inline kernel, else None. Raises ``NotInlinable``.
    ``consts`` (parameter name -> bool, int, float or None): ``fn`` specialised for those
    values, folded and without dead code (``inline_fold``; ``{}`` folds only); the
    parameters stay in the signature, unread. Raises ``inline_fold.ConstantError`` for a
    name that is not a parameter, a parameter ``fn`` rebinds, or another type of value.
    """
    ex = _Expander(fn, resolve, None if consts is None else dict(consts))
    fdef, _, body = ex.body(fn)
    if consts is not None:
        params = {a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg)}
        bound = frozenset(v for s in fdef.body for v in stores(s))  # before dead code went
        body = steady(rows(tidy(fold(body) or [ast.Pass()], params, bound), params))
    if ast.get_docstring(fdef) is None and isinstance(body[0], ast.Expr) and isinstance(
            body[0].value, ast.Constant) and str(body[0].value.value).startswith("inlined "):
        body = body[1:] or [ast.Pass()]  # a marker would read as the docstring
    new = ast.FunctionDef(fdef.name, fdef.args, body, [], fdef.returns, lineno=1)
    return ast.unparse(ast.fix_missing_locations(ast.Module([new], []))), ex.aliases


def code(src: str, filename: str) -> Any:
    """``src`` (``inline_source``'s) compiled, without its ``'inlined name'`` markers: each
    would run as a ``NOP`` (it keeps its line for tracing), a few per decision in a loop.
    The other statements keep their lines in ``src`` (tracebacks and ``linecache``)."""
    tree = ast.parse(src)
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(map(_marker, block)):
                setattr(node, field, [s for s in block if not _marker(s)] or [
                    ast.Pass(lineno=block[0].lineno, col_offset=block[0].col_offset)])
    return builtins.compile(tree, filename, "exec")


def _marker(s: ast.AST) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(
        s.value.value, str) and s.value.value.startswith("inlined ")
