"""TOKEN: Algorithm 2's candidates (tokens at or above the threshold), served first come
first served among them (PREMA section VI-A). Preemptive: the running task competes with its
token frozen; the NPU changes hands when the pick differs (the reading's ``preempt_gate``)."""

from __future__ import annotations

from npuweave.schedule.prema.family import PremaFamily
from npuweave.schedule.prema.tokens import candidates, threshold
from npuweave.schedule.protocol import RequestView, View


class Token(PremaFamily):
    """Token-based candidates, FCFS among them."""

    name = "token"
    uses_tokens = True

    def pool(self, view: View) -> list[RequestView]:
        """Who competes: the queue, plus the running task when preemptive."""
        return [*view.queued, *view.running] if self.preemptive else list(view.queued)

    def candidates(self, view: View) -> list[RequestView]:
        pool = self.pool(view)
        if not pool:
            return []
        toks = [self.tokens[r.id] for r in pool]
        seen = toks if self.reading.threshold_of == "all" else [
            self.tokens[r.id] for r in pool if r.id not in self.fresh]
        thr = threshold(max(seen, default=0.0), self.reading.levels)
        return [pool[i] for i in candidates(toks, thr, self.reading.strict_threshold)]

    def choose(self, view: View, cands: list[RequestView]) -> RequestView:
        return min(cands, key=lambda r: (r.arrival_s, r.id))

    def pick(self, now: float, view: View) -> RequestView | None:
        cands = self.candidates(view)
        return self.choose(view, cands) if cands else None

    def wins(self, now: float, view: View, best: RequestView, run: RequestView) -> bool:
        if self.reading.preempt_gate == "bucket":
            levels = self.reading.levels
            return threshold(self.tokens[best.id], levels) >= threshold(self.tokens[run.id],
                                                                        levels)
        return True
