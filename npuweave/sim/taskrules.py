"""A task-level policy's rule as the compiled task loop (``npuweave.sim.taskloop``) takes it:
its two functions, handed to the loop as arguments.

Each rule is stated once, in its policy's module: ``key`` and ``wins`` of a ``Ruled`` policy
(``npuweave.schedule.task``; ``fcfs``, ``hpf``, ``sjf`` and any other registered with
``npuweave.schedule.registry``). This module names none of them. Compiled, each function is
built on its own as a C function (``numba.cfunc``, cached on disk beside its module like the
kernels) and the loop receives the two function pointers: numba types an argument of that
kind by its signature alone, so one compiled loop, cached once, serves every rule, and a new
policy compiles its two small functions (a fraction of a second), never the loop. (A loop
taking the jitted functions themselves is compiled, and misses numba's cache, once per rule;
one that picks a rule by number must name every rule, and numba's cache of the loop does not
notice when that list changes.) Uncompiled (``loop-python``), the loop calls the plain
functions.

Examples
--------
>>> from npuweave.schedule.registry import get_scheduler
>>> key, wins = rule_of(get_scheduler("hpf-p"))
>>> key(0.5, 9, 0.0), rule_of(get_scheduler("rr"))
((-9.0, 0.5), None)
"""

from __future__ import annotations

from typing import Any

from npuweave.schedule import jit
from npuweave.schedule.jit_cfunc import c_function
from npuweave.schedule.task import Key, Ruled, Wins

#: the C signatures of ``key`` and ``wins`` (numba's notation): the types the loop's
#: arrays hold (``npuweave.sim.taskqueue``: times and keys float64, priorities and ids int64)
KEY_SIGNATURE = "UniTuple(float64, 2)(float64, int64, float64)"
WINS_SIGNATURE = "boolean(float64, float64, int64, float64, float64, int64)"

Rule = tuple[Key, Wins]
_BUILT: dict[Rule, tuple[Any, Any]] = {}


def _registered(fn: Any) -> Any:
    """The plain function behind ``fn`` when it is registered with ``npuweave.schedule.jit``
    (a ``kernel`` declared after ``jit.compile`` is the jitted one); else None."""
    fn = getattr(fn, "py_func", fn)
    try:
        return fn if jit.plain(f"{fn.__module__}.{fn.__qualname__}") is fn else None
    except (KeyError, AttributeError):
        return None


def rule_of(policy: Any) -> Rule | None:
    """``policy``'s ``(key, wins)`` as plain functions, when it decides by them alone: a
    ``Ruled`` policy that keeps ``Ruled.decide`` and whose two functions are registered
    kernels (so numba can compile them). None otherwise (the engine decides by its
    ``decide``)."""
    if not isinstance(policy, Ruled) or type(policy).decide is not Ruled.decide:
        return None
    key, wins = _registered(type(policy).key), _registered(type(policy).wins)
    return None if key is None or wins is None else (key, wins)


def compiled(rule: Rule) -> tuple[Any, Any]:
    """``rule``'s functions as numba C functions, for the compiled loop (built once per
    process, cached on disk where the module's folder, or numba's user cache, is writable).
    Call ``jit.compile`` first: the functions' callees are then compiled ones."""
    built = _BUILT.get(rule)
    if built is None:
        built = _BUILT[rule] = (c_function(rule[0], KEY_SIGNATURE),
                                c_function(rule[1], WINS_SIGNATURE))
    return built
