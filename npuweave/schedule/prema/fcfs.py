"""NP-FCFS: the earliest-dispatched task runs to completion (PREMA's baseline, TensorRT-style)."""

from __future__ import annotations

from npuweave.schedule.prema.family import PremaFamily
from npuweave.schedule.protocol import RequestView, View, first_by


class NPFCFS(PremaFamily):
    """First come first served, non-preemptive (the running task is always the oldest)."""

    name = "np-fcfs"

    def pick(self, now: float, view: View) -> RequestView | None:
        return first_by(view.queued, lambda r: r.arrival_s)
