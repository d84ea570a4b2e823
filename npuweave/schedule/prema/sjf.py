"""SJF: the shortest *estimated* job runs (PREMA's predictor, not the true length).
Preemptive: a waiting task with a shorter estimated job takes the NPU (SRTF by default,
``job_length`` of the reading)."""

from __future__ import annotations

from npuweave.schedule.prema.family import PremaFamily
from npuweave.schedule.protocol import RequestView, View, first_by


class PremaSJF(PremaFamily):
    """Shortest estimated job first."""

    name = "sjf"

    def pick(self, now: float, view: View) -> RequestView | None:
        return first_by(view.queued, lambda r: self.length(view, r))

    def wins(self, now: float, view: View, best: RequestView, run: RequestView) -> bool:
        return self.length(view, best) < self.length(view, run)
