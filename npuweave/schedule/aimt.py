"""AI-MT-like: keep the decoupling distance inside a band set by two thresholds.

Built from what the thesis says of AI-MT (IV.5.B, IV.5.C): it balances compute and memory by
keeping the decoupling distance ``d = S[t_c] - S[t_m]`` (how far weight fetches run ahead of
computation) within a desired level set by two user thresholds. Both thresholds are fractions
of the buffer fill time ``BufSize / MemBW``:

* ``d > high``: fetched weights crowd the buffer (on-chip memory is short), so the candidate
  with the least compute time goes next, to drain the buffer quickly;
* ``d < low``: fetches barely run ahead, so the candidate that grows ``d`` most
  (largest ``L[comp] - L[size]/MemBW``) goes next;
* otherwise a candidate is picked at random (``random.Random(seed)``).

``npuweave.sim.sweep_aimt`` sweeps both thresholds and reports the best setting.
"""

from __future__ import annotations

import random

from npuweave.errors import ConfigError
from npuweave.schedule.board import Board
from npuweave.schedule.protocol import LayerBase


class AIMT(LayerBase):
    """AI-MT-like band policy with thresholds ``low < high`` (fractions of the fill time)."""

    name = "aimt"

    def __init__(self, low: float = 0.1, high: float = 0.5, seed: int = 0) -> None:
        if not 0.0 <= low < high:
            raise ConfigError(f'aimt thresholds must satisfy 0 <= "low" < "high", got '
                              f"low={low!r}, high={high!r}")
        self.low, self.high, self.seed = float(low), float(high), seed
        self.rng = random.Random(seed)
        self.lo_s = self.hi_s = 0.0

    def start(self, board: Board) -> list[str]:
        fill = board.buf / board.bw
        self.lo_s, self.hi_s = self.low * fill, self.high * fill
        self.rng = random.Random(self.seed)
        return []

    def select(self, board: Board) -> int:
        act = board.active
        if len(act) == 1:
            return act[0]
        d = board.t_c - board.t_m
        pos = board.pos
        if d > self.hi_s:
            return min(act, key=lambda t: (board.comp[t][pos[t]], t))
        if d < self.lo_s:
            return max(act, key=lambda t: (board.comp[t][pos[t]] - board.ftime[t][pos[t]], -t))
        return self.rng.choice(act)
