"""PREMA: Algorithm 2's candidates, the shortest estimated job among them; with preemption,
Algorithm 3 picks DRAIN or CHECKPOINT (``mechanism="dynamic"``). Section V-C."""

from __future__ import annotations

from npuweave.schedule.prema.token import Token
from npuweave.schedule.protocol import RequestView, View


class Prema(Token):
    """PREMA's token-based, predictive scheduler."""

    name = "prema"

    def choose(self, view: View, cands: list[RequestView]) -> RequestView:
        return min(cands, key=lambda r: (self.length(view, r), r.arrival_s, r.id))
