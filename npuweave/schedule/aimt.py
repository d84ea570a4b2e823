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

  The rules are written once, in ``npuweave.schedule.aimt_kernel`` (``choose``,
  ``pool_member``): ``AIMT.select`` runs them as plain Python on the board, and ``plan``'s
  kernel path runs them in the one decision loop (``npuweave.schedule.loop``, policy code
  ``AIMT``), compiled by numba when it is installed, with the same decisions and times.

``AimtFetchAhead`` (``aimt-fetchahead``) is the former controller: whole layers, the distance
kept in a band ``[low, high]`` (fractions of ``fill``), random inside. ``RandomInterleaver``
(``random``) picks a candidate uniformly at random. ``npuweave.experiments.sweep_aimt`` and
``npuweave.experiments.lw_sweeps.sweep_aimt_thresholds`` sweep AI-MT's thresholds.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import lru_cache

from npuweave.errors import ConfigError
from npuweave.schedule import aimt_kernel, jit
from npuweave.schedule.base import Tenant
from npuweave.schedule.board import Board
from npuweave.schedule.loop_steps import AIMT as AIMT_CODE
from npuweave.schedule.protocol import LayerBase

# AI-MT's decision, written once in ``aimt_kernel``, as plain Python on the board's lists
_choose = jit.python(f"{aimt_kernel.__name__}.choose")
_pool_member = jit.python(f"{aimt_kernel.__name__}.pool_member")
#: ``AIMT.box`` before a run: every threshold setting gives the same (empty) run.
OPEN_BOX = (-math.inf, math.inf, -math.inf, math.inf)

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


@lru_cache(maxsize=256)
def _blocks(tenant: Tenant, cap_bytes: int) -> Tenant:
    """``sub_layers``, kept for the tenants a sweep runs again and again (frozen, so shared)."""
    return sub_layers(tenant, cap_bytes)


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
        self.box = list(OPEN_BOX)

    def units(self, tenants: Sequence[Tenant], buffer_bytes: int,
              dram_bw: float) -> list[Tenant]:
        """The tenants as merged sub-layer blocks (called before a closed-loop run)."""
        cap = max(1, int(self.merge * buffer_bytes))
        return [_blocks(t, cap) for t in tenants]

    def prepare(self, board: Board) -> None:
        self.low_free, self.min_d = self.thresholds(board.buf, board.bw)
        self.box = list(OPEN_BOX)

    def thresholds(self, buffer_bytes: int, dram_bw: float) -> tuple[float, float]:
        """``(low_free, min_d)``: the memory threshold in bytes and the distance threshold in
        seconds on a buffer of ``buffer_bytes`` filled at ``dram_bw`` bytes/s."""
        return self.mem * buffer_bytes, self.dist * buffer_bytes / dram_bw

    def same_run(self, other: AIMT, buffer_bytes: int, dram_bw: float) -> bool:
        """Whether ``other`` (same seed and blocks) makes the identical schedule as this
        policy's last run, by ``box``: its thresholds take every branch this run took
        (``npuweave.schedule.aimt_kernel``).

        Examples
        --------
        >>> a, b = AIMT(mem=0.0, dist=0.0), AIMT(mem=0.0, dist=0.01)
        >>> a.box = [-1.0, 5.0, -1.0, 0.5]   # free >= 5 B and distance >= 0.5 s at every pick
        >>> a.same_run(b, 100, 10.0), a.same_run(AIMT(mem=0.1, dist=0.0), 100, 10.0)
        (True, False)
        """
        if (other.seed, other.merge) != (self.seed, self.merge):
            return False
        low_free, min_d = other.thresholds(buffer_bytes, dram_bw)
        lo_m, hi_m, lo_d, hi_d = self.box
        return lo_m < low_free <= hi_m and lo_d < min_d <= hi_d

    def loop_code(self) -> int | None:
        return AIMT_CODE

    def select(self, board: Board) -> int:
        act = board.active
        n = len(act)
        if n == 1:
            return act[0]
        pos, comp, ftime = board.pos, board.comp, board.ftime
        c = [comp[t][pos[t]] for t in act]
        f = [ftime[t][pos[t]] for t in act]
        j = _choose(n, c, f, board.buf - board.used, self.low_free, board.t_c - board.t_m,
                    self.min_d, self.box)
        if j < 0:  # the random rule, as ``rng.choice`` of the pool
            j = _pool_member(n, c, f, self.rng.randrange(_pool_member(n, c, f, -1)))
        return act[j]


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
