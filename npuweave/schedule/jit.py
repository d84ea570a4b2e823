"""The one registry of functions npuweave compiles with numba, and the lazy compile step.

numba is the optional ``fast`` extra (``pip install 'npuweave[fast]'``). It is imported
lazily, on the first compiled run, never at import time: importing numba costs about a second,
and a broken numba must not break npuweave. Functions decorated with ``kernel`` stay plain
Python until ``compile`` jits them all and swaps the jitted versions into every registered
module's globals, under their own names and under any alias a module imported them as, so
jitted callers find jitted callees when numba resolves their globals. ``inline=True`` asks
numba to copy a small function into each caller (no call in the hot loop).

Without numba the same copying is done in Python: ``python`` (and, once ``compile`` finds no
numba, each module's loop kernels) runs a version of the loop generated once per process
from its own source with the calls of ``inline=True`` kernels replaced by their bodies
(``npuweave.schedule.inliner``; ``inlined_source`` shows it, ``NPUWEAVE_INLINE=0`` turns it
off). A Python call with twenty arguments costs about a microsecond, more than a decision.
``python(qualname, consts={...})`` also fixes run-constant parameters (flags, a policy code)
and drops the code they rule out (``npuweave.schedule.inline_fold``), then the copies, flags
and dead stores the copying left and repeated reads of table rows (``inline_tidy``,
``inline_rows``).

Examples
--------
>>> from npuweave.schedule import jit
>>> isinstance(jit.available(), bool)
True
"""

from __future__ import annotations

import functools
import importlib.util
import linecache
import logging
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
_PY_AS_WRITTEN: dict[str, Callable[..., Any]] = {}  # python() with NPUWEAVE_INLINE=0
_SPECIAL: dict[Any, Callable[..., Any]] = {}  # python(qualname, consts), by ``_key``
_STANDINS: dict[str, Any] = {}  # a loop kernel's stand-in in its module without numba
_SOURCES: dict[Any, str] = {}  # generated source, by qualname (or ``_key``: specialised)
_NOT_INLINED: dict[Any, str] = {}  # why a function that calls inline kernels runs as it is
_log = logging.getLogger(__name__)


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
        if _COMPILED == [False] and not inline and _calls_inline(f):
            return _deferred(name)  # type: ignore[return-value]
        return f

    return register(fn) if fn is not None else register


def compile() -> bool:
    """Jit every registered function if numba imports; False (plain Python) otherwise."""
    if not _COMPILED:
        try:
            import numba  # noqa: F401
        except Exception:  # ImportError, or a numba that fails against this NumPy
            _COMPILED.append(False)
            _swap({id(f): _deferred(name) for name, f in _PLAIN.items()
                   if name not in _INLINE and _calls_inline(f)})
        else:
            from npuweave.schedule.jit_cache import fresh_cache

            fresh_cache()
            _JITTED.update((name, _FORMS[name]() if name in _FORMS else
                            _jitter(name in _INLINE)(f)) for name, f in _PLAIN.items())
            _swap({id(_PLAIN[name]): j for name, j in _JITTED.items()})
            _COMPILED.append(True)
    return _COMPILED[0]


def _swap(new: dict[int, Any]) -> None:
    """Rebind every registered module's global whose value's id is a key of ``new``."""
    for mod in {f.__module__ for f in _PLAIN.values()}:
        space = vars(sys.modules[mod])
        for key, value in list(space.items()):
            if callable(value) and id(value) in new:
                space[key] = new[id(value)]


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


def python(qualname: str, consts: dict[str, Any] | None = None) -> Callable[..., Any]:
    """A registered function as plain Python whose registered callees stay plain Python too,
    before and after ``compile`` (for Python callers that pass lists, such as the ``Board``).
    Calls of ``inline=True`` kernels in it are copied in (``inlined_source``), unless the
    environment says ``NPUWEAVE_INLINE=0`` at the call (then the function as written).

    ``consts`` (parameter name -> a bool, int, float or None; ``{}`` folds only): the
    function specialised for those values (``npuweave.schedule.inline_fold``): each read of
    such a parameter, in it and in the copies of its inline callees, is the constant,
    constant expressions are computed and branches that cannot run are gone. It takes the
    same arguments and never reads those in ``consts`` (a different value passed there is
    not seen). Built once per process per ``(qualname, consts)``. Raises ``ConstantError``
    (a ``ValueError``) for a name that is not a parameter, a parameter the function
    assigns, or another type of value. ``NPUWEAVE_INLINE=0``: the function as written.

    Examples
    --------
    >>> window = python("npuweave.schedule.buffer.fetch_window")
    >>> window([5], [2.0], [0.5], 0, 1, 0, 10.0, 0.0, 3.0)  # 5 bytes free at 2 s, in by 2.5 s
    5.0
    >>> src = inlined_source("npuweave.schedule.loop_steps.choose", consts={"code": 0})
    >>> body = src.split('"' * 3)[-1]  # after the docstring
    >>> "code ==" in body, "evaluate" in body, "inlined fcfs" in body  # 0: first come first served
    (False, False, True)
    """
    inline = os.environ.get("NPUWEAVE_INLINE") != "0"
    fixed = consts is not None and inline
    cache: dict[Any, Callable[..., Any]] = _SPECIAL if fixed else _PY if inline else _PY_AS_WRITTEN
    key = _key(qualname, consts) if fixed else qualname  # type: ignore[arg-type]
    if key in cache:
        return cache[key]
    f = _PLAIN[qualname]
    space = dict(f.__globals__)
    clone = inline and _inlined(qualname, f, space, consts) or types.FunctionType(
        f.__code__, space, f.__name__, f.__defaults__, f.__closure__)
    cache[key] = clone
    known = _known()
    for name in _names(clone.__code__) & set(space):  # only what it reads: no import-time work
        q = known.get(id(space[name]))
        if q is not None:
            space[name] = python(q)
    return clone


def _key(qualname: str, consts: dict[str, Any]) -> tuple:
    """``python``'s cache key for ``consts``, by type and ``repr`` (``True == 1 == 1.0`` and
    ``0.0 == -0.0`` fold differently; a NaN is not equal to itself)."""
    if not isinstance(consts, dict) or not all(isinstance(k, str) for k in consts):
        raise TypeError(f"consts for {qualname}: a dict of parameter name -> value, not "
                        f"{consts!r:.60}")
    return (qualname, *sorted((k, type(v).__name__, repr(v)) for k, v in consts.items()))


def _names(code: types.CodeType) -> set[str]:
    """The global (and attribute) names ``code`` and the code nested in it read."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _known() -> dict[int, str]:
    """Every form of every registered function, by id: its qualified name."""
    return ({id(v): q for q, v in _PLAIN.items()} | {id(v): q for q, v in _JITTED.items()}
            | {id(v): q for q, v in _PY.items()}
            | {id(v): q for q, v in _PY_AS_WRITTEN.items()}
            | {id(v): q for q, v in _STANDINS.items()})


def _calls_inline(f: Callable[..., Any]) -> bool:
    """Whether ``f`` names an inline kernel (any form of it) among its globals."""
    space = f.__globals__
    known = _known()
    return any(known.get(id(space.get(n))) in _INLINE for n in f.__code__.co_names)


def _deferred(qualname: str) -> Callable[..., Any]:
    """What the modules call for a loop kernel without numba: ``python(qualname)`` (the
    inlined loop, built on the first call), looked up at each call (a loop is called once a
    run, and ``NPUWEAVE_INLINE`` is then read at the call, as ``python`` reads it)."""
    return _STANDINS.setdefault(qualname, _PlainLoop(qualname))


class _PlainLoop:
    """``_deferred``'s stand-in (an object, not a function: code that clones the functions
    it finds in a module's namespace leaves it alone)."""

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname
        functools.update_wrapper(self, _PLAIN[qualname])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return python(self.qualname)(*args, **kwargs)


def _inlined(qualname: str, f: Callable[..., Any], space: dict,
             consts: dict[str, Any] | None = None) -> Any:
    """``f`` with its calls of inline kernels copied in (``npuweave.schedule.inliner``) and
    specialised for ``consts`` (when not None), defined in ``space``; None when that changes
    nothing, or when the inliner refuses (the reason logged at debug level and kept for
    ``inlined_source``). ``python`` calls it only when ``NPUWEAVE_INLINE`` allows."""
    if consts is None and not _calls_inline(f):
        return None
    key: Any = qualname if consts is None else _key(qualname, consts)
    made = _generated(qualname, f, consts, key)
    if made is None:
        return None
    from npuweave.schedule import inliner

    src, aliases = made
    space.update(aliases)
    fixed = "" if consts is None else " " + ", ".join(f"{k}={v!r}" for k, v in consts.items())
    filename = f"<inlined {qualname}{fixed}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    defined: dict[str, Any] = {}
    exec(inliner.code(src, filename), space, defined)  # noqa: S102 (our own code)
    g = defined[f.__name__]
    g.__defaults__, g.__doc__, g.__qualname__ = f.__defaults__, f.__doc__, f.__qualname__
    _SOURCES[key] = src
    return g


def _generated(qualname: str, f: Callable[..., Any], consts: dict[str, Any] | None,
               key: Any) -> tuple[str, dict] | None:
    """The inliner's source and aliases for ``f``; where it refuses to copy a callee in,
    with ``consts``, ``f`` specialised with its calls left as calls. ``ConstantError`` is
    raised: that is the caller's mistake, not a limit of the inliner."""
    from npuweave.schedule import inline_fold, inliner

    known = _known()

    def inline_kernel(obj: Any) -> Any:  # the plain function of an inline kernel's any form
        q = known.get(id(obj))
        return _PLAIN[q] if q in _INLINE else None

    for resolve in (inline_kernel, lambda obj: None)[:1 if consts is None else 2]:
        try:
            return inliner.inline_source(f, resolve, consts)  # type: ignore[arg-type]
        except inline_fold.ConstantError:
            raise
        except Exception as err:  # NotInlinable, or a bug: the function runs as it is
            _NOT_INLINED.setdefault(key, f"{type(err).__name__}: {err}")
            (_log.debug if isinstance(err, inliner.NotInlinable) else _log.warning)(
                "%s runs without inlining: %s", qualname, _NOT_INLINED[key])
    return None


def inlined_source(fn: Callable[..., Any] | str, consts: dict[str, Any] | None = None) -> str:
    """The source that runs as ``fn`` (a registered function, any form of it, or its
    ``module.name``) in plain Python: calls of ``inline=True`` kernels replaced by their
    bodies; with ``consts``, what ``python(fn, consts)`` runs (a function ``python`` made
    with ``consts``: its own source). Tracebacks through it name the file
    ``<inlined module.name>`` (``<inlined module.name flag=value, ...>``).
    Raises ``LookupError`` saying why when there is none (not registered, no inline call,
    ``NPUWEAVE_INLINE=0``, or the inliner refused it).

    Examples
    --------
    >>> src = inlined_source("npuweave.schedule.loop_steps.choose")
    >>> "fcfs(" in src, "'inlined fcfs'" in src
    (False, True)
    """
    made = {id(v): key for key, v in _SPECIAL.items()}
    if consts is None and id(fn) in made and made[id(fn)] in _SOURCES:
        return _SOURCES[made[id(fn)]]
    known = _known()
    q = fn if isinstance(fn, str) else known.get(id(fn), known.get(id(getattr(
        fn, "__wrapped__", None))))
    if q is None or q not in _PLAIN:
        raise LookupError(f"{fn!r} is not a registered kernel")
    inline = os.environ.get("NPUWEAVE_INLINE") != "0"
    key = q if consts is None else _key(q, consts)
    if inline:
        python(q, consts)
        if key in _SOURCES:
            return _SOURCES[key]
    why = _NOT_INLINED.get(key) if inline else "NPUWEAVE_INLINE=0"
    why = why or ("it calls no inline kernel" if not _calls_inline(_PLAIN[q])
                  else "the inliner refused it")
    raise LookupError(f"{q} runs as written: {why}")


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
