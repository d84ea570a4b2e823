"""Functions handed to a compiled loop as arguments: numba C functions behind a pointer.

A compiled loop that takes a function as an argument (the task loop takes a policy's rule,
``npuweave.sim.taskrules``) is compiled and cached once for every function of that signature
when the function comes as a C function pointer: numba types such an argument by its
signature alone. This module, with ``npuweave.schedule.jit``, is where npuweave talks to numba;
numba is imported here only when a compiled run asks for a function.
"""

from __future__ import annotations

from typing import Any

from npuweave.errors import ConfigError


def c_function(fn: Any, signature: str) -> Any:
    """``fn`` compiled as a numba C function of ``signature`` (numba's notation, e.g.
    ``"float64(float64, int64)"``), cached on disk beside its module where that is writable,
    wrapped as an argument a compiled loop calls through its address (``_pointer``).
    A ``ConfigError`` names ``fn`` when numba cannot compile it."""
    return _pointer(_cfunc(fn, signature), signature)


def _pointer(cfunc: Any, signature: str) -> Any:
    """``cfunc`` as the loop's argument: an object numba types by reading ``_numba_type_``
    (the dispatcher's fast path: about 8 us a call with both functions) and calls through
    ``__wrapper_address__``. (A ``CFunc`` itself is typed by a Python call that builds its
    type anew, about 0.3 ms per argument per call of the loop.)"""
    from numba.core import sigutils
    from numba.core.types import FunctionType, WrapperAddressProtocol
    from numba.core.typing import signature as make

    args, ret = sigutils.normalize_signature(signature)
    sig = make(ret, *args)
    address = int(cfunc.address)

    class Pointer(WrapperAddressProtocol):
        _numba_type_ = FunctionType(sig)
        compiled = cfunc  # kept alive with the pointer

        def __wrapper_address__(self) -> int:
            return address

        def signature(self) -> Any:
            return sig

    return Pointer()


def _cfunc(fn: Any, signature: str) -> Any:
    """``fn`` as a numba C function of ``signature``; a ConfigError names it when numba cannot
    compile it (a rule must be a function on numbers, ``npuweave.schedule.task``)."""
    from numba import cfunc  # only on a compiled run
    from numba.core.errors import NumbaError

    try:
        try:
            return cfunc(signature, cache=True)(fn)
        except RuntimeError as exc:  # no file to cache it beside (a function made at run time)
            if "cannot cache" not in str(exc):
                raise
            return cfunc(signature)(fn)
    except NumbaError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{fn.__module__}.{fn.__qualname__}: numba cannot compile this rule "
                          f"function as {signature} ({first}); write it on numbers only "
                          "(npuweave.schedule.task), or run with stretch='off'") from None
