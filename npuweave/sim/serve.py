"""The serving simulator: requests arrive on their own clock, a policy decides, the engine runs.

One ``Simulator`` drives one ``Engine`` (``npuweave.sim.engine``) on one ``EventLoop``. It owns
every ``Request`` and is the engine's source: whenever the DMA engine is free it hands over the
next unit of the current decision, or asks the policy for a new one (``decide(now, view)``,
``npuweave.schedule.protocol``). Requests come from an arrival process: a list of arrivals
(Poisson, trace, LoadGen: ``npuweave.sim.arrivals``) and/or the closed loop
(``npuweave.sim.arrival_processes.ClosedLoop``).

Layer-wise policies see the ``Predictor`` (the ``Board`` told ``now``): each tenant's requests
queue in it in arrival order and ``Dispatch(t)`` commits tenant ``t``'s next unit. A policy
that runs its own units runs them here too, as in ``plan`` (AI-MT's merged sub-layer blocks,
``npuweave.schedule.plan.policy_tenants``; a block's footprint, ``Footprint.blocks``). Task-level
policies give the NPU to one request at a time (``Run``); its units then go out in order. Once
the running request has dispatched its last unit the NPU is free for the next one, whose weight
fetches overlap the tail of the previous computation, as on any decoupled NPU.

Preemption (``Preempt``) of the running request: its units dispatched but not started are
taken back from the engine (``Engine.take_back``; a weight fetch in progress goes on and is
discarded). Then:

* checkpoint: takes effect at the end of its computation running now (one preemption point:
  a layer, a weight tile or a compute chunk), or at once when none runs; a ``STORE`` of the
  live state after its last started unit (``npuweave.cost.preemption``) runs once that unit
  has computed; on resume a ``LOAD`` of the same bytes precedes its next unit;
* kill: takes effect at once, as PREMA's KILL: its computation running now is cut off
  (``Engine.cut``; the PE is free at the decision), and the request goes back to the queue at
  unit 0 (``restart=False``: it is dropped and reported killed); the PE work of the discarded
  pass, the cut computation's part included, is counted in ``wasted_s``;
* drain: the request keeps dispatching to its end; the next request follows.

With ``traffic=True`` every unit also moves its activation spills (``LayerCost.spill_bytes``,
written after the layer, read back before the next) and pays the DRAM latency per transfer;
the closed-loop Layerweaver reproduction runs with ``traffic=False`` (activations on chip).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from npuweave.errors import ConfigError
from npuweave.schedule.base import Tenant
from npuweave.schedule.plan import policy_tenants
from npuweave.schedule.predictor import Predictor
from npuweave.schedule.protocol import (
    LayerBase,
    View,
)
from npuweave.sim.arrival_processes import ClosedLoop
from npuweave.sim.dispatch import WAKE, Dispatcher
from npuweave.sim.engine import Engine, Job, Unit
from npuweave.sim.events import EventLoop, Handle
from npuweave.sim.preempt import stale_done
from npuweave.sim.requests import Request, State
from npuweave.sim.stretch import MODES, Stretcher, choose, settings, too_small
from npuweave.sim.taskrun import ArrivalRows, RequestColumns, TaskRun, plan
from npuweave.sim.units import Footprint, unit_tables

#: Default cap on simulated events per run (``max_events`` raises it).
MAX_EVENTS = 50_000_000


class Simulator(Dispatcher):
    """One run: ``tenants`` on an NPU (``buffer_bytes``, ``dram_bw``) under ``policy``.

    Parameters
    ----------
    arrivals : ``(time_s, tenant, priority, absolute deadline_s)`` rows sorted by time.
    closed : the closed loop, issuing per-tenant streams (combinable with ``arrivals``).
    footprints : per tenant, activation bytes per unit (checkpoints, spills); zeros if None.
    traffic : move activation spills and pay DRAM latency (``latency_s``) per transfer.
    log : keep every busy interval (timelines, traces); off keeps only totals.
    predict : keep the predicted times of every layer-wise decision (tests).
    segments : keep ``segments``, the maximal runs of one request on the PE as
        ``[request, start_s, end_s]`` in time order (per-request records).
    stretch : how the engine runs between outside events (``npuweave.sim.stretch.MODES``):
        ``auto`` runs a task-level policy's stretches compiled when numba is installed, and a
        policy that states its rule (``Ruled``: fcfs, hpf, sjf) the whole run in one compiled
        call (``npuweave.sim.taskrun``); None: ``npuweave.sim.stretch.settings.mode``
        (benchmarks switch it).
    """

    def __init__(self, tenants: Sequence[Tenant], buffer_bytes: int, dram_bw: float,
                 policy: Any, *, arrivals: Sequence[tuple[float, int, int, float]] = (),
                 closed: ClosedLoop | None = None,
                 footprints: Sequence[Footprint | None] | None = None,
                 traffic: bool = False, latency_s: float = 0.0, log: bool = False,
                 predict: bool = False, max_events: int = MAX_EVENTS, segments: bool = False,
                 isolated_s: Sequence[float] = (),
                 progress: Callable[[float], None] | None = None, stretch: str | None = None) -> None:
        self.policy = policy
        self.layer = getattr(policy, "level", "layer") == "layer"
        if self.layer:  # the units the policy runs (AI-MT's sub-layer blocks), as ``plan``
            whole, tenants = tenants, policy_tenants(policy, tenants, buffer_bytes, dram_bw)
            if footprints is not None:
                footprints = [None if f is None else f.blocks(w.units, t.units)
                              for f, w, t in zip(footprints, whole, tenants)]
        self.tenants = tuple(tenants)
        hint = (f" (max_events={max_events}); raise max_events (--max-events) or shorten the "
                "run (--duration, --window-s, --requests)")
        self.loop = EventLoop(max_events, hint)
        # no on_start hook: ``_on_end`` sets a request's start from the engine (one call per
        # computation fewer; the PE is serial, so its first computation to end is the first
        # to have started)
        self.engine = Engine(buffer_bytes, dram_bw, self, None, self._on_end, self.loop, log)
        tables = [unit_tables(t, k, f, traffic, latency_s, dram_bw) for k, (t, f) in
                  enumerate(zip(self.tenants, footprints or [None] * len(self.tenants)))]
        self.units = [u for u, _, _ in tables]
        self.requests: list[Request] = []
        self.live: list[Request] = []  # layer-wise: requests not yet done (pruned lazily)
        self.tindex: list[int] = []  # index of each request within its tenant's stream
        self.issued = [0] * len(self.tenants)
        self.pending: deque[Job] = self.engine.pending  # the engine takes these first
        self.heads = [h for _, h, _ in tables]  # per tenant and unit index
        self.tails = [t for _, _, t in tables]
        # arrays (``ArrivalRows``) stay arrays: a 1M-request run need not build its rows
        self.arrivals = arrivals if isinstance(arrivals, ArrivalRows) else list(arrivals)
        self.next_arrival = 0
        self.closed = closed
        self.board = Predictor(self.tenants, buffer_bytes, dram_bw) if self.layer else None
        plain = self.layer and type(policy).decide is LayerBase.decide
        self.select = policy.select if plain else None
        self.idled = False  # the DMA idled since the last decision: tell the board ``now``
        self.running: Request | None = None  # task-level: holds the NPU, units left to send
        self.then: int | None = None  # task-level: request to run once the NPU is free
        self.draining = False
        self.stale: dict[int, int] = {}  # killed request id -> its computations still in flight
        self.wake: Handle | None = None
        self.predicted: list[tuple[int, int, float, float, float, float, float]] | None = (
            [] if predict else None)
        # the engine takes ``pending`` first, then asks the policy shape's own method
        self.engine.next_job = self._next_layer if self.layer else self._next_task
        self.view = View(0.0, self.tenants, [], [], self.board, tuple(isolated_s),
                         tuple(_suffix(t, dram_bw) for t in self.tenants))
        self.notes: list[str] = []
        # task-level preemptions: (request, decided_s, effective_s), npuweave.sim.preempt
        self.effects: list[tuple[int, float, float]] = []
        self.segments: list[list[Any]] | None = [] if segments else None
        self.progress = progress
        self.ticking = False  # the policy's periodic wake-ups are scheduled
        # a task-level policy that decides at unit boundaries only (PREMA's dysta reading):
        # consulted when a computation ends or when a request arrives to an idle PE
        self.at_units = not self.layer and bool(getattr(policy, "at_units", False))
        self.decisions: list[tuple[float, Any]] | None = None  # set to [] to log decisions
        self.columns: RequestColumns | None = None  # per-request arrays (the task loop's)
        self.taskrun: TaskRun | None = None
        self._stretch_fn: Any = None
        self.engine_note = self._stretches(stretch, log)

    def _stretches(self, mode: str | None, log: bool) -> str:
        """Hand the engine a ``Stretcher`` where stretches apply; the note saying which ran."""
        mode = settings.mode if mode is None else mode
        if mode not in MODES:
            raise ConfigError(f"stretch={mode!r}; choose one of {', '.join(MODES)}")
        # the per-event engine, with no note (as such runs always had), where stretches do
        # not apply: a layer-wise policy decides every unit, the closed loop issues a
        # request at each finish, engine logs, batching decides at each unit
        if self.layer or self.closed is not None or log or type(self) is not Simulator:
            return ""
        fn, note = choose(mode)
        taskrun = plan(self, mode)
        cold = too_small(mode, len(self.arrivals), taskrun is not None)
        if cold:  # per event: a first compile would cost more than this run
            return cold
        self._stretch_fn = fn  # the Stretcher is made when the engine runs (``start``)
        self.taskrun = taskrun
        return note

    # -- running -----------------------------------------------------------------------------
    def run(self) -> None:
        """Simulate until every issued request is done (or dropped)."""
        if self.taskrun is not None:
            self.taskrun.run()  # the whole run in one compiled call
            left = self.taskrun.unfinished()
        else:
            self.start()
            if self.progress is not None:
                step = (self.arrivals[-1][0] if self.arrivals else 0.0) / 200 or 1e-3
                self.loop.schedule(step, self._tick, step, self._report, prio=WAKE)
            self.engine.run()
            unrun = [r for r in self.requests if r.state not in (State.DONE, State.KILLED)]
            for r in unrun:  # only tenants a policy excluded leave requests behind
                r.state = State.KILLED
            left = len(unrun)
        if self.progress is not None:
            self.progress(self.engine.last_end)
        if left:
            self.notes.append(f"{left} request(s) of models the policy does not serve "
                              "were never run; they count as killed")

    def start(self) -> None:
        """Start the policy, the closed loop, the arrival list and the wake-ups; run nothing.

        ``run`` calls it; an online driver (LoadGen) calls it, then ``arrive_at`` and
        ``advance`` as real time passes.
        """
        if self.layer:
            self.notes = list(self.policy.start(self.board))
            if self.closed is not None:
                self.board.on_dispatched = self._reissue_predicted  # type: ignore[union-attr]
        else:
            self.notes = list(self.policy.start(self.view))
        if self.engine_note:
            self.notes.append(self.engine_note)
        if self._stretch_fn is not None and self.engine.stretch is None:
            self.engine.stretch = Stretcher(self, self._stretch_fn)
        self.taskrun = None  # started here (online use): the whole-run loop no longer applies
        if self.closed is not None and self.closed.first():
            for t in range(len(self.tenants)):
                self._arrive(t, 0.0, 0, math.inf)
        self._schedule_arrival()
        self._start_wakeups(self.loop.now)

    def _start_wakeups(self, now: float) -> None:
        period = getattr(self.policy, "period_s", None)
        if period and not self.ticking:
            self.ticking = True
            self.loop.schedule(now + period, self._tick, period, self._wake_up, prio=WAKE)

    def advance(self, until: float) -> None:
        """Simulate up to time ``until`` (never backwards); the clock then reads ``until``."""
        until = max(until, self.loop.now)
        self.loop.run(until)
        self.loop.now = until

    def arrive_at(self, now: float, tenant: int, priority: int = 0,
                  deadline_s: float = math.inf) -> Request:
        """A request of ``tenant`` arrives at ``now`` (not before the clock): online use."""
        self.advance(now)
        req = self._arrive(tenant, self.loop.now, priority, deadline_s)
        self._start_wakeups(self.loop.now)
        return req

    def _report(self) -> None:
        self.progress(self.loop.now)  # type: ignore[misc]

    def _schedule_arrival(self) -> None:
        if self.next_arrival < len(self.arrivals):
            row = self.arrivals[self.next_arrival]
            self.loop.schedule(row[0], self._arrival_event, prio=WAKE)

    def _arrival_event(self) -> None:
        _, t, prio, deadline = self.arrivals[self.next_arrival]
        self.next_arrival += 1
        self._arrive(t, self.loop.now, prio, deadline)
        self._schedule_arrival()

    def _arrive(self, t: int, now: float, priority: int, deadline_s: float,
                arrival_s: float | None = None) -> Request:
        # arrival_s: when the request entered the system, if before ``now`` (a batch carries
        # its oldest member's arrival, npuweave.sim.batch_serve)
        first = now if arrival_s is None else arrival_s
        req = Request(len(self.requests), t, first, int(priority), float(deadline_s),
                      self.tenants[t].batch, len(self.units[t].comp))
        self.requests.append(req)
        self.tindex.append(self.issued[t])
        self.issued[t] += 1
        if self.layer:
            self.live.append(req)
            self.board.issue(t, req.id, first)  # type: ignore[union-attr]
            self.engine.kick()
        else:
            self.view.queued.append(req)
            if not self.at_units or (self.running is None and not self.engine.pe_busy):
                self._consult(now)  # a Run kicks the engine
        return req

    def _reissue_predicted(self, t: int, r: int, finish_s: float) -> None:
        """Closed loop, layer-wise: the finish is known when the last unit is dispatched."""
        if self.closed.reissue(self.tindex[r], finish_s):  # type: ignore[union-attr]
            self._arrive(t, finish_s, 0, math.inf)

    def _tick(self, period: float, action: Callable[[], None]) -> None:
        """A periodic event (policy wake-ups, progress) while work is left."""
        more = (self.next_arrival < len(self.arrivals) or self.running is not None
                or bool(self.view.queued) or not self.engine.dma_idle
                or self.engine.pe_busy)
        if not more:
            if action == self._wake_up:
                self.ticking = False
            return
        action()
        self.loop.schedule(self.loop.now + period, self._tick, period, action, prio=WAKE)

    def _wake_up(self) -> None:
        if self.layer:
            self.engine.kick()
        else:
            self._consult(self.loop.now)

    # -- engine hooks ------------------------------------------------------------------------
    def ran(self, rid: int, start: float, end: float) -> None:
        """Request ``rid`` had the PE from ``start`` to ``end``: its start and segments."""
        req = self.requests[rid]
        if req.start_s != req.start_s:  # nan: the first computation of this request ended
            req.start_s = start
        segs = self.segments
        if segs is not None:
            if segs and segs[-1][0] == rid:
                segs[-1][2] = end
            else:
                segs.append([rid, start, end])

    def _on_end(self, unit: Unit, rid: int, now: float) -> None:
        req = self.requests[rid]
        self.ran(rid, self.engine.pe_start, now)
        run = self.running
        if run is not None and run.dispatched == run.units and self.engine.dma_idle:
            ready = self.engine.ready  # its last computation starts now: the NPU is free
            if run.progress == run.units or (ready and ready[0][1] == run.id
                                             and ready[0][0].index == run.units - 1):
                self.engine.kick()
        if unit.index < 0:
            return
        stale = self.stale
        if stale and rid in stale:
            stale_done(self, unit, rid)
        else:
            req.progress += 1
            if req.progress == req.units:
                req.state = State.DONE
                req.finish_s = now
                if self.closed is not None and not self.layer and self.closed.reissue(
                        self.tindex[rid], now):
                    self._arrive(req.model, now, 0, math.inf)
        if self.at_units and self.view.queued:  # a unit boundary: the policy decides
            self._consult(now)


@lru_cache(maxsize=4096)
def _suffix(t: Tenant, bw: float) -> tuple[float, ...]:
    """Isolated seconds of units ``i..end`` of ``t`` (``max(compute, fetch)`` per unit);
    cached: every policy run over the same tasks (``reproduce prema``) reuses them."""
    out = [0.0] * (len(t.compute_s) + 1)
    for i in range(len(t.compute_s) - 1, -1, -1):
        out[i] = out[i + 1] + max(t.compute_s[i], t.weight_bytes[i] / bw)
    return tuple(out)
