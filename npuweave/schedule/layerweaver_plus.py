"""Layerweaver+: QoS-aware layer interleaving (thesis chapter V, section V.2).

On top of chapter IV's greedy selection, every request carries its arrival and absolute
deadline. At each decision the policy evaluates the candidate group (the next unit of each
active tenant's current request; requests of one model are served first come first served,
``grouping="per-model-fifo"``, or one candidate per batch in service with ``"per-request"``)
with chapter IV's arithmetic (``Layerweaver.evaluate``: compute
idle, memory idle charged, potential compute idle, decoupling distance; the starvation rule's
pool) and hands the two-mode rule (``npuweave.schedule.qos.decide``) one view per candidate.
Mode 1 is "the original greedy algorithm" (V.2), so it reads IV.4 as chapter IV's scheduler
does: ``reading="printed"`` (the ``Layerweaver`` default, what chapter V's ``layerweaver`` rows
run) unless told ``"npuweave"``; both call the one scoring function
(``npuweave.schedule.kernel.evaluate``) with that reading. The view per candidate:

* slack ``= deadline - max(now, S[t_c])``, the predicted compute end (the ``Predictor`` is told
  ``now``, so ``S[t_c] >= now``);
* remaining standalone time of the request from its next unit on: ``approx`` (suffix sums of
  ``max(compute, fetch)``, one lookup) or ``precise`` (a replay of the remaining units alone on
  an empty buffer), see ``npuweave.schedule.standalone``.

Mode 2 (least slack among the requests estimated to miss even alone) when any is at risk, else
Mode 1 (least idle time, slack as the first tie-breaker). Chapter IV's failsafe is not applied:
it replaces interleaving by one-request-at-a-time FCFS when all models sit on one side of the
compute/memory balance, which ignores deadlines; on ``lwplus`` it would also disable the
thesis's own RN+BB pair (IC and RN classify as memory-bound at batch 1 there). The starvation
rule is kept (it is part of chapter IV's selection, which Mode 1 reuses).

Without a view (``plan``, closed loops) ``select`` has no deadlines: every slack is infinite,
Mode 2 never fires and the choice equals ``Layerweaver(failsafe=False)`` in the same reading.
"""

from __future__ import annotations

import math
from dataclasses import replace

from npuweave.errors import ConfigError, unknown_name
from npuweave.schedule.base import COMPUTE, EPS, MEMORY
from npuweave.schedule.board import Board
from npuweave.schedule.layerweaver import Layerweaver, candidates
from npuweave.schedule.loop_steps import LW_PLUS, LW_PLUS_PRINTED
from npuweave.schedule.lw_reading import PRINTED, READINGS, tie_key
from npuweave.schedule.protocol import Decision, Dispatch, LayerBase, View
from npuweave.schedule.qos import MODE_URGENT, Candidate, decide, mode1_pick
from npuweave.schedule.standalone import Estimator, StandaloneMode, standalone_mode

GROUPINGS = ("per-model-fifo", "per-request")
#: The most batches of one model in service at once with ``per-request``. Each slot is a set of
#: board tenants (one per batch size), so the candidate group grows with it; far more batches
#: than this could not hold their weights in any preset's buffer at once anyway.
MAX_INFLIGHT = 64


def check_grouping(grouping: str, max_inflight: object) -> int:
    """Validate the grouping options (the one check behind the class, ``serve``, ``capacity``
    and ``reproduce layerweaver-plus``); return ``max_inflight``.

    Examples
    --------
    >>> check_grouping("per-request", 8)
    8
    """
    if grouping not in GROUPINGS:
        raise ConfigError(f"unknown grouping {grouping!r} (option --grouping, or serve "
                          f"--scheduler-opt grouping=...); choose one of: {', '.join(GROUPINGS)}")
    if isinstance(max_inflight, bool) or not isinstance(max_inflight, int) \
            or not 1 <= max_inflight <= MAX_INFLIGHT:
        raise ConfigError(f"max in flight {max_inflight!r} (option --max-inflight, or serve "
                          f"--scheduler-opt max_inflight=...): give an integer from 1 to "
                          f"{MAX_INFLIGHT}, the batches of one model in service at once")
    return max_inflight


class LayerweaverPlus(LayerBase):
    """The Layerweaver+ policy (``standalone="approx"`` or ``"precise"``).

    ``audit=True`` also computes the other estimate at every decision and counts the decisions
    whose mode would have differed (``disagreements``); it costs a replay per candidate.
    ``prune=True`` skips the estimate of a candidate whose slack is at least the serial bound
    ``sum(compute + fetch)`` of its remaining units (no estimate exceeds it, so the candidate
    cannot be at risk): the decisions are the same, the precise mode gets much cheaper.
    ``fast=False`` runs the reference path (``_candidates`` + ``qos.decide``) at every decision.
    ``grouping`` tells the serving driver how requests of one model enter the candidate group:
    ``"per-model-fifo"`` (one batch of a model in service at a time, the rest queued behind it)
    or ``"per-request"`` (up to ``max_inflight`` batches of one model in service at once, each
    a separate candidate: the seed's k counts requests). The decision rule is the same; only
    the board's tenants differ (``npuweave.sim.batcher``). ``inherit=True`` (not in the seed)
    asks the serving driver to give a batch in service the deadline of the requests queued
    behind it when that is earlier: their deadline less the standalone time of the batch they
    will form (``Batcher.due``), so Mode 2 protects the queue a batch blocks.
    ``reading`` (``"printed"``, the default, or ``"npuweave"``) is Mode 1's reading of IV.4,
    as ``Layerweaver(reading=...)``.
    Counters after a run: ``decisions``, ``urgent`` (Mode 2 decisions), ``estimates``.

    Examples
    --------
    >>> LayerweaverPlus(standalone="precise").name
    'layerweaver-plus'
    """

    name = "layerweaver-plus"

    def __init__(self, standalone: str = "approx", grouping: str = "per-model-fifo",
                 audit: bool = False, prune: bool = True, fast: bool = True,
                 seed: int = 0, max_inflight: int = 4, inherit: bool = False,
                 reading: str = "printed") -> None:
        self.mode = standalone_mode(standalone)
        check_grouping(grouping, max_inflight)
        self.grouping = grouping
        self.max_inflight = max_inflight
        self.inherit = bool(inherit)
        self.audit = bool(audit)
        self.prune = bool(prune)
        self.fast = bool(fast)
        # Mode 1 is chapter IV's minimum-idle selection, read as chapter IV's scheduler reads
        # it (only the two named bundles: the scoring function implements those)
        if reading not in READINGS:
            raise unknown_name("layerweaver-plus reading", reading, list(READINGS))
        self.lw = Layerweaver(failsafe=False, reading=reading)
        self.reading = self.lw.reading
        self.printed = self.reading == PRINTED
        self.est: Estimator | None = None
        self.other: Estimator | None = None
        self.decisions = self.urgent = self.disagreements = 0

    @property
    def estimates(self) -> int:
        return 0 if self.est is None else self.est.calls

    def start(self, board: Board) -> list[str]:
        self.est = Estimator(self.mode, board.buf, board.bw)
        alt = "precise" if self.mode is StandaloneMode.APPROX else "approx"
        self.other = Estimator(alt, board.buf, board.bw) if self.audit else None
        group = ("requests of one model first come first served" if self.grouping ==
                 "per-model-fifo" else f"up to {self.max_inflight} batches of one model in "
                 "service, each a candidate")
        if self.inherit:
            group += "; a batch in service inherits the deadline of the queue behind it"
        read = "printed" if self.printed else "npuweave"
        return [f"layerweaver-plus: standalone estimate {self.mode.value}, {group}; Mode 1 in "
                f"the {read} reading of IV.4; chapter IV's failsafe is off (deadlines need the "
                "interleaving control)"]

    def loop_code(self) -> int | None:
        """Mode 1's reading; None with the audit (a second estimate per decision) or on the
        reference path (``fast=False``)."""
        if self.audit or not self.fast:
            return None
        return LW_PLUS_PRINTED if self.printed else LW_PLUS

    def select(self, board: Board) -> int:
        """Without deadlines: Mode 1 with infinite slack, i.e. chapter IV's choice."""
        return self._choose(board, {}, board.t_c)

    def decide(self, now: float, view: View) -> Decision:
        board = view.board
        assert board is not None, "layerweaver-plus is layer-wise: it needs the board"
        # the candidate of tenant t is the next unit of its current request ``board.req[t]``
        # (the simulator lists it as running once a unit went out, as queued before that)
        ids = {board.req[t]: t for t in board.active}
        deadlines = {ids[r.id]: r.deadline_s for r in (*view.running, *view.queued)
                     if r.id in ids and r.model == ids[r.id]}
        return Dispatch(self._choose(board, deadlines, max(now, board.t_c)))

    def _choose(self, board: Board, deadlines: dict[int, float], t_end: float) -> int:
        if self.est is None:
            self.start(board)
        act = board.active
        self.decisions += 1
        if len(act) == 1 and not deadlines:
            return act[0]
        if self.other is None and self.fast:
            return self._choose_fast(board, deadlines, t_end)
        cands = self._candidates(board, deadlines, t_end, self.est)  # type: ignore[arg-type]
        key, mode = decide(cands, t_end)
        if mode == MODE_URGENT:
            self.urgent += 1
        if self.other is not None:
            alt = decide(self._candidates(board, deadlines, t_end, self.other), t_end)
            self.disagreements += alt[1] != mode
        return key

    def _choose_fast(self, board: Board, deadlines: dict[int, float], t_end: float) -> int:
        """``decide(self._candidates(...))`` with the evaluation inlined (the hot loop; a
        property test checks both give the same decisions)."""
        b, est = board, self.est
        assert est is not None
        pos, sizes, comps = b.pos, b.size, b.comp
        evals, pool = candidates(b, self.printed)
        low = min(e[1] for e in pool)
        best, r = low + EPS, self.reading
        # fe - ce is exactly -(ce - fe): IEEE subtraction is antisymmetric
        pick = min((e for e in pool if e[1] <= best),
                   key=lambda e: (deadlines.get(e[0], math.inf),
                                  *tie_key(r, low, EPS, e[4] > 0.0, e[6]), e[0]))
        pick_t, pick_ce = pick[0], pick[7]
        urgent, u_deadline = -1, math.inf
        for e in evals:
            t = e[0]
            deadline = deadlines.get(t, math.inf)
            if deadline == math.inf or (urgent >= 0 and deadline >= u_deadline):
                continue
            slack = deadline - (t_end if t == pick_t else pick_ce)
            i = pos[t]
            if self.prune and slack >= est.serial_bound(comps[t], sizes[t], i):
                continue
            if est.remaining(comps[t], sizes[t], i) > slack:
                urgent, u_deadline = t, deadline
        if urgent >= 0:
            self.urgent += 1
            return urgent
        return pick_t

    def _candidates(self, board: Board, deadlines: dict[int, float], t_end: float,
                    est: Estimator) -> list[Candidate]:
        """The view ``qos.decide`` takes (the reference path; see ``_choose_fast``)."""
        evals = [(t, *self.lw.evaluate(board, t)) for t in board.active]
        # chapter IV's starvation rule: which candidates Mode 1 may pick
        pool = None
        if len(evals) > 1 and all(e[2] > EPS for e in evals):
            pool = COMPUTE
        elif len(evals) > 1 and all(e[3] > EPS for e in evals):
            pool = MEMORY
        if pool is not None and not any(board.kind[e[0]] == pool for e in evals):
            pool = None
        low = min(e[1] for e in evals if pool is None or board.kind[e[0]] == pool)
        bare = []
        for t, total, _ci, _mem, _charged, _pi, dd in evals:
            i = board.pos[t]
            size = board.size[t][i]
            fe = (board.t_m + board.ftime[t][i] if size <= board.buf - board.used
                  else board.fetch_end(size))
            ce = max(board.t_c, fe) + board.comp[t][i]
            bare.append(Candidate(key=t, idle=total, deadline=deadlines.get(t, math.inf),
                                  end=ce, tie=tie_key(self.reading, low, EPS,
                                                      board.inh[t][i] > 0.0, dd),
                                  pool=pool is None or board.kind[t] == pool))
        pick = mode1_pick(bare)
        out = []
        for c in bare:
            slack = c.deadline - (t_end if c.key == pick.key else pick.end)
            i = board.pos[c.key]
            comp, nbytes = board.comp[c.key], board.size[c.key]
            # an estimate can only matter when the slack is below the serial bound
            risky = slack < (est.serial_bound(comp, nbytes, i) if self.prune else math.inf)
            out.append(replace(c, remaining=est.remaining(comp, nbytes, i) if risky else 0.0))
        return out
