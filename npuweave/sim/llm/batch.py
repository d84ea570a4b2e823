"""The decode batch as columns: the loop's hot path updates these slices in place.

Requests that decode sit in admission order in arrays of capacity ``max_seqs``: request id,
KV tokens, tokens produced, tokens wanted, last token time and largest gap so far. One decode
step is a handful of whole-slice operations instead of a gather and a scatter per field; a
request's columns go back to the per-request arrays (``LLMState``) when it leaves the batch.
"""

from __future__ import annotations

import numpy as np

FIELDS = ("ids", "kv", "gen", "out", "last", "maxgap")


class DecodeBatch:
    """Columns of the decoding requests; ``n`` of ``capacity`` slots used, oldest first."""

    def __init__(self, capacity: int) -> None:
        self.n = 0
        self.ids = np.zeros(capacity, np.int64)
        self.kv = np.zeros(capacity, np.int64)
        self.gen = np.zeros(capacity, np.int64)
        self.out = np.zeros(capacity, np.int64)
        self.last = np.zeros(capacity)
        self.maxgap = np.zeros(capacity)

    def __len__(self) -> int:
        return self.n

    def add(self, r: int, kv: int, gen: int, out: int, last: float, maxgap: float) -> None:
        i = self.n
        self.ids[i], self.kv[i], self.gen[i], self.out[i] = r, kv, gen, out
        self.last[i], self.maxgap[i] = last, maxgap
        self.n = i + 1

    def row(self, i: int) -> tuple[int, int, int, float, float]:
        """``(id, kv, gen, last, maxgap)`` of slot ``i``."""
        return (int(self.ids[i]), int(self.kv[i]), int(self.gen[i]), float(self.last[i]),
                float(self.maxgap[i]))

    def pop(self) -> tuple[int, int, int, float, float]:
        """Remove the most recently added request; returns its ``row``."""
        self.n -= 1
        return self.row(self.n)

    def drop(self, gone: np.ndarray) -> list[tuple[int, int, int, float, float]]:
        """Remove the slots where ``gone`` (a mask over the first ``n``) is set, keeping the
        others' order; returns the removed rows."""
        idx = np.flatnonzero(gone)
        rows = [self.row(int(i)) for i in idx]
        keep = ~gone
        m = self.n - len(idx)
        for name in FIELDS:
            col = getattr(self, name)
            col[:m] = col[:self.n][keep]
        self.n = m
        return rows
