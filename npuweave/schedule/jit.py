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
            _JITTED.update((name, _jitter(name in _INLINE)(f)) for name, f in _PLAIN.items())
            jitted = {id(_PLAIN[name]): j for name, j in _JITTED.items()}
            for mod in {f.__module__ for f in _PLAIN.values()}:
                space = vars(sys.modules[mod])
                for key, value in list(space.items()):
                    if callable(value) and id(value) in jitted:
                        space[key] = jitted[id(value)]
            _COMPILED.append(True)
    return _COMPILED[0]


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
