"""The one registry of functions npuweave compiles with numba, and the lazy compile step.

numba is the optional ``fast`` extra (``pip install 'npuweave[fast]'``). It is imported
lazily, on the first compiled run, never at import time: importing numba costs about a second,
and a broken numba must not break npuweave. Functions decorated with ``kernel`` stay plain
Python until ``compile`` jits them all and swaps the jitted versions into every registered
module's globals, under their own names and under any alias a module imported them as, so
jitted callers find jitted callees when numba resolves their globals. ``inline=True`` asks
numba to copy a small function into each caller (no call in the hot loop).

Examples
--------
>>> from npuweave.schedule import jit
>>> isinstance(jit.available(), bool)
True
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_PLAIN: dict[str, Callable[..., Any]] = {}
_INLINE: set[str] = set()
_COMPILED: list[bool] = []  # empty: not tried yet; [True] or [False] afterwards
_JITTED: dict[str, Any] = {}
_PY: dict[str, Callable[..., Any]] = {}
_FORMS: dict[str, Callable[[], Any]] = {}  # a compiled form other than numba's jit of the source


def _jitter(inline: bool) -> Callable[[F], F]:
    from numba import njit

    return njit(cache=True, inline="always") if inline else njit(cache=True)  # type: ignore


def kernel(fn: F | None = None, *, inline: bool = False) -> Any:
    """Register ``fn`` (a function on numbers and NumPy arrays) for compilation."""
    def register(f: F) -> F:
        name = f"{f.__module__}.{f.__name__}"
        _PLAIN[name] = f
        if inline:
            _INLINE.add(name)
        if _COMPILED == [True]:  # a module imported after the others were compiled
            return _jitter(inline)(f)
        return f

    return register(fn) if fn is not None else register


def compile() -> bool:
    """Jit every registered function if numba imports; False (plain Python) otherwise."""
    if not _COMPILED:
        try:
            import numba  # noqa: F401
        except Exception:  # ImportError, or a numba that fails against this NumPy
            _COMPILED.append(False)
        else:
            _JITTED.update((name, _FORMS[name]() if name in _FORMS else
                            _jitter(name in _INLINE)(f)) for name, f in _PLAIN.items())
            jitted = {id(_PLAIN[name]): j for name, j in _JITTED.items()}
            for mod in {f.__module__ for f in _PLAIN.values()}:
                space = vars(sys.modules[mod])
                for key, value in list(space.items()):
                    if callable(value) and id(value) in jitted:
                        space[key] = jitted[id(value)]
            _COMPILED.append(True)
    return _COMPILED[0]


def borrow(arrays: tuple) -> tuple:
    """``arrays`` (a tuple of arrays) unchanged; compiled, the same arrays without reference
    counting, for a loop whose caller owns them.

    numba counts references at every alias of an array, and an inlined callee's parameters
    are aliases: a loop that hands twenty arrays to its inlined steps at each decision pays
    two atomic operations per array per decision (about nine tenths of the closed-loop
    kernel's time, issue 23), which numba's pruning cannot remove across the steps' own loops.
    A borrowed array has no owner record, so those operations do nothing. Borrow only
    arguments that the Python caller keeps alive for the call, never an array the loop
    allocates, and never return one.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros(2)
    >>> borrow((a,))[0] is a
    True
    """
    return arrays


def _borrowed() -> Any:
    """``borrow``'s compiled form: each array's owner record (meminfo) and parent set to null."""
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    tuple_type: Any = types.BaseTuple  # numba's types are untyped for mypy
    array_type: Any = types.Array

    @intrinsic
    def borrowed(typingctx: Any, arrays: Any) -> Any:
        if not (isinstance(arrays, tuple_type) and all(isinstance(a, array_type)
                                                       for a in arrays)):
            return None

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            out = []
            for ty, value in zip(arrays.types, cgutils.unpack_tuple(builder, args[0])):
                ary = context.make_array(ty)(context, builder, value=value)
                ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
                ary.parent = cgutils.get_null_value(ary.parent.type)
                out.append(ary._getvalue())
            return context.make_tuple(builder, arrays, out)

        return arrays(arrays), codegen

    return borrowed


_PLAIN[f"{__name__}.borrow"] = borrow
_FORMS[f"{__name__}.borrow"] = _borrowed


def plain(qualname: str) -> Callable[..., Any]:
    """The plain-Python version of a registered function (``module.name``)."""
    return _PLAIN[qualname]


def python(qualname: str) -> Callable[..., Any]:
    """A registered function as plain Python whose registered callees stay plain Python too,
    before and after ``compile`` (for Python callers that pass lists, such as the ``Board``).

    Examples
    --------
    >>> window = python("npuweave.schedule.buffer.fetch_window")
    >>> window([5], [2.0], [0.5], 0, 1, 0, 10.0, 0.0, 3.0)  # 5 bytes free at 2 s, in by 2.5 s
    5.0
    """
    if qualname in _PY:
        return _PY[qualname]
    f = _PLAIN[qualname]
    space = dict(f.__globals__)
    clone = types.FunctionType(f.__code__, space, f.__name__, f.__defaults__, f.__closure__)
    _PY[qualname] = clone
    known = {id(v): q for q, v in _PLAIN.items()} | {id(v): q for q, v in _JITTED.items()}
    for key, value in list(space.items()):
        q = known.get(id(value))
        if q is not None:
            space[key] = python(q)
    return clone


def cached(qualname: str) -> bool:
    """Whether calling the registered function (``module.name``) compiles nothing new: it
    ran in this process already, or numba's on-disk cache holds it for its current source.
    Unknown (numba's cache layout changed, not compiled): True, so nothing is announced.
    Only the function's own entry is looked at, not its callees'.
    """
    fn = _JITTED.get(qualname)
    if fn is None:
        return True
    try:
        return bool(fn.signatures) or bool(fn._cache._cache_file._load_index())
    except Exception:  # numba's private cache API moved
        return True


def announce(qualname: str, what: str, cpu_s: int) -> None:
    """Before a first call that compiles ``qualname`` from scratch, say so on standard error
    (one line, only to a terminal, and not with ``NPUWEAVE_QUIET=1``): numba compiles the
    serving loops once per installation, which takes tens of seconds that would otherwise
    look like a hang. ``cpu_s``: about how long it takes (measured, docs/BENCHMARKS.md)."""
    if (os.environ.get("NPUWEAVE_QUIET") == "1" or not sys.stderr.isatty()
            or cached(qualname)):
        return
    print(f"npuweave: compiling {what} with numba (first run only, about {cpu_s} s of CPU; "
          "cached for later runs)...", file=sys.stderr, flush=True)


def loaded() -> bool:
    """Whether this process has already swapped in the compiled functions."""
    return _COMPILED == [True]


def available() -> bool:
    """Whether the functions can be compiled (numba is installed; not imported by this check).

    Without numba they run as plain Python: correct, but slower than the reference paths.
    """
    if _COMPILED:
        return _COMPILED[0]
    return importlib.util.find_spec("numba") is not None
