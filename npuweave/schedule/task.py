"""Helpers shared by the task-level policies (FCFS, SJF, HPF, round robin), and ``Ruled``:
the base of the policies whose whole choice is one order over requests.

A ``Ruled`` policy states its rule once, in its own module, as small functions on numbers
(registered with ``npuweave.schedule.jit``, so numba compiles them when installed):

* ``key(arrival_s, priority, remaining_s) -> (k0, k1)``: the request with the least
  ``(k0, k1, id)`` gets the NPU;
* ``wins(best_k0, best_k1, best_id, run_k0, run_k1, run_id) -> bool``: a preemptive policy
  preempts the running request for the best queued one when this holds; by default
  (``ahead``) when the best one's ``k0`` is strictly less (a tie never preempts).

The class names them: ``class HPF(Ruled, key=key)`` (and ``wins=...`` where the default does
not hold). ``Ruled.decide`` (the reference, in Python) calls them, and so does the serving
simulator's compiled task loop (``npuweave.sim.taskloop``, handed them by
``npuweave.sim.taskrules``): one statement of the rule, two callers. A new policy of this kind
is its module and one registry entry (``npuweave.schedule.registry``); it runs in the
compiled loop as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from npuweave.errors import ConfigError
from npuweave.schedule import jit
from npuweave.schedule.protocol import (
    IDLE,
    Decision,
    Mechanism,
    Preempt,
    RequestView,
    Run,
    TaskBase,
    View,
    first_by,
)


def task_mechanism(name: str | Mechanism, policy: str) -> Mechanism:
    """A ``Mechanism`` from its name; a ConfigError names the valid ones."""
    if isinstance(name, Mechanism):
        return name
    try:
        return Mechanism(name)
    except ValueError:
        valid = ", ".join(m.value for m in Mechanism)
        raise ConfigError(f"{policy}: unknown preemption mechanism {name!r}; choose one of: "
                          f"{valid}") from None


def preempt_for(view: View, best: RequestView, mechanism: Mechanism,
                wins: bool) -> Decision:
    """Run ``best`` when the NPU is free; preempt the running request for it when ``wins``."""
    if not view.running:
        return Run(best.id)
    if wins:
        return Preempt(view.running[0].id, mechanism, best.id)
    return IDLE


Key = Callable[[float, int, float], tuple[float, float]]
Wins = Callable[[float, float, int, float, float, int], bool]


@jit.kernel(inline=True)
def ahead(best_k0, best_k1, best_id, run_k0, run_k1, run_id):
    """``wins`` by default: the best queued request's ``k0`` is strictly less."""
    return best_k0 < run_k0


class Ruled(TaskBase):
    """A task-level policy decided by its ``key`` and ``wins`` rule (see the module).

    A subclass passes its module's functions as class arguments (``class P(Ruled, key=key,
    wins=wins)``; ``wins`` defaults to ``ahead``); they are kept as static methods, so the
    class holds the plain Python functions when numba swaps the module's globals.
    """

    preemptive_name: ClassVar[str | None] = None  # the name of the preemptive variant
    key: ClassVar[Key]
    wins: ClassVar[Wins] = staticmethod(ahead)

    def __init_subclass__(cls, key: Key | None = None, wins: Wins | None = None,
                          **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        for name, fn in (("key", key), ("wins", wins)):
            if fn is not None:
                setattr(cls, name, staticmethod(fn))

    def __init__(self, preemptive: bool = False, mechanism: str = "checkpoint",
                 seed: int = 0) -> None:
        self.preemptive = bool(preemptive)
        self.mechanism = task_mechanism(mechanism, self.name)
        if self.preemptive and self.preemptive_name:
            self.name = self.preemptive_name

    def decide(self, now: float, view: View) -> Decision:
        rest, key, wins = view.remaining_s, type(self).key, type(self).wins

        def order(r: RequestView) -> tuple[float, float]:
            return key(r.arrival_s, r.priority, rest(r))

        best = first_by(view.queued, order)
        if best is None:
            return IDLE
        if not self.preemptive or not view.running:
            return preempt_for(view, best, self.mechanism, False)
        run = view.running[0]
        (b0, b1), (r0, r1) = order(best), order(run)
        return preempt_for(view, best, self.mechanism, wins(b0, b1, best.id, r0, r1, run.id))
