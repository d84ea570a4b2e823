"""Helpers shared by the task-level policies (FCFS, SJF, HPF, round robin)."""

from __future__ import annotations

from npuweave.errors import ConfigError
from npuweave.schedule.protocol import (
    IDLE,
    Decision,
    Mechanism,
    Preempt,
    RequestView,
    Run,
    View,
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
