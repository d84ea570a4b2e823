"""The inliner's partial evaluation: run-constant parameters replaced by their values, constant
expressions folded, dead branches removed.

A loop written once for several modes takes its mode as parameters (a policy code, a few
flags) that stay the same for a whole run. numba compiles each test of them into a cheap
branch; run as plain Python, every test costs bytecode at every decision. ``specialise``
rewrites a function's body for given values of such parameters (``jit.python(..., consts=)``):
each read of one becomes the constant, then ``fold`` evaluates what became constant and keeps
only the code that can run. Through the inliner the constants reach the copied helpers (a
helper's parameter bound to a constant is replaced by it), and their bodies are folded too.

What ``fold`` does, on numbers, booleans and None only (never a string, never a call):

* arithmetic, unary operators and comparisons of constants are computed, except where Python
  would raise or warn (left for the run to do so), where the result is not one of those types,
  or where it could be huge (``**`` and ``<<`` with large operands); ``is``/``is not`` only
  against None, True or False;
* ``x if <known> else y`` keeps one side; ``not <known>`` is computed;
* ``a and b``/``a or b`` keep Python's values: a constant that decides the result ends the
  chain (``x and 0 and y`` -> ``x and 0``), one that passes the result on is dropped unless it
  is last (``1 and x`` -> ``x``; ``x and 1`` stays), and in a test, where only truth counts,
  a last one that passes it on is dropped too (``if x and 1:`` -> ``if x:``);
* ``if <known>:`` keeps one branch, ``while <false>:`` keeps its ``else``, ``assert <true>``
  goes, and statements after ``return``/``raise``/``break``/``continue`` go. A test whose truth
  is known but that must still evaluate operands (``if x and 0:``) keeps them as
  ``if x: pass`` before the branch it keeps.

Examples
--------
>>> import ast
>>> tree = ast.parse("if fast and n > 1:\\n    y = 1 if fast else 2\\nelse:\\n    y = 3")
>>> print(ast.unparse(fold(substitute(tree.body, {"fast": True}))))
if n > 1:
    y = 1
else:
    y = 3
"""

from __future__ import annotations

import ast
import copy
import math
import operator
from collections.abc import Mapping
from typing import Any

from npuweave.errors import NpuweaveError

VALUES = (bool, int, float, type(None))  # what a parameter may be fixed to, and what folds
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
        ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
        ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_}
_UNARY = {ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos,
          ast.Invert: operator.invert}
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
        ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Is: operator.is_, ast.IsNot: operator.is_not}
_EXITS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class ConstantError(NpuweaveError, ValueError):
    """A parameter cannot be fixed to the value asked for (``jit.python(..., consts=)``)."""


def check(fdef: ast.FunctionDef, consts: Mapping[str, Any]) -> None:
    """Raise ``ConstantError`` unless each of ``consts`` is fixed to a bool, int, float or
    None and names a parameter of ``fdef`` that nothing in it rebinds, or a name that one
    assignment at its top level binds (``code, flag = pol``) before any read of it, and
    nothing else rebinds (the value bound there is then never read)."""
    params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs]
    for key, value in consts.items():
        if type(value) not in VALUES or type(value) is int and value.bit_length() > 1024:
            raise ConstantError(f"{fdef.name}: {key}={value!r:.40} is a "
                                f"{type(value).__name__}; only a bool, int (of at most 1024 "
                                "bits), float or None can be fixed")
        if key not in params and not _bound_at_top(fdef, key):
            raise ConstantError(f"{fdef.name} has no parameter {key!r} and binds no such name "
                                "once at its top level before reading it; its parameters: "
                                f"{', '.join(params)}")
        where = _rebinding(fdef, key, 0 if key in params else 1)
        if where:
            raise ConstantError(f"{fdef.name} {where}: a name it changes cannot be fixed "
                                "to a constant")


def _bound_at_top(fdef: ast.FunctionDef, key: str) -> bool:
    """Whether a statement of ``fdef``'s top level assigns ``key`` with nothing before it
    (its value included) reading it."""
    for i, s in enumerate(fdef.body):
        if isinstance(s, ast.Assign) and any(isinstance(n, ast.Name) and n.id == key
                                             for t in s.targets for n in ast.walk(t)):
            return not any(isinstance(n, ast.Name) and n.id == key
                           for n in ast.walk(ast.Module([*fdef.body[:i], ast.Expr(s.value)],
                                                        [])))
    return False


def _rebinding(fdef: ast.FunctionDef, key: str, allowed: int) -> str:
    """How ``fdef`` rebinds ``key`` beyond its first ``allowed`` assignments (assigns,
    deletes, shadows it in a nested scope or declares it nonlocal there), or ''."""
    stores = 0
    for node in ast.walk(ast.Module(fdef.body, [])):
        if isinstance(node, ast.Name) and node.id == key and not isinstance(node.ctx, ast.Load):
            stores += 1
            if stores > allowed:
                return f"assigns {key!r} more than once" if allowed else \
                    f"assigns its parameter {key!r}"
        if isinstance(node, (ast.Global, ast.Nonlocal)) and key in node.names:
            return f"declares {key!r} global or nonlocal in a nested function"
        if isinstance(node, _SCOPES[:3]) and key in {a.arg for a in ast.walk(node.args)
                                                     if isinstance(a, ast.arg)}:
            return f"has a nested function with a parameter {key!r}"
    return ""


def frozen(stmts: list[ast.stmt], local: set[str], space: Mapping[str, Any]) -> dict[str, Any]:
    """The module-level names ``stmts`` read (not in ``local``) whose values in ``space``
    are bools, ints, floats or None: numba reads them as compile-time constants, and so
    does a specialised function (the inlined loop already copies its module namespace when
    it is built)."""
    nodes = list(ast.walk(ast.Module(stmts, [])))
    local = local | {a.arg for a in nodes if isinstance(a, ast.arg)}  # a lambda's own
    return {n.id: space[n.id] for n in nodes if isinstance(n, ast.Name)
            and n.id not in local and type(space.get(n.id, ...)) in VALUES}


def literal(value: Any) -> ast.expr:
    """``value`` as an expression that reads back exactly (a negative number as ``-(x)``, so
    that ``ast.unparse`` writes ``(-1) ** 2``, not ``-1 ** 2``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and (
            value < 0 or math.copysign(1.0, value) < 0):
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def known(node: ast.AST) -> tuple[bool, Any]:
    """``(True, value)`` when ``node`` is a constant that folds (``literal``'s forms)."""
    if isinstance(node, ast.Constant) and type(node.value) in VALUES:
        return True, node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(
            node.operand, ast.Constant):
        value = node.operand.value
        if type(value) in (int, float):
            return True, -value  # type: ignore[operator]
    return False, None


class _Substitute(ast.NodeTransformer):
    def __init__(self, consts: Mapping[str, Any]):
        self.consts = consts

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.consts:
            return ast.copy_location(literal(self.consts[node.id]), node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        def single(n: ast.expr) -> bool:
            return _singleton(known(n)[1]) if known(n)[0] else isinstance(
                n, ast.Name) and n.id in self.consts and _singleton(self.consts[n.id])

        keep = _identity_bound(node, single)
        new = copy.copy(node)
        new.left, *rest = [n if i in keep else self.visit(n)
                           for i, n in enumerate([node.left, *node.comparators])]
        new.comparators = rest
        return new


def substitute(stmts: list[ast.stmt], consts: Mapping[str, Any]) -> list[ast.stmt]:
    """``stmts`` (not changed) with each read of a name in ``consts`` replaced by its value
    (``check`` first: nothing may rebind those names)."""
    sub = _Substitute(consts)
    return [sub.visit(copy.deepcopy(s)) for s in stmts]


def fold(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``stmts`` with constant expressions computed and dead code removed (the nodes passed
    in are not changed)."""
    return _Fold().block(stmts)


def fold_expr(node: ast.expr) -> ast.expr:
    """``node`` with its constant parts computed (its value kept, not only its truth)."""
    return _Fold().expr(node)


class _Fold:
    """One pass, bottom-up: new nodes where something folds, never a node changed in place
    (the inliner may hold one node in two places, where one is a test and one a value)."""

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            if out and isinstance(out[-1], _EXITS) and not _binds(s):
                continue  # unreachable
            out.extend(self.stmt(s))
        return out

    def stmt(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, (ast.If, ast.While)):
            pre, truth, test = self.truth(s.test)
            body, orelse = self.block(s.body), self.block(s.orelse)
            if (truth is False or truth is True and isinstance(s, ast.If)) and not _binds(
                    s.orelse if truth else s.body):
                return pre + (body if truth else orelse)
            new = copy.copy(s)
            new.test, new.body, new.orelse = test, body or [ast.Pass()], orelse
            return [new]
        if isinstance(s, ast.Assert):
            test = self.expr(s.test, test=True)
            ok, value = known(test)
            if ok and value:
                return []
            new_assert = copy.copy(s)
            new_assert.test = test
            return [new_assert]
        return [self.generic(s)]

    def truth(self, node: ast.expr) -> tuple[list[ast.stmt], bool | None, ast.expr]:
        """A statement's test folded: statements that must still run first, its truth when
        known (else None), and the folded test."""
        test = self.expr(node, test=True)
        ok, value = known(test)
        if ok:
            return [], bool(value), test
        if isinstance(test, ast.BoolOp) and known(test.values[-1])[0]:
            # a last constant that survives ``_boolop`` in a test decides the truth
            rest = test.values[:-1]
            head = rest[0] if len(rest) == 1 else ast.BoolOp(test.op, rest)
            return [ast.If(head, [ast.Pass()], [])], isinstance(test.op, ast.Or), test
        return [], None, test

    def generic(self, node: Any) -> Any:
        new = copy.copy(node)
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(new, field, self.expr(value))
            elif isinstance(value, ast.AST):
                setattr(new, field, self.generic(value))
            elif isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                block = self.block(value)
                setattr(new, field, block or ([ast.Pass()] if field == "body" else []))
            elif isinstance(value, list):
                setattr(new, field, [self.expr(v) if isinstance(v, ast.expr) else
                                     self.generic(v) if isinstance(v, ast.AST) else v
                                     for v in value])
        return new

    def expr(self, node: ast.expr, test: bool = False) -> ast.expr:
        """``node`` folded; ``test``: only its truth is used (an ``if``/``while`` test, the
        operand of ``not``), so more may go."""
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, test)
        if isinstance(node, ast.IfExp):
            cond = self.expr(node.test, test=True)
            ok, value = known(cond)
            if ok:
                return self.expr(node.body if value else node.orelse, test)
            return ast.IfExp(cond, self.expr(node.body, test), self.expr(node.orelse, test))
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, test=isinstance(node.op, ast.Not))
            return _computed(_UNARY[type(node.op)], [operand], ast.UnaryOp(node.op, operand))
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left), self.expr(node.right)
            return _computed(_BIN.get(type(node.op)), [left, right],
                             ast.BinOp(left, node.op, right))
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if known(node)[0]:
            return node
        return self.generic(node)

    def _boolop(self, node: ast.BoolOp, test: bool) -> ast.expr:
        values = [self.expr(v, test) for v in node.values]
        stop_on = not isinstance(node.op, ast.And)  # the truth that ends the chain
        out: list[ast.expr] = []
        for i, v in enumerate(values):
            ok, value = known(v)
            if ok and bool(value) == stop_on:  # decides: the rest is never evaluated
                out.append(v)
                break
            if ok and (test or i < len(values) - 1):
                continue  # passes the result on to the next operand
            out.append(v)
        if not out:  # only in a test: every operand a constant that passed the result on
            return ast.Constant(not stop_on)
        return out[0] if len(out) == 1 else ast.BoolOp(node.op, out)

    def _compare(self, node: ast.Compare) -> ast.expr:
        folded = [self.expr(n) for n in [node.left, *node.comparators]]
        keep = _identity_bound(ast.Compare(folded[0], node.ops, folded[1:]),
                               lambda n: known(n)[0] and _singleton(known(n)[1]))
        left, *rights = [n if i in keep else folded[i]
                         for i, n in enumerate([node.left, *node.comparators])]
        new = ast.Compare(left, node.ops, rights)
        values = [known(n) for n in (left, *rights)]
        if not all(ok for ok, _ in values) or not all(type(op) in _CMP for op in node.ops):
            return new
        result = True
        for op, (_, a), (_, b) in zip(node.ops, values, values[1:]):
            if isinstance(op, (ast.Is, ast.IsNot)) and not (_singleton(a) or _singleton(b)):
                return new  # identity of numbers is the interpreter's business
            try:
                result = _CMP[type(op)](a, b)
            except TypeError:  # ``None < 1``: the run raises it
                return new
            if not result:
                break
        return ast.Constant(result)


def _computed(fn: Any, operands: list[ast.expr], node: ast.expr) -> ast.expr:
    """``fn(*operands)`` as a constant when every operand is one and Python computes it
    quietly into a small number, a bool or None; else ``node``."""
    values = [known(n) for n in operands]
    if fn is None or not all(ok for ok, _ in values):
        return node
    args = [v for _, v in values]
    if fn is operator.invert and isinstance(args[0], bool):
        return node  # ``~True`` is deprecated: its warning is the run's to give
    if fn in (operator.pow, operator.lshift) and not (all(
            isinstance(a, (int, float)) and abs(a) <= 2 ** 64 for a in args)
            and abs(args[1]) <= 64):
        return node  # could build a huge number
    try:
        result = fn(*args)
    except (ArithmeticError, TypeError, ValueError):
        return node
    if type(result) not in VALUES or isinstance(result, int) and result.bit_length() > 256:
        return node
    return ast.copy_location(literal(result), node)


def _identity_bound(node: ast.Compare, single: Any) -> set[int]:
    """The operands of ``node`` (0: the left one) compared by identity (``is``, ``is not``)
    with another one where neither is ``single`` (None, True or False): left as written,
    since a fixed value in the code is one object where the caller's were distinct ones
    (``x is 0.0`` is False for a float passed in, True between two equal constants)."""
    operands = [node.left, *node.comparators]
    keep: set[int] = set()
    for i, op in enumerate(node.ops):
        if isinstance(op, (ast.Is, ast.IsNot)) and not (single(operands[i])
                                                        or single(operands[i + 1])):
            keep |= {i, i + 1}
    return keep


def _singleton(value: Any) -> bool:
    return value is None or value is True or value is False


def _binds(code: ast.stmt | list[ast.stmt]) -> bool:
    """Whether dead ``code`` still means something: a ``yield`` makes its function a
    generator, ``global``/``nonlocal`` change what a name is in the whole function."""
    return any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal))
               for n in ast.walk(ast.Module(code if isinstance(code, list) else [code], [])))
