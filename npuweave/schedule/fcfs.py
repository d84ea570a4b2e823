"""FCFS: the request that arrived first gets the NPU and keeps it to its end.

Task-level and non-preemptive. A preemptive FCFS would preempt a running request for one that
arrived earlier; that can only happen to a request restarted after a kill, so ``fcfs`` with
``preemptive=True`` gives a killed-and-restarted request its place back in arrival order.
"""

from __future__ import annotations

from npuweave.schedule.protocol import IDLE, Decision, TaskBase, View, first_by
from npuweave.schedule.task import preempt_for, task_mechanism


class FCFS(TaskBase):
    """First come, first served at request granularity."""

    name = "fcfs"

    def __init__(self, preemptive: bool = False, mechanism: str = "checkpoint",
                 seed: int = 0) -> None:
        self.preemptive = bool(preemptive)
        self.mechanism = task_mechanism(mechanism, self.name)

    def decide(self, now: float, view: View) -> Decision:
        best = first_by(view.queued, lambda r: r.arrival_s)
        if best is None:
            return IDLE
        if not self.preemptive or not view.running:
            return preempt_for(view, best, self.mechanism, False)
        run = view.running[0]
        return preempt_for(view, best, self.mechanism,
                           (best.arrival_s, best.id) < (run.arrival_s, run.id))
