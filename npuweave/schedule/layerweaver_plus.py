"""Layerweaver+: QoS-aware layer interleaving (thesis chapter V, section V.2).

On top of chapter IV's greedy selection, every request carries its arrival and absolute
deadline. At each decision the policy evaluates the candidate group (the next unit of each
active tenant's current request; requests of one model are served first come first served,
``grouping="per-model-fifo"``) with chapter IV's arithmetic (``Layerweaver.evaluate``: compute
idle, memory idle charged, potential compute idle, decoupling distance; the starvation rule's
pool) and hands the two-mode rule (``npuweave.schedule.qos.decide``) one view per candidate:

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
Mode 2 never fires and the choice equals ``Layerweaver(failsafe=False)``.
"""

from __future__ import annotations

import math

from npuweave.errors import ConfigError
from npuweave.schedule.base import COMPUTE, EPS, MEMORY
from npuweave.schedule.board import Board
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.protocol import Decision, Dispatch, LayerBase, View
from npuweave.schedule.qos import MODE_URGENT, Candidate, decide
from npuweave.schedule.standalone import Estimator, StandaloneMode, standalone_mode

GROUPINGS = ("per-model-fifo",)


class LayerweaverPlus(LayerBase):
    """The Layerweaver+ policy (``standalone="approx"`` or ``"precise"``).

    ``audit=True`` also computes the other estimate at every decision and counts the decisions
    whose mode would have differed (``disagreements``); it costs a replay per candidate.
    Counters after a run: ``decisions``, ``urgent`` (Mode 2 decisions), ``estimates``.

    Examples
    --------
    >>> LayerweaverPlus(standalone="precise").name
    'layerweaver-plus'
    """

    name = "layerweaver-plus"

    def __init__(self, standalone: str = "approx", grouping: str = "per-model-fifo",
                 audit: bool = False, seed: int = 0) -> None:
        self.mode = standalone_mode(standalone)
        if grouping not in GROUPINGS:
            raise ConfigError(f"unknown grouping {grouping!r} for layerweaver-plus (option "
                              f"--grouping); choose one of: {', '.join(GROUPINGS)}")
        self.grouping = grouping
        self.audit = bool(audit)
        self.lw = Layerweaver(failsafe=False)
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
        return [f"layerweaver-plus: standalone estimate {self.mode.value}, requests of one "
                "model first come first served; chapter IV's failsafe is off (deadlines "
                "need the interleaving control)"]

    def select(self, board: Board) -> int:
        """Without deadlines: Mode 1 with infinite slack, i.e. chapter IV's choice."""
        return self._choose(board, {}, board.t_c)

    def decide(self, now: float, view: View) -> Decision:
        board = view.board
        assert board is not None, "layerweaver-plus is layer-wise: it needs the board"
        deadlines = {r.model: r.deadline_s for r in view.running}
        return Dispatch(self._choose(board, deadlines, max(now, board.t_c)))

    def _choose(self, board: Board, deadlines: dict[int, float], t_end: float) -> int:
        if self.est is None:
            self.start(board)
        act = board.active
        self.decisions += 1
        if len(act) == 1 and not deadlines:
            return act[0]
        cands = self._candidates(board, deadlines, t_end, self.est)  # type: ignore[arg-type]
        key, mode = decide(cands)
        if mode == MODE_URGENT:
            self.urgent += 1
        if self.other is not None:
            alt = decide(self._candidates(board, deadlines, t_end, self.other))
            self.disagreements += alt[1] != mode
        return key

    def _candidates(self, board: Board, deadlines: dict[int, float], t_end: float,
                    est: Estimator) -> list[Candidate]:
        evals = [(t, *self.lw.evaluate(board, t)) for t in board.active]
        # chapter IV's starvation rule: which candidates Mode 1 may pick
        pool = None
        if len(evals) > 1 and all(e[2] > EPS for e in evals):
            pool = COMPUTE
        elif len(evals) > 1 and all(e[3] > EPS for e in evals):
            pool = MEMORY
        if pool is not None and not any(board.kind[e[0]] == pool for e in evals):
            pool = None
        out = []
        for t, total, _ci, _mem, _charged, _pi, dd in evals:
            pos = board.pos[t]
            deadline = deadlines.get(t, math.inf)
            slack = deadline - t_end
            out.append(Candidate(
                key=t, idle=total, slack=slack,
                remaining=(est.remaining(board.comp[t], board.size[t], pos)
                           if slack < math.inf else 0.0),
                tie=(float(board.inh[t][pos] > 0.0), -dd),
                pool=pool is None or board.kind[t] == pool))
        return out
