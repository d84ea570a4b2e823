"""Helpers shared by the task-level policies (FCFS, SJF, HPF, round robin), and ``Ruled``:
the base of the policies whose whole choice is one order over requests.

A ``Ruled`` policy states its rule once, in its own module, as two small functions on numbers
(registered with ``npuweave.schedule.jit``, so numba compiles them when installed):

* ``key(arrival_s, priority, remaining_s) -> (k0, k1)``: the request with the least
  ``(k0, k1, id)`` gets the NPU;
* ``wins(best_k0, best_k1, best_id, run_k0, run_k1, run_id) -> bool``: a preemptive policy
  preempts the running request for the best queued one when this holds.

``Ruled.decide`` (the reference, in Python) calls them, and so does the serving simulator's
compiled task loop (``npuweave.sim.taskloop``): one statement of the rule, two callers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from npuweave.errors import ConfigError
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


class Ruled(TaskBase):
    """A task-level policy decided by its ``key`` and ``wins`` rule (see the module).

    Subclasses set ``rule`` (the name the compiled loop knows it by, ``npuweave.sim.taskrules``)
    and ``key``/``wins`` (``staticmethod`` of their module's functions: a class attribute keeps
    the plain Python function when numba swaps the module's globals).
    """

    rule: ClassVar[str]
    preemptive_name: ClassVar[str | None] = None  # the name of the preemptive variant
    key: ClassVar[Key]
    wins: ClassVar[Wins]

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
