"""AI-MT (Baek et al., ISCA 2020) as the Layerweaver thesis modelled it, and two simpler rows.

``AIMT`` (scheduler ``aimt``) follows the reading in docs/REPRODUCTION.md ("AI-MT, NCF and
NNP-I"), from AI-MT's abstract and the thesis (IV.5.B, IV.5.C):

* sub-layers: every layer is split into identical sub-layers, and consecutive sub-layers of
  one layer are merged into blocks of at most ``merge x buffer`` bytes (compute-block
  merging); ``units`` makes the blocks, ``sub_layers`` splits one tenant;
* memory-block prefetching as buffer space allows: the board's DMA fetches each dispatched
  block into free space, in parts as computing blocks free theirs (``Board.fetch_end``);
* the priority mechanism with AI-MT's two thresholds. With ``free = buffer - used`` (bytes not
  held by blocks still computing at ``t_m``), ``d = t_c - t_m`` (the decoupling distance) and
  ``fill = buffer / bandwidth``:

  1. ``free < mem x buffer`` (little on-chip memory left): the least-compute candidate;
  2. ``d < dist x fill`` (insufficient distance): the compute-intensive candidate (compute >=
     fetch) with the largest ``compute - fetch``, else the largest ``compute - fetch``;
  3. otherwise a memory-intensive candidate at random (``random.Random(seed)``), else any
     candidate at random.

``AimtFetchAhead`` (``aimt-fetchahead``) is the former controller: whole layers, the distance
kept in a band ``[low, high]`` (fractions of ``fill``), random inside. ``RandomInterleaver``
(``random``) picks a candidate uniformly at random. ``npuweave.experiments.sweep_aimt`` and
``npuweave.experiments.lw_sweeps.sweep_aimt_thresholds`` sweep AI-MT's thresholds.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from npuweave.errors import ConfigError
from npuweave.schedule.base import Tenant
from npuweave.schedule.board import Board
from npuweave.schedule.protocol import LayerBase

#: Default merged-block cap, as a fraction of the weight buffer (docs/REPRODUCTION.md).
MERGE = 1 / 32
#: Upper limit of the distance threshold, in buffer fill times.
MAX_DIST = 10.0
#: Smallest merged-block cap: 1/2048 of the buffer (24 KiB of 48 MiB, below AI-MT's own
#: one-array-fill sub-layer of 32 KiB); smaller blocks only multiply the decisions.
MIN_MERGE = 1 / 2048


def _fraction(name: str, value: object, lo: float, hi: float, lo_text: str = "") -> float:
    """``value`` as a float in ``[lo, hi]``, else a one-line ConfigError."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    v = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not (math.isfinite(v) and lo <= v <= hi):
        raise ConfigError(f'aimt option "{name}" must be a number in [{lo_text or f"{lo:g}"}, '
                          f"{hi:g}], got {value!r}")
    return v


def sub_layers(tenant: Tenant, cap_bytes: int) -> Tenant:
    """``tenant`` with every unit split into merged sub-layer blocks of at most ``cap_bytes``.

    A unit of ``B`` bytes becomes ``k = ceil(B / cap_bytes)`` blocks of near-equal size (the
    first ``B mod k`` one byte more), each with compute in proportion to its bytes; a block
    never spans two units. Units without weights stay whole.

    Examples
    --------
    >>> t = Tenant("m", ("a", "b"), (4.0, 1.0), (20, 3))
    >>> s = sub_layers(t, 5)
    >>> s.units, s.compute_s, s.weight_bytes
    (('a#b1/4', 'a#b2/4', 'a#b3/4', 'a#b4/4', 'b'), (1.0, 1.0, 1.0, 1.0, 1.0), (5, 5, 5, 5, 3))
    """
    if cap_bytes < 1:
        raise ConfigError(f"aimt: merged blocks of {cap_bytes} bytes are too small; raise merge")
    names: list[str] = []
    comp: list[float] = []
    size: list[int] = []
    for name, c, b in zip(tenant.units, tenant.compute_s, tenant.weight_bytes):
        k = max(1, -(-b // cap_bytes))
        if k == 1:
            names.append(name)
            comp.append(c)
            size.append(b)
            continue
        q, r = divmod(b, k)
        for j in range(k):
            nbytes = q + (1 if j < r else 0)
            names.append(f"{name}#b{j + 1}/{k}")
            comp.append(c * nbytes / b)
            size.append(nbytes)
    return Tenant(tenant.label, tuple(names), tuple(comp), tuple(size), tenant.model,
                  tenant.batch)


class _Seeded(LayerBase):
    """A layer-wise policy with a seeded ``rng``, reset at ``start``; ``prepare`` scales its
    thresholds to the board."""

    seed = 0
    rng = random.Random(0)

    def start(self, board: Board) -> list[str]:
        self.rng = random.Random(self.seed)
        self.prepare(board)
        return []

    def prepare(self, board: Board) -> None:
        """Scale the policy's thresholds to ``board`` (nothing by default)."""


class AIMT(_Seeded):
    """AI-MT: merged sub-layer blocks, thresholds ``mem`` (fraction of the buffer) and
    ``dist`` (fraction of the buffer fill time); ``merge`` caps a merged block (fraction of
    the buffer)."""

    name = "aimt"

    def __init__(self, mem: float = 1 / 16, dist: float = 0.05, merge: float = MERGE,
                 seed: int = 0) -> None:
        self.mem = _fraction("mem", mem, 0.0, 1.0)
        self.dist = _fraction("dist", dist, 0.0, MAX_DIST)
        self.merge = _fraction("merge", merge, MIN_MERGE, 1.0, "1/2048")
        self.seed = seed
        self.rng = random.Random(seed)
        self.low_free = self.min_d = 0.0

    def units(self, tenants: Sequence[Tenant], buffer_bytes: int,
              dram_bw: float) -> list[Tenant]:
        """The tenants as merged sub-layer blocks (called before a closed-loop run)."""
        cap = max(1, int(self.merge * buffer_bytes))
        return [sub_layers(t, cap) for t in tenants]

    def prepare(self, board: Board) -> None:
        self.low_free = self.mem * board.buf
        self.min_d = self.dist * board.buf / board.bw

    def select(self, board: Board) -> int:
        act = board.active
        if len(act) == 1:
            return act[0]
        pos, comp, ftime = board.pos, board.comp, board.ftime
        if board.buf - board.used < self.low_free:
            return _least_compute(act, pos, comp)
        if board.t_c - board.t_m < self.min_d:
            return _most_ahead(act, pos, comp, ftime)
        mem = [t for t in act if comp[t][pos[t]] < ftime[t][pos[t]]]
        return self.rng.choice(mem or act)


def _least_compute(act: list[int], pos: list[int], comp: list[list[float]]) -> int:
    """The candidate with the least compute time (ties: the lower tenant)."""
    best, low = act[0], comp[act[0]][pos[act[0]]]
    for t in act[1:]:
        c = comp[t][pos[t]]
        if c < low:
            best, low = t, c
    return best


def _most_ahead(act: list[int], pos: list[int], comp: list[list[float]],
                ftime: list[list[float]]) -> int:
    """The compute-intensive candidate with the largest ``compute - fetch``; without one, the
    candidate with the largest ``compute - fetch`` (ties: the lower tenant)."""
    best, top, top_ci = -1, 0.0, False
    for t in act:
        c, f = comp[t][pos[t]], ftime[t][pos[t]]
        ci = c >= f
        if best < 0 or (ci and not top_ci) or (ci == top_ci and c - f > top):
            best, top, top_ci = t, c - f, ci
    return best


class AimtFetchAhead(_Seeded):
    """The former ``aimt``: whole layers, the distance kept in ``[low, high]`` (fractions of
    the fill time); above: least compute; below: largest ``compute - fetch``; inside: random."""

    name = "aimt-fetchahead"

    def __init__(self, low: float = 0.0, high: float = 0.2, seed: int = 0) -> None:
        lo = _fraction("low", low, 0.0, MAX_DIST)
        hi = _fraction("high", high, 0.0, MAX_DIST)
        if not lo < hi:
            raise ConfigError(f'aimt-fetchahead thresholds must satisfy "low" < "high", got '
                              f"low={low!r}, high={high!r}")
        self.low, self.high, self.seed = lo, hi, seed
        self.rng = random.Random(seed)
        self.lo_s = self.hi_s = 0.0

    def prepare(self, board: Board) -> None:
        fill = board.buf / board.bw
        self.lo_s, self.hi_s = self.low * fill, self.high * fill

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


class RandomInterleaver(_Seeded):
    """Each decision picks one of the candidates uniformly at random (``random.Random(seed)``)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def select(self, board: Board) -> int:
        act = board.active
        return act[0] if len(act) == 1 else self.rng.choice(act)
