"""The serving simulator's side that hands work to the engine and asks the policy.

``Dispatcher`` is half of ``npuweave.sim.serve.Simulator`` (which adds the clock: arrivals,
wake-ups, the engine's hooks). As the engine's *source* it answers ``next(now)`` whenever the
DMA engine is free: a layer-wise policy picks a tenant and the ``Predictor`` commits that
tenant's next unit; a task-level policy's running request sends its next unit in order, and
when it has none left (its last computation started) the policy is asked for the next
request. Every unit goes out as its jobs in dispatch order (``npuweave.sim.units``), built
once per model. ``_decide``/``_apply`` turn the policy's ``Decision`` into runs, preemptions
(``npuweave.sim.preempt``) and wake-ups.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from npuweave.errors import ConfigError
from npuweave.schedule.predictor import Predictor
from npuweave.schedule.protocol import Decision, Dispatch, Idle, Preempt, Run, View
from npuweave.sim.engine import Engine, Job, Kind, Unit
from npuweave.sim.events import EventLoop, Handle
from npuweave.sim.preempt import preempt
from npuweave.sim.requests import Request, State
from npuweave.sim.units import TenantUnits

WAKE = 3  # event priority of wake-ups: after the engine's events at the same instant


class Dispatcher:
    """The engine's source and the policy's caller (state set up by ``Simulator``)."""

    policy: Any
    layer: bool
    loop: EventLoop
    engine: Engine
    board: Predictor | None
    select: Any
    idled: bool
    requests: list[Request]
    live: list[Request]
    pending: deque[Job]
    heads: list[tuple[Unit, ...]]
    tails: list[tuple[tuple[Unit, ...], ...]]
    units: list[TenantUnits]
    running: Request | None
    then: int | None
    draining: bool
    stale: dict[int, int]
    wake: Handle | None
    predicted: list[tuple[int, int, float, float, float, float, float]] | None
    view: View
    at_units: bool
    decisions: list[tuple[float, Any]] | None

    def _wake_up(self) -> None:  # the clock's (``Simulator``)
        raise NotImplementedError

    # -- the engine's source -----------------------------------------------------------------
    def next(self, now: float) -> Job | None:
        if self.pending:
            return self.pending.popleft()
        if self.layer:
            return self._next_layer(now)
        return self._next_task(now)

    def _next_layer(self, now: float) -> Job | None:
        b = self.board
        if not b.active:  # type: ignore[union-attr]
            self.idled = True
            return None
        if self.idled:
            b.tell(now)  # type: ignore[union-attr]
            self.idled = False
        if self.select is not None:
            t = self.select(b)
        else:
            choice = self._layer_decision(now)
            if choice is None:
                return None
            t = choice
        r, i, fs, fe, cs, ce = b.commit(t)  # type: ignore[union-attr]
        if self.predicted is not None:
            self.predicted.append((r, i, now, fs, fe, cs, ce))
        req = self.requests[r]
        req.dispatched = i + 1
        if req.state is State.QUEUED:
            req.state = State.RUNNING
        return self._emit(r, t, i)

    def _layer_decision(self, now: float) -> int | None:
        """Ask a layer-wise policy that writes its own ``decide``: the tenant to dispatch, or
        None when it idles (or dropped the last candidate)."""
        b = self.board
        d = self._decide(now)
        while isinstance(d, Preempt):  # a drop changes the candidates: decide again
            self._apply(d, now)
            if not b.active:  # type: ignore[union-attr]
                self.idled = True
                return None
            d = self._decide(now)
        if not isinstance(d, Dispatch):
            self._apply(d, now)
            self.idled = True
            return None
        return d.tenant

    def _emit(self, rid: int, t: int, i: int) -> Job:
        """Queue unit ``i`` of tenant ``t`` for request ``rid`` as jobs after those already
        pending; return the first."""
        pend = self.pending
        job = (self.heads[t][i], rid)
        if pend:
            pend.append(job)
            job = pend.popleft()
        for unit in self.tails[t][i]:
            pend.append((unit, rid))
        return job

    def _next_task(self, now: float) -> Job | None:
        req = self.running
        if req is not None and req.dispatched == req.units:
            if not self._last_started(req):  # it holds the NPU (and stays preemptible)
                return None
            self.running = None
            self.draining = False
            req = None
        if req is None:
            if self.then is not None:
                rid, self.then = self.then, None
                self._start(rid, now)
            elif self.view.queued and not (self.at_units and self.engine.pe_busy):
                self._consult(now)
            if self.pending:
                return self.pending.popleft()
            req = self.running
            if req is None:
                return None
        i = req.dispatched
        req.dispatched = i + 1
        return self._emit(req.id, req.model, i)

    def _last_started(self, req: Request) -> bool:
        """Whether the last computation of ``req``'s pass has started (or ended)."""
        if req.progress == req.units:
            return True
        eng = self.engine
        job = eng.pe_job
        return (eng.pe_busy and job is not None and job[1] == req.id
                and job[0].index == req.units - 1 and req.id not in self.stale)

    def _start(self, rid: int, now: float) -> None:
        req = self.requests[rid]
        if req.state not in (State.QUEUED, State.PREEMPTED):
            raise ConfigError(f"policy {self.policy.name!r} ran request {rid}, which is "
                              f"{req.state.value}; run a queued or preempted request")
        self.view.queued.remove(req)
        req.state = State.RUNNING
        self.engine.settle()  # the engine's queues may be held by a stretch
        self.running = req
        if req.restore_bytes:
            unit = Unit(Kind.LOAD, req.model, -1, req.restore_bytes, 0,
                        self.units[req.model].latency_s)
            self.pending.append((unit, rid))
            req.overhead_s += self.units[req.model].transfer_s(req.restore_bytes)
            req.restore_bytes = 0

    # -- decisions ---------------------------------------------------------------------------
    def _decide(self, now: float) -> Decision:
        v = self.view
        v.now = now
        if self.layer:
            self.live = [r for r in self.live if r.state in (State.QUEUED, State.RUNNING)]
            v.queued = [r for r in self.live if r.state is State.QUEUED]
            v.running = [r for r in self.live if r.state is State.RUNNING]
        else:
            run = self.running
            if run is not None and run.dispatched == run.units and self._last_started(run):
                self.running = None  # its last computation runs: the NPU is free
                self.draining = False
            v.running = [self.running] if self.running is not None and not self.draining else []
            if self.decisions is not None:
                d = self.policy.decide(now, v)
                self.decisions.append((now, d))
                return d
        return self.policy.decide(now, v)

    def _consult(self, now: float) -> None:
        self._apply(self._decide(now), now)

    def _apply(self, d: Decision, now: float) -> None:
        if isinstance(d, Run):
            if self.draining:  # the drained request keeps the NPU; this one follows it
                self.then = d.request
            elif self.running is None:
                if self.then is None:
                    self._start(d.request, now)
                    self.engine.kick()
            elif d.request != self.running.id:
                raise ConfigError(f"policy {self.policy.name!r} ran request {d.request} while "
                                  f"request {self.running.id} holds the NPU; preempt it first")
        elif isinstance(d, Preempt):
            preempt(self, d, now)  # type: ignore[arg-type]
            self.engine.kick()
        elif isinstance(d, Idle):
            if self.wake is not None:
                self.wake.cancel()
                self.wake = None
            if d.until_s < math.inf:
                self.wake = self.loop.schedule(max(d.until_s, now), self._wake_up, prio=WAKE)
