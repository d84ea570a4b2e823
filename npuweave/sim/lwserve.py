"""Open-loop layer-wise serving on the predictor alone: the fast path of the capacity searches.

For non-preemptive layer-wise policies the NPU engine makes a decision exactly when its DMA
engine frees, which the predictor knows (``S[t_m]``), and executes it at the predicted times
(the engine-equals-predictor contract). So an open-loop run needs no event loop: it is the
reference decision loop (``npuweave.schedule.reference.decide``, the one ``plan`` runs for a
closed loop) with this module's batching as its arrival source: take the next decision at
``max(S[t_m], when work is there)``, tell the ``Predictor`` that time, let the policy choose,
commit. ``tests/lwplus/test_lwplus_serve.py`` checks the times against the event-driven
engine, and the compiled loop (``npuweave.sim.lwkernel``) is checked against this one.

Requests of one model are served first come first served. Batching follows Triton's dynamic
batcher (``npuweave.sim.batcher.Batcher``, shared with ``npuweave serve``): a batch of up to
``max_batch`` requests forms when the model can take one and either ``max_batch`` are queued
or the oldest has waited ``window_s``; window 0 takes whatever has arrived (chapter IV's
CheckEnd: "appended to existing requests of the same model"). A batch of ``b`` uses the model's
costs at batch ``b`` (its compute/memory class included) and carries the earliest deadline of
its requests. "The model can take one": with ``grouping="per-model-fifo"`` (the default) once
the previous batch's last unit is dispatched (one batch of the model in service, the thesis's
per-model request queue); with ``grouping="per-request"`` while fewer than ``max_inflight``
batches of the model are in service, each a separate candidate of the policy (the board holds
``max_inflight`` tenants per model, slots a batch takes when it forms and frees when its last
unit is dispatched; each fetches its own weights).

``stop_missed``: stop as soon as that many requests are known to miss their deadline (the
capacity search only needs to know that the budget is exceeded).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from npuweave.errors import ConfigError
from npuweave.fileio.flags import Batching
from npuweave.schedule.base import COMPUTE, MEMORY, Tenant
from npuweave.schedule.board import Board
from npuweave.schedule.plan import policy_tenants
from npuweave.schedule.predictor import Predictor
from npuweave.schedule.protocol import Dispatch, LayerBase, View
from npuweave.schedule.reference import decide
from npuweave.sim.batcher import Batcher, inflight_slots
from npuweave.sim.requests import Request


@dataclass(frozen=True, slots=True, eq=False)
class Served:
    """Per-request outcome of ``serve_layerwise`` (arrays aligned with the arrivals).

    ``finish_s`` is ``nan`` for requests not finished when the run stopped early
    (``complete`` is then False); ``batch`` is the size of the batch a request was served in.
    """

    finish_s: np.ndarray
    batch: np.ndarray
    missed: int
    complete: bool
    decisions: int
    urgent: int
    policy_s: float
    pe_busy_s: float
    notes: tuple[str, ...]


def serve_layerwise(costs: Sequence[Sequence[Tenant]], buffer_bytes: int, dram_bw: float,
                    time_s: np.ndarray, model: np.ndarray, deadline_s: Sequence[float],
                    policy: LayerBase, batching: Batching = Batching(),
                    stop_missed: int | None = None, grouping: str | None = None,
                    max_inflight: int | None = None) -> Served:
    """Serve the arrivals ``(time_s, model)`` with a layer-wise ``policy``.

    ``costs[m][b - 1]`` is model ``m`` at batch ``b`` (same units, per-batch costs), for
    ``b`` up to ``batching.max_batch``; ``deadline_s[m]`` is model ``m``'s relative deadline.
    ``grouping`` (default: the policy's ``grouping``, else ``"per-model-fifo"``) and
    ``max_inflight`` (default: the policy's, else 4) choose how many batches of one model may
    be in service at once: one (``per-model-fifo``) or ``max_inflight`` (``per-request``),
    each a separate candidate.

    Examples
    --------
    >>> from npuweave.schedule.sequential import Sequential
    >>> a = Tenant("a", ("x",), (2.0,), (10,))
    >>> s = serve_layerwise([[a]], 10, 10.0, np.array([0.0, 0.5]), np.array([0, 0]),
    ...                     [5.0], Sequential())
    >>> s.finish_s.tolist(), s.missed       # fetch 0-1, compute 1-3; fetch 3-4, compute 4-6
    ([3.0, 6.0], 1)
    """
    costs = prepared(costs, buffer_bytes, dram_bw, time_s, model, deadline_s, policy, batching)
    slots = inflight_slots(policy, grouping, max_inflight)
    board = Predictor([c[0] for c in costs for _ in range(slots)], buffer_bytes, dram_bw)
    st = _State(costs, board, time_s, model, deadline_s, batching, slots)
    board.on_dispatched = st.finished
    notes = tuple(policy.start(board))  # type: ignore[attr-defined]
    limit = math.inf if stop_missed is None else stop_missed
    decisions = decide(board, st.chooser(policy), st, limit)[0]
    done = not np.isnan(st.finish).any()
    return Served(st.finish, st.batch, st.missed, bool(done), decisions,
                  int(getattr(policy, "urgent", 0)), st.spent, st.pe_busy, notes)


class _State:
    """Batches in service and outcomes of one ``serve_layerwise`` run.

    Board tenant ``m * slots + s`` is slot ``s`` of model ``m``; a batch that forms in a slot
    gets the model's costs at its size (``start``).
    """

    def __init__(self, costs: Sequence[Sequence[Tenant]], board: Predictor, time_s: np.ndarray,
                 model: np.ndarray, deadline_s: Sequence[float], batching: Batching,
                 slots: int) -> None:
        self.board, self.slots = board, slots
        self.times = [float(x) for x in time_s]
        self.rel = [float(d) for d in deadline_s]
        self.arrays = [[(list(t.compute_s), list(t.weight_bytes),
                         [s / board.bw for s in t.weight_bytes],
                         COMPUTE if t.total_compute_s >= t.total_weight_bytes / board.bw
                         else MEMORY) for t in per] for per in costs]
        n = len(self.times)
        self.finish = np.full(n, np.nan)
        self.batch = np.zeros(n, np.int64)
        self.batcher = Batcher(self.times, model, len(costs), batching.window_s,
                               batching.max_batch, slots,
                               [t + self.rel[int(m)] for t, m in zip(self.times, model)])
        # approx standalone time of a whole batch, per model and size (deadline inheritance)
        self.alone = [[_alone(c, f) for c, _, f, _ in per] for per in self.arrays]
        self.own: list[float] = [math.inf] * len(board.tenants)
        self.members: list[list[int]] = [[] for _ in board.tenants]
        self.current: list[Request | None] = [None] * len(board.tenants)
        self.batches = 0
        self.missed = 0
        self.pe_busy = 0.0
        self.spent = 0.0  # seconds in the policy's choices
        self._admit = self.batcher.admit

    def admit(self, now: float) -> None:
        """Batches form in the free slots of their models (``Batcher.admit``)."""
        slots = self.slots
        for m, s, reqs in self._admit(now):
            self.start(m * slots + s, m, reqs)

    def chooser(self, policy: LayerBase) -> Callable[[Board], int]:
        """The policy's choice of a tenant, timed into ``spent``: its ``select`` when it is
        deadline-blind (does not write its own ``decide``), else its ``decide`` on a view of
        the batches in service at the decision time (their deadlines inherited first when
        the policy asks for it)."""
        clock = time.perf_counter
        if type(policy).decide is LayerBase.decide:
            select = policy.select

            def timed(board: Board) -> int:
                t0 = clock()
                t = select(board)
                self.spent += clock() - t0
                return t

            return timed
        view = View(now=0.0, tenants=self.board.tenants, board=self.board)
        inherit = bool(getattr(policy, "inherit", False))

        def decided(board: Board) -> int:
            t0 = clock()
            view.now = board.t_m
            if inherit:
                self.inherit()
            view.running = [self.current[m] for m in board.active]  # type: ignore[misc]
            decision = policy.decide(view.now, view)
            assert isinstance(decision, Dispatch), "layer-wise policies answer Dispatch"
            self.spent += clock() - t0
            return decision.tenant

        return decided

    def start(self, t: int, m: int, reqs: list[int]) -> None:
        """Board tenant ``t`` (a slot of model ``m``) takes the batch ``reqs``."""
        b = self.board
        comp, size, ftime, kind = self.arrays[m][len(reqs) - 1]
        bw, buf = b.bw, b.buf
        b.comp[t], b.size[t], b.ftime[t], b.kind[t] = comp, size, ftime, kind
        b.inh[t] = [c - (buf - s) / bw for c, s in zip(comp, size)]
        b.mft[t] = max(ftime, default=0.0)
        first = self.times[reqs[0]]
        deadline = min(self.times[r] for r in reqs) + self.rel[m]
        self.members[t] = reqs
        self.own[t] = deadline
        # ``model`` is the board tenant, as in the serving simulator (policies match on it)
        self.current[t] = Request(self.batches, t, first, deadline_s=deadline,
                                  batch=len(reqs), units=len(comp))
        self.batches += 1
        self.pe_busy += sum(comp)
        b.issue(t, self.batches - 1, first)

    def inherit(self) -> None:
        """Each batch in service takes the deadline of its model's queue when earlier."""
        due, alone, own, slots = self.batcher.due, self.alone, self.own, self.slots
        for t, req in enumerate(self.current):
            if req is not None:
                m = t // slots
                d = due(m, alone[m])
                req.deadline_s = d if d < own[t] else own[t]

    def finished(self, t: int, request: int, finish_s: float) -> None:
        """Board hook: the batch's last unit is dispatched; ``finish_s`` is its compute end."""
        reqs = self.members[t]
        m = t // self.slots
        for r in reqs:
            self.finish[r] = finish_s
            self.batch[r] = len(reqs)
            if finish_s > self.times[r] + self.rel[m]:
                self.missed += 1
        self.members[t] = []
        self.current[t] = None
        self.batcher.free(m, t % self.slots)

    def wake(self, now: float) -> float | None:
        """When work can start next with nothing in service: an arrival or a window end."""
        return self.batcher.wake(now)


def _alone(comp: Sequence[float], ftime: Sequence[float]) -> float:
    """Sum of ``max(compute, fetch)``, added from the last unit (as the simulator's suffix)."""
    acc = 0.0
    for c, f in zip(reversed(comp), reversed(ftime)):
        acc += c if c > f else f
    return acc


def prepared(costs: Sequence[Sequence[Tenant]], buffer_bytes: int, dram_bw: float,
             time_s: np.ndarray, model: np.ndarray, deadline_s: Sequence[float],
             policy: LayerBase, batching: Batching) -> list[Sequence[Tenant]]:
    """``costs`` checked (a ``ConfigError`` names the bad input) and as ``policy`` runs them:
    its own units where it defines them (AI-MT's sub-layer blocks, ``plan.policy_tenants``).
    Both serving loops (this one and ``npuweave.sim.lwkernel``) start with it."""
    _check(costs, time_s, model, deadline_s, batching)
    return [policy_tenants(policy, per, buffer_bytes, dram_bw) for per in costs]


def _check(costs: Sequence[Sequence[Tenant]], time_s: np.ndarray, model: np.ndarray,
           deadline_s: Sequence[float], batching: Batching) -> None:
    if len(deadline_s) != len(costs):
        raise ConfigError(f"{len(deadline_s)} deadlines for {len(costs)} models; give one each")
    for d in deadline_s:
        if not d > 0:
            raise ConfigError(f"deadline {d!r} s: a deadline must be > 0 (inf: none)")
    if isinstance(batching.max_batch, bool) or batching.max_batch < 1:
        raise ConfigError(f"max batch {batching.max_batch!r}: give an integer >= 1")
    if not (math.isfinite(batching.window_s) and batching.window_s >= 0):
        raise ConfigError(f"batching window {batching.window_s!r} s: give a finite value >= 0")
    for m, per in enumerate(costs):
        if len(per) < batching.max_batch:
            raise ConfigError(f"model {m}: costs for {len(per)} batch sizes, need "
                              f"{batching.max_batch} (one per batch size up to the max batch)")
    if len(time_s) != len(model):
        raise ValueError("time_s and model must have one entry per request")
