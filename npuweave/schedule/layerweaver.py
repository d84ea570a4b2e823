"""Layerweaver: greedy layer selection that minimizes resource idle time (thesis IV.2-IV.4).

For every candidate (the next unit of each active tenant) the policy predicts the updated state
``S'`` as ``Board.commit`` would, then estimates three idle times:

* compute idle: the PE waits for the fetch, ``max(0, S'[t_m] - S[t_c])``. When the buffer does
  not stall the fetch this is the thesis's ``L[size]/MemBW - (S[t_c] - S[t_m])``; with a stall it
  also counts the wait for freed space.
* memory idle caused by the decision: with ``F = fetch(S'[t_m], S[t_c])`` (bytes the DMA can
  still bring in before the current computation ends) the DMA idles for
  ``max(0, inh + F/MemBW)`` during this unit's computation, where
  ``inh = L[comp] - (BufSize - L[size])/MemBW`` is the unit's inherent share. The decision is
  charged the excess over ``max(0, inh)``, which is ``F/MemBW`` whenever ``inh >= 0``.
* potential compute idle: ``max(0, max L[size]/MemBW - (S'[t_c] - S'[t_m]))`` over the units of
  the running models, the fetch a future decision may need to hide.

Selection: the least total idle time; among ties, a unit without inherent memory idle
(``inh <= 0``), then the largest decoupling distance ``S'[t_c] - S'[t_m]``, then the lowest
tenant index.

The paragraph above is the ``"npuweave"`` reading. Four points of IV.4 read two ways; the
options ``memory_idle``, ``compute_idle``, ``starvation`` and ``tie_scope`` (or a bundle,
``reading="printed"`` or ``"npuweave"``) choose, and the default is the thesis's printed
formulas (``npuweave.schedule.lw_reading``; measured in ``docs/SCHEDULING.md``). Starvation prevention: when every candidate causes compute idle, only
candidates of compute-intensive tenants are considered; otherwise, when every candidate incurs
memory idle (``inh + F/MemBW > 0``), only those of memory-intensive tenants. Failsafe: when all
tenants are compute-intensive or all memory-intensive, interleaving cannot help and Layerweaver
is disabled: requests run one at a time, first come first served, and the run says so.
"""

from __future__ import annotations

from npuweave.errors import unknown_name
from npuweave.schedule import jit, kernel
from npuweave.schedule.base import COMPUTE, EPS, MEMORY
from npuweave.schedule.board import Board
from npuweave.schedule.loop_steps import LW_NPUWEAVE, LW_PRINTED, SEQ
from npuweave.schedule.lw_reading import (
    NPUWEAVE,
    PRINTED,
    READINGS,
    Reading,
    compute_idle,
    memory_idle,
    tie_key,
)
from npuweave.schedule.protocol import LayerBase
from npuweave.schedule.sequential import fcfs_tenant

_evaluate = jit.python(f"{kernel.__name__}.evaluate")


class Layerweaver(LayerBase):
    """The Layerweaver policy.

    ``failsafe=False`` keeps interleaving even when all tenants are on the same side (the
    thesis disables Layerweaver then; turning the failsafe off shows what it would have done).
    ``reading`` (``"printed"`` or ``"npuweave"``) and the four options that override it pick
    how IV.4 is read (``npuweave.schedule.lw_reading``). Only the ``"npuweave"`` reading has
    the inlined fast path of ``select``; the compiled loop (``loop_code``) runs both named
    readings, and a reading assembled from other options runs on the Python path.
    """

    name = "layerweaver"

    def __init__(self, failsafe: bool = True, seed: int = 0, reading: str = "printed",
                 memory_idle: str | None = None, compute_idle: str | None = None,
                 starvation: str | None = None, tie_scope: str | None = None) -> None:
        self.use_failsafe = bool(failsafe)
        self.failsafe = False
        if reading not in READINGS:
            raise unknown_name("layerweaver reading", reading, list(READINGS))
        base = READINGS[reading]
        self.reading = Reading(memory_idle or base.memory_idle, compute_idle or base.compute_idle,
                               starvation or base.starvation, tie_scope or base.tie_scope)
        self.kernel_ok = self.reading == NPUWEAVE

    def start(self, board: Board) -> list[str]:
        kinds = {board.kind[t] for t in range(len(board.tenants)) if not board.excluded[t]}
        if len(kinds) > 1:
            self.failsafe = False
            return []
        self.failsafe = self.use_failsafe and len(board.tenants) > 1
        if len(board.tenants) == 1:
            return ["layerweaver failsafe: a single tenant, nothing to interleave; its requests "
                    "run one after another"]
        if not self.failsafe:
            return [f"layerweaver failsafe off: all tenants are {next(iter(kinds))}-intensive "
                    "but layers are interleaved anyway"]
        return [f"layerweaver failsafe: all tenants are {next(iter(kinds))}-intensive, so "
                "interleaving cannot help; Layerweaver is disabled and requests run one at a "
                "time (first come, first served)"]

    def evaluate(self, board: Board, t: int) -> tuple[float, float, float, float, float, float]:
        """Idle estimates for tenant ``t``'s next unit under this reading: ``(total, compute
        idle, memory idle incurred (what the starvation test reads), memory idle charged,
        potential compute idle, decoupling distance S'[t_c] - S'[t_m])``."""
        r = self.reading
        i = board.pos[t]
        size = board.size[t][i]
        t_c = board.t_c
        if size <= board.buf - board.used:
            fe = board.t_m + board.ftime[t][i]
        else:
            fe = board.fetch_end(size)
        ce = (t_c if t_c > fe else fe) + board.comp[t][i]
        inh = board.inh[t][i]
        fetched = 0.0
        # F <= (t_c - fe) * MemBW, so the excess reading needs F only when it can matter
        if fe < t_c and (r.memory_idle == "printed" or inh + (t_c - fe) > 0.0):
            fetched = board.fetch_window(fe, size, t_c) / board.bw
        charged, mem = memory_idle(r, inh, fetched)
        ci = compute_idle(r, board.t_m, t_c, board.ftime[t][i], fe)
        pi = board.maxft - (ce - fe)
        if pi < 0.0:
            pi = 0.0
        return ci + charged + pi, ci, mem, charged, pi, ce - fe

    def select_reference(self, board: Board) -> int:
        """``select`` written plainly on top of ``evaluate`` (tests check both agree)."""
        act = board.active
        if len(act) == 1 or self.failsafe:
            return act[0] if len(act) == 1 else fcfs_tenant(board)
        evals = [(t, *self.evaluate(board, t)) for t in act]
        pool = evals
        if all(e[2] > EPS for e in evals):
            pool = [e for e in evals if board.kind[e[0]] == COMPUTE] or evals
        elif all(e[3] > EPS for e in evals):
            pool = [e for e in evals if board.kind[e[0]] == MEMORY] or evals
        return _pick(board, pool, self.reading)

    def loop_code(self) -> int | None:
        """First come first served with the failsafe on, else the reading's code (the two
        named readings only)."""
        if self.failsafe:
            return SEQ
        return {PRINTED: LW_PRINTED, NPUWEAVE: LW_NPUWEAVE}.get(self.reading)

    def select(self, board: Board) -> int:
        """The selection rule, with ``evaluate`` inlined: this is the scheduler's hot loop."""
        act = board.active
        if len(act) == 1 or self.failsafe:
            return act[0] if len(act) == 1 else fcfs_tenant(board)
        if not self.kernel_ok:
            return self.select_reference(board)
        return _pick(board, candidates(board)[1], NPUWEAVE)


Scored = tuple[int, float, float, float, float, float, float, float]


def candidates(b: Board, printed: bool = False) -> tuple[list[Scored], list[Scored]]:
    """``evaluate`` in the ``npuweave`` reading (or the ``printed`` one) for every active
    tenant, inlined (the hot loop of every Python path that scores candidates:
    ``Layerweaver.select`` and Layerweaver+'s Mode 1). Returns every candidate as ``(tenant, total, compute idle, memory idle incurred,
    inherent idle, fetch end, decoupling distance, compute end)`` and the pool that the
    starvation filter leaves. The scoring is ``npuweave.schedule.kernel.evaluate`` (the one
    definition the compiled loops call), run as plain Python on the board's lists."""
    t_m, t_c, bw, maxft = b.t_m, b.t_c, b.bw, b.maxft
    free = b.buf - b.used
    pos, sizes, ftimes, comps, inhs = b.pos, b.size, b.ftime, b.comp, b.inh
    fl_s, fl_c, fl_f, head, tail = b.fl_s, b.fl_c, b.fl_f, b.head, b.tail
    ev = [[0.0] * 5 for _ in pos]
    evals = []
    all_ci = all_mem = len(b.active) > 1
    for t in b.active:
        i = pos[t]
        _evaluate(t, i, printed, t_m, t_c, free, maxft, sizes[t], comps[t], ftimes[t], inhs[t],
                  fl_s, fl_c, fl_f, head, tail, bw, ev)
        total, ci, mem, fe, ce = ev[t]
        if ci <= EPS:
            all_ci = False
        if mem <= EPS:
            all_mem = False
        evals.append((t, total, ci, mem, inhs[t][i], fe, ce - fe, ce))
    pool = evals
    if all_ci:
        pool = [e for e in evals if b.kind[e[0]] == COMPUTE] or evals
    elif all_mem:
        pool = [e for e in evals if b.kind[e[0]] == MEMORY] or evals
    return evals, pool


def _pick(board: Board, pool: list[Scored] | list[tuple[int, float, float, float, float, float, float]],
          reading: Reading) -> int:
    """Least total idle; ties: no inherent memory idle (where the reading applies it), then
    the largest decoupling distance."""
    if len(pool) == 1:
        return pool[0][0]
    best = min(e[1] for e in pool)
    ties = [e for e in pool if e[1] <= best + EPS]
    if len(ties) == 1:
        return ties[0][0]
    # e[6] is the decoupling distance; inherent memory idle is read from the board
    return min(ties, key=lambda e: tie_key(reading, best, EPS,
                                           board.inh[e[0]][board.pos[e[0]]] > 0.0, e[6]))[0]
