"""Carrying out a ``Preempt`` decision in the serving simulator (see ``npuweave.sim.serve``).

Prices come from ``npuweave.cost.preemption``; the simulator turns them into DMA work (the
checkpoint ``STORE`` now, the restore ``LOAD`` on resume) and into per-request accounting
(``preemptions``, ``restarts``, ``overhead_s``, ``wasted_s``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, Protocol

from npuweave.errors import ConfigError
from npuweave.schedule.base import Tenant
from npuweave.schedule.predictor import Predictor
from npuweave.schedule.protocol import Mechanism, Preempt, View
from npuweave.sim.engine import Engine, Job, Kind, Unit
from npuweave.sim.requests import Request, State
from npuweave.sim.units import TenantUnits


class Simulator(Protocol):
    """What preemption reads and writes of the serving simulator (``npuweave.sim.serve``'s
    ``Simulator`` has it); typed here so that this module need not import ``serve``, which
    imports it."""

    running: Request | None
    then: int | None
    draining: bool
    effects: list[tuple[int, float, float]]

    @property
    def policy(self) -> Any: ...
    @property
    def layer(self) -> bool: ...
    @property
    def tenants(self) -> Sequence[Tenant]: ...
    @property
    def engine(self) -> Engine: ...
    @property
    def board(self) -> Predictor | None: ...
    @property
    def view(self) -> View: ...
    @property
    def requests(self) -> list[Request]: ...
    @property
    def units(self) -> list[TenantUnits]: ...
    @property
    def pending(self) -> deque[Job]: ...
    @property
    def stale(self) -> dict[int, int]: ...

    def ran(self, rid: int, start: float, end: float) -> None: ...


def preempt(sim: Simulator, d: Preempt, now: float) -> None:
    """Apply ``d``: the running request gives up the NPU (or a queued one is dropped)."""
    req = _target(sim, d)
    if sim.layer:
        _drop_layerwise(sim, req, d, now)
        return
    if req is not sim.running:  # a queued request: only dropping makes sense
        if d.mechanism is not Mechanism.KILL or d.restart:
            raise ConfigError(f"policy {sim.policy.name!r} preempted request {req.id}, which "
                              "is not running; only Preempt(kill, restart=False) drops a "
                              "queued request")
        sim.view.queued.remove(req)
        _kill(sim, req, now, restart=False)
        return
    req.preemptions += 1
    if d.mechanism is Mechanism.DRAIN:
        sim.draining = True
        sim.then = d.then
        return
    sim.running = None
    sim.then = d.then
    if d.mechanism is Mechanism.CHECKPOINT:
        _take_back(sim, req, now)
        _checkpoint(sim, req)
    else:
        _kill(sim, req, now, d.restart, _cut(sim, req, now))


def _target(sim: Simulator, d: Preempt) -> Request:
    if not 0 <= d.request < len(sim.requests):
        raise ConfigError(f"policy {sim.policy.name!r} preempted unknown request {d.request}")
    return sim.requests[d.request]


def _take_back(sim: Simulator, req: Request, now: float) -> None:
    """The preemption takes effect when the request's computation running now ends (now,
    if none runs): its units dispatched but not started are withdrawn from the engine, and
    ``dispatched`` rewinds to the units that started. ``sim.effects`` records
    ``(request, decided_s, effective_s)``."""
    eng = sim.engine
    job = eng.pe_job
    # the PE's job is this pass's unit unless it is left over from a killed pass (stale)
    on_pe = (eng.pe_busy and job is not None and job[1] == req.id and job[0].index >= 0
             and req.id not in sim.stale)
    first = job[0].index + 1 if on_pe else req.progress  # type: ignore[index]
    eng.take_back(req.id, first)
    req.dispatched = first
    end = eng.pe_start + job[0].seconds if on_pe else now  # type: ignore[index]
    sim.effects.append((req.id, now, end))


def _cut(sim: Simulator, req: Request, now: float) -> float:
    """A kill takes effect at once (PREMA's KILL): every unit of the request not computed
    is withdrawn, the computation running now is cut off (its work is lost, the PE is free
    at once) and ``dispatched`` rewinds to ``progress``. Returns the seconds of the cut
    computation; ``sim.effects`` records ``(request, now, now)``."""
    eng = sim.engine
    job = eng.pe_job
    if eng.pe_busy and job is not None and job[1] == req.id and eng.pe_start < now:
        sim.ran(req.id, eng.pe_start, now)  # it had the PE (segments), if for nothing
        # earlier checkpoints that waited for this computation take effect now
        sim.effects = [(r, d, now) if r == req.id and e > now else (r, d, e)
                       for r, d, e in sim.effects]
    eng.take_back(req.id, req.progress)
    ran = eng.cut(req.id)
    req.dispatched = req.progress
    sim.effects.append((req.id, now, now))
    return ran


def _drop_layerwise(sim: Simulator, req: Request, d: Preempt, now: float) -> None:
    """Layer-wise runs interleave units instead of preempting; a policy may only drop a
    request for good (``Preempt(id, KILL, restart=False)``, e.g. Layerweaver+ shedding one
    that will miss its deadline): a queued one, or a started one at a unit boundary while it
    still has units to dispatch. Its units already handed to the NPU complete and count as
    wasted; the tenant moves on to its next queued request."""
    board = sim.board
    t = req.model
    current = board.busy[t] and board.req[t] == req.id  # type: ignore[union-attr]
    if d.mechanism is not Mechanism.KILL or d.restart or req.state not in (
            State.QUEUED, State.RUNNING) or (req.dispatched and not current):
        raise ConfigError(f"layer-wise policy {sim.policy.name!r} returned {d} for request "
                          f"{req.id} ({req.state.value}, {req.dispatched} of {req.units} "
                          "units dispatched); layer-wise runs only drop requests, queued or "
                          "with units left to dispatch (Preempt(id, Mechanism.KILL, "
                          "restart=False))")
    if current:  # the tenant's current request (started or not): serve the next one
        board._next_request(t)  # type: ignore[union-attr]
    else:
        q = board.queue[t]  # type: ignore[union-attr]
        for k, (rid, _) in enumerate(q):
            if rid == req.id:
                del q[k]
                break
    if req.dispatched:
        req.preemptions += 1
    _kill(sim, req, now, restart=False)


def _checkpoint(sim: Simulator, req: Request) -> None:
    """Store the live state after the last dispatched unit; restore it on resume."""
    units = sim.units[req.model]
    nbytes = units.live[req.dispatched - 1] if req.dispatched else 0
    req.state = State.PREEMPTED
    sim.view.queued.append(req)
    if nbytes:
        store = Unit(Kind.STORE, req.model, -1, nbytes, 0, units.latency_s)
        sim.pending.append((store, req.id))
        req.overhead_s += units.transfer_s(nbytes)
        req.restore_bytes = nbytes


def _kill(sim: Simulator, req: Request, now: float, restart: bool, cut_s: float = 0.0) -> None:
    """Discard the current pass: computed units, the ``cut_s`` seconds of a computation cut
    off, and the computations still in flight (a layer-wise drop lets them run) are wasted."""
    comp = sim.tenants[req.model].compute_s
    req.wasted_s += sum(comp[:req.progress]) + cut_s
    in_flight = req.dispatched - req.progress
    if in_flight:
        sim.stale[req.id] = sim.stale.get(req.id, 0) + in_flight
    req.progress = req.dispatched = 0
    req.restore_bytes = 0
    if restart:
        req.restarts += 1
        req.state = State.PREEMPTED
        sim.view.queued.append(req)
    else:
        req.state = State.KILLED
        req.finish_s = now


def stale_done(sim: Simulator, unit: Unit, rid: int) -> None:
    """A computation of a killed pass ended: count it as wasted, not as progress."""
    req = sim.requests[rid]
    req.wasted_s += unit.seconds
    left = sim.stale[rid] - 1
    if left:
        sim.stale[rid] = left
    else:
        del sim.stale[rid]
