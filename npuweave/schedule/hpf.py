"""HPF: the request with the highest priority gets the NPU (ties: first arrived).

Task-level. Non-preemptive by default; ``hpf-p`` (``preemptive=True``) preempts the running
request when one of strictly higher priority arrives.
"""

from __future__ import annotations

from npuweave.schedule.protocol import IDLE, Decision, TaskBase, View, first_by
from npuweave.schedule.task import preempt_for, task_mechanism


class HPF(TaskBase):
    """Highest priority first."""

    name = "hpf"

    def __init__(self, preemptive: bool = False, mechanism: str = "checkpoint",
                 seed: int = 0) -> None:
        self.preemptive = bool(preemptive)
        self.mechanism = task_mechanism(mechanism, self.name)
        if self.preemptive:
            self.name = "hpf-p"

    def decide(self, now: float, view: View) -> Decision:
        best = first_by(view.queued, lambda r: (-r.priority, r.arrival_s))
        if best is None:
            return IDLE
        if not self.preemptive or not view.running:
            return preempt_for(view, best, self.mechanism, False)
        return preempt_for(view, best, self.mechanism,
                           best.priority > view.running[0].priority)
