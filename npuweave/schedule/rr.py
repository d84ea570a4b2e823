"""Round robin: requests take turns holding the NPU for a quantum each.

Task-level and preemptive. The policy asks to be woken every ``quantum_s`` seconds; when the
running request has held the NPU for a whole quantum and another request waits, the running
one is preempted (``mechanism``, checkpoint by default) and goes to the back of the line. The
line is ordered by when a request last joined it: its arrival, or its last preemption. A
slice counts only once the request has computed a unit in it: a preemption takes back the
units not started (``npuweave.sim.engine.Engine.take_back``), so a quantum shorter than a
weight fetch would otherwise preempt requests back and forth with no progress.
"""

from __future__ import annotations

from npuweave.errors import ConfigError
from npuweave.schedule.protocol import IDLE, Decision, Preempt, Run, TaskBase, View
from npuweave.schedule.task import task_mechanism

#: Shortest quantum: every quantum is a timer event, and no layer is shorter than 1 us.
MIN_QUANTUM_S = 1e-6


class RoundRobin(TaskBase):
    """Round robin with a fixed quantum (seconds)."""

    name = "rr"

    def __init__(self, quantum_s: float = 1e-3, mechanism: str = "checkpoint",
                 seed: int = 0) -> None:
        if isinstance(quantum_s, bool) or not MIN_QUANTUM_S <= quantum_s < float("inf"):
            raise ConfigError(f'rr: "quantum_s" must be a finite number of seconds >= '
                              f"{MIN_QUANTUM_S:g} (shorter than any layer, a quantum only adds "
                              f"timer events), got {quantum_s!r}")
        self.quantum_s = float(quantum_s)
        self.period_s: float | None = self.quantum_s
        self.mechanism = task_mechanism(mechanism, self.name)
        self.joined: dict[int, float] = {}  # request id -> when it last joined the line
        self.since = 0.0  # when the running request got the NPU
        self.done = -1  # its units computed by then (a slice must compute one to count)

    def decide(self, now: float, view: View) -> Decision:
        if not view.queued:
            return IDLE
        best = min(view.queued, key=lambda r: (self.joined.get(r.id, r.arrival_s), r.id))
        if not view.running:
            self.since, self.done = now, best.progress
            return Run(best.id)
        run = view.running[0]
        if now - self.since < self.quantum_s * (1.0 - 1e-9) or run.progress <= self.done:
            return IDLE
        self.joined[run.id] = now
        self.since, self.done = now, best.progress
        return Preempt(run.id, self.mechanism, best.id)
