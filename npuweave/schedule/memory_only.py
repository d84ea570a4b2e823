"""Memory-only: serve only the memory-intensive tenants, one request at a time (FCFS).

A tenant is memory-intensive when its total weight-fetch time exceeds its total compute time.
With no such tenant nothing runs (empty result, with a note).
"""

from __future__ import annotations

from npuweave.schedule.base import MEMORY
from npuweave.schedule.board import Board
from npuweave.schedule.compute_only import keep_kind
from npuweave.schedule.sequential import Sequential


class MemoryOnly(Sequential):
    """Only the memory-intensive tenants, one request at a time."""

    name = "memory-only"

    def start(self, board: Board) -> list[str]:
        return keep_kind(board, MEMORY, self.name)
