"""SJF: the request with the least isolated work left gets the NPU.

Task-level. Work left is estimated from the cost model (``View.remaining_s``: the sum of
``max(compute, fetch)`` over the units still to run), the estimate PREMA's prediction uses.
Non-preemptive by default; ``sjf-p`` (``preemptive=True``) is shortest remaining time first:
an arriving request with less work left than the running one preempts it.
"""

from __future__ import annotations

from npuweave.schedule.protocol import IDLE, Decision, TaskBase, View, first_by
from npuweave.schedule.task import preempt_for, task_mechanism


class SJF(TaskBase):
    """Shortest job first (preemptive: shortest remaining time first)."""

    name = "sjf"

    def __init__(self, preemptive: bool = False, mechanism: str = "checkpoint",
                 seed: int = 0) -> None:
        self.preemptive = bool(preemptive)
        self.mechanism = task_mechanism(mechanism, self.name)
        if self.preemptive:
            self.name = "sjf-p"

    def decide(self, now: float, view: View) -> Decision:
        best = first_by(view.queued, view.remaining_s)
        if best is None:
            return IDLE
        if not self.preemptive or not view.running:
            return preempt_for(view, best, self.mechanism, False)
        return preempt_for(view, best, self.mechanism,
                           view.remaining_s(best) < view.remaining_s(view.running[0]))
