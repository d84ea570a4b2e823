"""Sequential: one request at a time, first come first served (no interleaving).

A started request runs to its end before another is picked; among waiting requests the one
issued first goes first (ties: lower tenant index). The NPU still overlaps the next unit's
weight fetch with the current computation, as any decoupled NPU does.
"""

from __future__ import annotations

from npuweave.schedule.board import Board
from npuweave.schedule.loop_steps import SEQ
from npuweave.schedule.protocol import LayerBase


def fcfs_tenant(board: Board) -> int:
    """The tenant whose request is in progress, else the one whose request arrived first."""
    act = board.active
    for t in act:
        if board.pos[t]:
            return t
    return min(act, key=lambda t: (board.arrival[t], t))


class Sequential(LayerBase):
    """One request at a time, first come first served."""

    name = "sequential"

    def __init__(self, seed: int = 0) -> None:
        pass

    def start(self, board: Board) -> list[str]:
        return []

    def loop_code(self) -> int | None:
        return SEQ

    def select(self, board: Board) -> int:
        return fcfs_tenant(board)
