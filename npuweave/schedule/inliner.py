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
import inspect
import itertools
import textwrap
from collections.abc import Callable
from types import FunctionType
from typing import Any

__all__ = ["NotInlinable", "inline_source"]

_NONE, _ALWAYS, _MAYBE = 0, 1, 2  # does a statement list return: never, on every path, maybe
_REFUSED = (ast.Try, ast.With, ast.AsyncWith, ast.Global, ast.Nonlocal, ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Yield, ast.YieldFrom,
            ast.Await, ast.Delete, ast.NamedExpr)
_ORDERED = {ast.BinOp: ("left", "right"), ast.UnaryOp: ("operand",),
            ast.Subscript: ("value", "slice"), ast.Attribute: ("value",),
            ast.Tuple: ("elts",), ast.List: ("elts",), ast.Starred: ("value",),
            ast.Slice: ("lower", "upper", "step"), ast.Compare: ("left", "comparators")}


class NotInlinable(Exception):
    """The function cannot be rewritten; the message says why."""


def _definition(fn: FunctionType) -> ast.FunctionDef:
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


def _locals(fdef: ast.FunctionDef) -> set[str]:
    """Parameters and every name the function assigns (Python's rule for a local)."""
    names = {a.arg for a in fdef.args.posonlyargs + fdef.args.args}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
    return names


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        new = self.names.get(node.id)
        if new is None:
            return node
        if isinstance(new, ast.Name):
            return ast.copy_location(ast.Name(new.id, node.ctx), node)
        return ast.copy_location(copy.copy(new), node)


def _name(ident: str, store: bool = False) -> ast.Name:
    return ast.Name(ident, ast.Store() if store else ast.Load())


def _assign(target: ast.expr, value: ast.expr) -> ast.Assign:
    return ast.Assign([target], value, lineno=0)


class _Expander:
    """One root function's expansion: fresh names, aliases and the call stack."""

    def __init__(self, root: FunctionType, resolve: Callable[[Any], Any]):
        self.resolve = resolve
        self.space = root.__globals__
        self.root_locals = _locals(_definition(root))
        self.taken = set(self.space) | set(dir(builtins)) | {
            n.id for n in ast.walk(_definition(root)) if isinstance(n, ast.Name)}
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
        fdef = _definition(fn)
        local = _locals(fdef)
        if self.stack and any(isinstance(n, _REFUSED) for s in fdef.body for n in ast.walk(s)):
            raise NotInlinable(f"{fn.__qualname__} uses try/with/global/nested functions/"
                               "del/yield/:=")
        body = fdef.body
        if self.stack and body and isinstance(body[0], ast.Expr) and isinstance(
                body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body = body[1:]  # a callee's docstring
        self.stack.append(fn)
        try:
            stmts = self._aliased(body, fn.__globals__, local)
            return fdef, local, _Statements(self, fn.__globals__, local).block(stmts)
        finally:
            self.stack.pop()

    def _aliased(self, stmts: list[ast.stmt], glob: dict, local: set[str]) -> list[ast.stmt]:
        """``stmts`` with each free name that means something else in the root's namespace
        (or is a root local there) bound to a fresh alias; inline calls' names kept."""
        names: dict[str, ast.expr] = {}
        skip = {id(n.func) for n in ast.walk(ast.Module(stmts, []))
                if self.callee(n, glob, local) is not None}
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
            names[node.id] = _name(alias)
        rename = _Rename(names)
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
        if not all(isinstance(a, (ast.Name, ast.Constant)) for a in bound):
            return None
        return _Rename(dict(zip(params, bound))).visit(body[0].value)

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
            if isinstance(arg, (ast.Name, ast.Constant)) and p not in stored or isinstance(
                    arg, ast.Name) and arg.id in overwritten and once.count(arg.id) == 1:
                names[p] = arg
            else:
                names[p] = _name(self.fresh(p, where))
                pre.append(_assign(_name(names[p].id, True), arg))  # type: ignore[attr-defined]
        for v in sorted(local - set(params)):
            names[v] = _name(self.fresh(v, where))
        body = [_Rename(names).visit(s) for s in body]
        marker = ast.Expr(ast.Constant(f"inlined {fn.__name__}"))
        if target is not None or discard:
            code = _Exits(self, target, where).rewrite(body, direct=True)
            if code is not None:
                return [marker, *pre, *code], None
        out = _name(self.fresh("r", where))
        code = _Exits(self, out, where).rewrite(body, direct=False)
        assert code is not None
        if target is not None:  # it may end without return: None, as Python would
            return [marker, *pre, *code, _assign(target, out)], None
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
                alias = self.fresh(params[i], "default")
                self.aliases[alias] = defaults[j]
                got[i] = _name(alias)
        return got  # type: ignore[return-value]


def _assignments(target: ast.expr, value: ast.expr) -> list[ast.stmt]:
    """``target = value``; a tuple of names from a tuple one by one where no name is read
    after it is assigned (no tuple built), leaving out ``x = x``."""
    if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
            and all(isinstance(t, ast.Name) for t in target.elts)
            and not any(isinstance(v, ast.Starred) for v in value.elts)):
        return [_assign(copy.deepcopy(target), value)]
    out: list[ast.stmt] = []
    done: set[str] = set()
    for t, v in zip(target.elts, value.elts):
        if done & {n.id for n in ast.walk(v) if isinstance(n, ast.Name)}:
            return [_assign(copy.deepcopy(target), value)]
        if not (isinstance(v, ast.Name) and v.id == t.id):  # type: ignore[attr-defined]
            out.append(_assign(_name(t.id, True), v))  # type: ignore[attr-defined]
        done.add(t.id)  # type: ignore[attr-defined]
    return out


class _Exits:
    """``return`` rewritten as an assignment to ``out`` and a single exit."""

    def __init__(self, ex: _Expander, out: ast.expr | None, where: str):
        self.ex, self.out, self.where = ex, out, where
        self.flag: str | None = None
        self.guarded = False

    def rewrite(self, body: list[ast.stmt], direct: bool) -> list[ast.stmt] | None:
        """The body with one exit; None when ``direct`` (``out`` is the caller's own
        target) and the body may end without ``return`` (the caller then uses a temporary:
        setting its target to None first could change what the body reads)."""
        code, kind = self._list(body, False)
        if kind != _ALWAYS and direct and self.out is not None:
            return None
        if self.guarded:  # a return the rest must know of: again, setting a flag
            self.flag = self.ex.fresh("done", self.where)
            code, kind = self._list(body, False)
            code = [_assign(_name(self.flag, True), ast.Constant(False)), *code]
        if kind != _ALWAYS and self.out is not None:
            code = [_assign(copy.deepcopy(self.out), ast.Constant(None)), *code]
        return code or [ast.Pass()]

    def _ret(self, node: ast.Return, in_loop: bool) -> list[ast.stmt]:
        value = node.value if node.value is not None else ast.Constant(None)
        out: list[ast.stmt] = []
        if self.out is not None:
            out.extend(_assignments(self.out, value))
        elif not isinstance(value, (ast.Name, ast.Constant)):  # evaluated, result dropped
            out.append(ast.Expr(value))
        if self.flag is not None:
            out.append(_assign(_name(self.flag, True), ast.Constant(True)))
        return out + ([ast.Break()] if in_loop else [])

    def _guard(self, rest: list[ast.stmt], in_loop: bool) -> tuple[list[ast.stmt], int]:
        self.guarded = True
        flag = _name(self.flag or "_")
        if in_loop:
            code, kind = self._list(rest, True)
            return [ast.If(flag, [ast.Break()], []), *code], kind
        code, kind = self._list(rest, False)
        return ([ast.If(ast.UnaryOp(ast.Not(), flag), code, [])] if code else []), kind

    def _list(self, stmts: list[ast.stmt], in_loop: bool) -> tuple[list[ast.stmt], int]:
        out: list[ast.stmt] = []
        kind = _NONE
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(s, ast.Return):
                return out + self._ret(s, in_loop), _ALWAYS
            if isinstance(s, ast.If):
                (b, kb), (o, ko) = self._list(s.body, in_loop), self._list(s.orelse, in_loop)
                out.append(ast.If(s.test, b or [ast.Pass()], o))
                if kb == ko == _NONE:
                    continue
                if kb == ko == _ALWAYS:
                    return out, _ALWAYS
                if not in_loop and (kb == _ALWAYS or ko == _ALWAYS) and _MAYBE not in (kb, ko):
                    if kb == _ALWAYS:  # the rest runs only on the other branch
                        o, k = self._list(s.orelse + rest, False)
                    else:
                        b, k = self._list(s.body + rest, False)
                    out[-1] = ast.If(s.test, b or [ast.Pass()], o)
                    return out, (_ALWAYS if k == _ALWAYS else _MAYBE)
                if _MAYBE in (kb, ko) or not in_loop:
                    code, k = self._guard(rest, in_loop)
                    return out + code, (_ALWAYS if k == _ALWAYS else _MAYBE)
                kind = _MAYBE  # in a loop, a branch that returned has left by break
                continue
            if isinstance(s, (ast.For, ast.While)):
                b, kb = self._list(s.body, True)
                o, ko = self._list(s.orelse, in_loop)
                loop = copy.copy(s)
                loop.body, loop.orelse = b or [ast.Pass()], o
                out.append(loop)
                if kb != _NONE or ko != _NONE:
                    code, k = self._guard(rest, in_loop)
                    return out + code, (_ALWAYS if k == _ALWAYS else _MAYBE)
                continue
            out.append(s)
        return out, kind


class _Statements:
    """Inline calls of one function's body expanded, in evaluation order."""

    def __init__(self, ex: _Expander, glob: dict, local: set[str]):
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
                return pre + _assignments(target, flat), None
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
                    pre.append(_assign(_name(tmp, True), e.value))
                    e = ast.Starred(_name(tmp), ast.Load())
                else:
                    pre.append(_assign(_name(tmp, True), e))
                    e = _name(tmp)
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
            return pre + [ast.If(test, pb + [_assign(_name(r, True), b)],
                                 po + [_assign(_name(r, True), o)])], _name(r)
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
        code: list[ast.stmt] = [*(parts[0][0] if first == 0 else []), _assign(_name(r, True),
                                                                             head)]
        inner: list[ast.stmt] = code
        for p, x in parts[max(first, 1):]:
            test: ast.expr = _name(r)
            if isinstance(e.op, ast.Or):
                test = ast.UnaryOp(ast.Not(), test)
            step: list[ast.stmt] = p + [_assign(_name(r, True), x)]
            inner.append(ast.If(test, step, []))
            inner = step
        return code, _name(r)


def inline_source(fn: FunctionType, resolve: Callable[[Any], Any]) -> tuple[str, dict]:
    """``fn``'s source with every call of an inline kernel replaced by its body, and the
    names the copied bodies need bound in ``fn``'s module namespace (``aliases``).

    ``resolve(obj)``: the plain function to copy in when ``obj`` (a global ``fn`` or a
    callee calls by name) is an inline kernel, else None. Raises ``NotInlinable``.
    """
    ex = _Expander(fn, resolve)
    fdef, _, body = ex.body(fn)
    if ast.get_docstring(fdef) is None and isinstance(body[0], ast.Expr) and isinstance(
            body[0].value, ast.Constant) and str(body[0].value.value).startswith("inlined "):
        body = body[1:] or [ast.Pass()]  # a marker would read as the docstring
    new = ast.FunctionDef(fdef.name, fdef.args, body, [], fdef.returns, lineno=1)
    return ast.unparse(ast.fix_missing_locations(ast.Module([new], []))), ex.aliases
