"""Compute-only: serve only the compute-intensive tenants, one request at a time (FCFS).

A tenant is compute-intensive when its total compute time is at least its total weight-fetch
time (``sum L[comp] >= sum L[size] / MemBW``). With no such tenant nothing runs (empty result,
with a note).
"""

from __future__ import annotations

from npuweave.schedule.base import COMPUTE
from npuweave.schedule.board import Board
from npuweave.schedule.sequential import Sequential


def keep_kind(board: Board, kind: str, name: str) -> list[str]:
    """Exclude every tenant not of ``kind``; notes say who was dropped."""
    dropped = [t for t in range(len(board.tenants)) if board.kind[t] != kind]
    for t in dropped:
        board.exclude(t)
    if len(dropped) == len(board.tenants):
        return [f"{name}: no {kind}-intensive tenant among "
                f"{', '.join(t.label for t in board.tenants)}; nothing ran"]
    return [f"{name}: {board.tenants[t].label} is {board.kind[t]}-intensive and was not served"
            for t in dropped]


class ComputeOnly(Sequential):
    """Only the compute-intensive tenants, one request at a time."""

    name = "compute-only"

    def start(self, board: Board) -> list[str]:
        return keep_kind(board, COMPUTE, self.name)
