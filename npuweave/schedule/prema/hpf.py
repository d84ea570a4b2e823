"""HPF: the highest-priority task runs (ties: first dispatched). Preemptive: a strictly
higher-priority arrival takes the NPU, with a static or dynamic mechanism."""

from __future__ import annotations

from npuweave.schedule.prema.family import PremaFamily
from npuweave.schedule.protocol import RequestView, View, first_by


class PremaHPF(PremaFamily):
    """High priority first."""

    name = "hpf"

    def pick(self, now: float, view: View) -> RequestView | None:
        return first_by(view.queued, lambda r: (-r.priority, r.arrival_s))

    def wins(self, now: float, view: View, best: RequestView, run: RequestView) -> bool:
        return best.priority > run.priority
