"""Fair: whole requests, alternating so that every model gets an equal share of the NPU time.

A started request runs to its end. At a request boundary the tenant that has received the
least service so far goes next (ties: lower tenant index). A unit's service is its standalone
time ``max(L[comp], L[size]/MemBW)``, so over a run each of two models gets about half of the
cycles (thesis IV.5.B: "bisecting the cycles equally"), not half of the requests.
"""

from __future__ import annotations

from npuweave.schedule.board import Board
from npuweave.schedule.protocol import LayerBase


class Fair(LayerBase):
    """Equal NPU time per model, at request granularity."""

    name = "fair"

    def __init__(self, seed: int = 0) -> None:
        pass

    def start(self, board: Board) -> list[str]:
        return []

    def select(self, board: Board) -> int:
        act = board.active
        for t in act:
            if board.pos[t]:
                return t
        return min(act, key=lambda t: (board.served[t], t))
