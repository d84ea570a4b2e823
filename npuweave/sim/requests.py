"""``Request``: the one noun for work in the serving simulator.

A request is one inference (of ``batch`` inputs) of one model, issued at ``arrival_s``. The
simulator owns every request and is the only writer of its fields; policies read them through
the view (``npuweave.schedule.protocol.View``) and answer with a decision. ``progress`` counts
the units whose computation has finished, so a checkpointed request resumes at unit
``progress`` and a killed one restarts at 0.

Examples
--------
>>> r = Request(0, model=1, arrival_s=0.5, priority=3, deadline_s=0.6, units=4)
>>> r.state.value, r.remaining_units, r.slack_s(0.55)
('queued', 4, 0.04999999999999993)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum


class State(Enum):
    """Where a request is in its life; ``DONE`` and ``KILLED`` are final."""

    QUEUED = "queued"
    RUNNING = "running"
    PREEMPTED = "preempted"
    DONE = "done"
    KILLED = "killed"


@dataclass(slots=True, eq=False)
class Request:
    """One request; fields after ``batch`` are the simulator's bookkeeping.

    Attributes
    ----------
    id : index of the request in the run, in arrival order (ties: model order).
    model : index into the run's models (the tenant that serves it).
    arrival_s : issue time, seconds from the start of the run.
    priority : larger is more important (PREMA's 1 / 3 / 9 are plain integers here).
    deadline_s : absolute deadline in seconds (``inf``: none).
    batch : inputs served by this request.
    units : scheduling units of one pass through the model.
    state : see ``State``.
    progress : units whose computation has finished (the resume point).
    dispatched : units handed to the NPU in the current pass (>= ``progress``).
    start_s, finish_s : first computation start and last computation end (``nan`` before).
    preemptions : times this request was preempted (checkpoint, kill or drain).
    restarts : times it was killed and restarted from unit 0.
    overhead_s : DMA seconds spent storing and restoring its checkpoints.
    wasted_s : PE seconds of work thrown away by kills.
    restore_bytes : bytes to load before it resumes (its last checkpoint; 0 when none).
    """

    id: int
    model: int
    arrival_s: float
    priority: int = 0
    deadline_s: float = math.inf
    batch: int = 1
    units: int = 0
    state: State = State.QUEUED
    progress: int = 0
    dispatched: int = 0
    start_s: float = math.nan
    finish_s: float = math.nan
    preemptions: int = 0
    restarts: int = 0
    overhead_s: float = 0.0
    wasted_s: float = 0.0
    restore_bytes: int = 0

    @property
    def remaining_units(self) -> int:
        """Units still to compute in the current pass."""
        return self.units - self.progress

    @property
    def done(self) -> bool:
        return self.state is State.DONE

    @property
    def latency_s(self) -> float:
        """Finish minus arrival (``nan`` until done)."""
        return self.finish_s - self.arrival_s

    def slack_s(self, now: float) -> float:
        """Seconds left before the deadline at ``now`` (``inf`` without a deadline)."""
        return self.deadline_s - now
