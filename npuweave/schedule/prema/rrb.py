"""RRB: round robin across the DNN *models*, one whole task per turn (PREMA section VI-A).

``groups[tenant]`` names the model type of each tenant (PREMA runs give every task its own
tenant, so two RNN-MT1 tasks share a group); by default every tenant is its own group. The
turn passes to the next group (in group order) that has a waiting task; within a group the
earliest-dispatched task runs. Non-preemptive.
"""

from __future__ import annotations

from npuweave.schedule.prema.family import PremaFamily
from npuweave.schedule.protocol import Decision, RequestView, Run, View


class RRB(PremaFamily):
    """Round robin among models, non-preemptive."""

    name = "rrb"

    last = -1

    def group(self, r: RequestView) -> int:
        return self.groups[r.model] if self.groups is not None else r.model

    def pick(self, now: float, view: View) -> RequestView | None:
        if not view.queued:
            return None
        # order by how far each group is after the last served one (cyclically)
        span = 1 + max(self.group(r) for r in view.queued) + max(self.last, 0)

        def turn(r: RequestView) -> tuple[int, float, int]:
            return ((self.group(r) - self.last - 1) % span, r.arrival_s, r.id)

        return min(view.queued, key=turn)

    def decide(self, now: float, view: View) -> Decision:
        out = super().decide(now, view)
        if isinstance(out, Run):
            chosen = next(r for r in view.queued if r.id == out.request)
            self.last = self.group(chosen)
        return out
