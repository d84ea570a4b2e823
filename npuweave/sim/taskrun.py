"""Running a ``Simulator`` whole in the compiled task loop (``npuweave.sim.taskloop``).

``TaskRun`` is ``Simulator.run`` for a rule-stated task-level policy (``Ruled``: fcfs, hpf,
hpf-p, sjf, sjf-p, or any other, ``npuweave.sim.taskrules``) on open-loop arrivals, without
engine logs: it lays the run out in arrays (the engine's state, the requests, the models' job
tables), calls ``run_tasks`` with the policy's rule until it finishes (growing an array or
reporting progress when it stops for that), and leaves the results where the Python path
leaves them: the engine's totals and the loop's clock and event count, ``Simulator.requests``
(built on demand from the columns, ``RequestRows``), ``columns`` (the per-request arrays, for
tables), ``segments``, ``effects`` and, when kept, ``decisions``. ``plan`` says whether it
applies; which path ran is in the run's notes.

``ArrivalRows`` lets a caller hand the simulator its arrivals as arrays (``serve``'s 1M-request
runs) instead of a list of tuples.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from npuweave.schedule import jit
from npuweave.schedule.base import Tenant
from npuweave.schedule.protocol import IDLE, Preempt, Run
from npuweave.sim import engine_kernel as K
from npuweave.sim import taskloop as L
from npuweave.sim import taskpreempt as P
from npuweave.sim import taskqueue as Q
from npuweave.sim import taskrules
from npuweave.sim.engine import Kind, Unit
from npuweave.sim.events import EventBudgetError
from npuweave.sim.requests import Request, State
from npuweave.sim.stretch import _table

if TYPE_CHECKING:
    from npuweave.sim.serve import Simulator

NOTE = "engine: the whole run in one compiled loop with the policy's own rule (numba)"
NOTE_PY = "engine: the whole run by the uncompiled task loop (tests)"
_STATES = tuple(State(s) for s in Q.STATES)
#: spare room the arrays start with (``run_tasks`` asks for more when it needs it; tests set
#: 0 to make every array grow)
ROOM = 256
_MECH = {"checkpoint": Q.CHECKPOINT, "kill": Q.KILL, "drain": Q.DRAIN}


@dataclass(frozen=True, slots=True, eq=False)
class ArrivalRows(Sequence[tuple[float, int, int, float]]):
    """Arrivals as parallel arrays, read as ``(time_s, model, priority, deadline_s)`` rows
    (absolute deadlines), sorted by time."""

    time_s: np.ndarray
    model: np.ndarray
    priority: np.ndarray
    deadline_s: np.ndarray

    def __len__(self) -> int:
        return int(self.time_s.shape[0])

    @overload
    def __getitem__(self, i: int) -> tuple[float, int, int, float]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[float, int, int, float]]: ...

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return (float(self.time_s[i]), int(self.model[i]), int(self.priority[i]),
                float(self.deadline_s[i]))


@dataclass(frozen=True, slots=True, eq=False)
class RequestColumns:
    """Per-request results of a task-loop run, by request id (= arrival row)."""

    start_s: np.ndarray
    finish_s: np.ndarray
    state: np.ndarray  # ``taskqueue`` state codes (``taskqueue.STATES``)
    preemptions: np.ndarray
    overhead_s: np.ndarray
    wasted_s: np.ndarray


class RequestRows(Sequence[Request]):
    """The run's requests, each built as a ``Request`` when read (no object per request is
    kept: a 1M-request run would hold a gigabyte of them)."""

    def __init__(self, rc: np.ndarray, rx: np.ndarray, deadline: np.ndarray, n: int,
                 batch: list[int], units: list[int], restore: np.ndarray) -> None:
        self.rc, self.rx, self.deadline, self.n = rc, rx, deadline, n
        self.batch, self.units, self.restore = batch, units, restore

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[Request]:
        return (self[i] for i in range(self.n))

    @overload
    def __getitem__(self, i: int) -> Request: ...
    @overload
    def __getitem__(self, i: slice) -> list[Request]: ...

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        c, x = self.rc[i].tolist(), self.rx[i].tolist()
        m = c[Q.R_MODEL]
        row = c[Q.R_RESTORE]
        return Request(i, m, x[Q.X_ARR], c[Q.R_PRIO], float(self.deadline[i]), self.batch[m],
                       self.units[m], _STATES[c[Q.R_STATE]], c[Q.R_PROG], c[Q.R_DSP],
                       x[Q.X_START], x[Q.X_FINISH], c[Q.R_PRE], c[Q.R_RESTART], x[Q.X_OVER],
                       x[Q.X_WASTE], int(self.restore[row]) if row >= 0 else 0)


def plan(sim: Simulator, mode: str) -> TaskRun | None:
    """The whole-run loop for ``sim`` under stretch mode ``mode``, or None where it does not
    apply (the caller has checked: task-level, open loop, no engine logs, plain Simulator)."""
    rule = taskrules.rule_of(sim.policy) if mode in ("auto", "loop", "loop-python") else None
    if rule is None or getattr(sim.policy, "period_s", None) or sim.at_units:
        return None
    if mode == "loop-python":
        return TaskRun(sim, jit.python("npuweave.sim.taskloop.run_tasks"), rule, NOTE_PY)
    if jit.compile():
        return TaskRun(sim, L.run_tasks, rule, NOTE)
    return None


_LAID: dict[tuple[Any, ...], tuple[Any, Any]] = {}


@lru_cache(maxsize=4096)
def _wasted_before(t: Tenant) -> tuple[float, ...]:
    """PE seconds of units ``0..p-1`` for every ``p``, as ``preempt._kill`` sums them."""
    comp = t.compute_s
    return tuple(sum(comp[:p]) for p in range(len(comp) + 1))


class TaskRun:
    """One ``Simulator.run`` through ``fn`` (``run_tasks``, compiled or plain) with the
    policy's ``rule`` (``taskrules.rule_of``: plain functions, compiled here for a compiled
    ``fn``)."""

    def __init__(self, sim: Simulator, fn: Any, rule: taskrules.Rule, note: str) -> None:
        self.sim, self.fn, self.rule, self.note = sim, fn, rule, note
        self.grown = 0  # times an array was grown

    def run(self) -> None:
        sim = self.sim
        sim.notes = [*sim.policy.start(sim.view), self.note]
        eng, req, tab, out = self._lay_out()
        key, wins = self.rule
        if self.fn is L.run_tasks:
            jit.announce("npuweave.sim.taskloop.run_tasks", "the whole-run serving loop", 45)
            key, wins = taskrules.compiled(self.rule)
        while True:
            status = self.fn(eng, req, tab, out, key, wins)
            if status == L.GROW:
                eng, out = self._grow(eng, out)
                self.grown += 1
            elif status == L.TICK:
                sim.progress(float(eng[1][K.F_NOW]))  # type: ignore[misc]
            else:
                break
        self._write_back(eng, req, out)
        if status == L.BUDGET:
            loop = sim.loop
            raise EventBudgetError(
                f"the simulation reached its budget of {loop.max_events} events at t = "
                f"{loop.now:.6g} s and was stopped{loop.budget_hint}")

    # -- laying out --------------------------------------------------------------------------
    def _tables(self) -> tuple[tuple[np.ndarray, ...], list[Unit], int]:
        """The models' tables (``taskpreempt``), cached by the identity of what they are
        built from (``unit_tables`` and ``_suffix`` are cached themselves): a sweep or
        ``serve``'s isolated runs rebuild none."""
        sim = self.sim
        key = (*map(id, sim.heads), *map(id, sim.units), *map(id, sim.view.remaining),
               sim.engine.bw)
        hit = _LAID.get(key)
        if hit is not None and hit[0] == (sim.heads, sim.units, sim.tenants,
                                          sim.view.remaining):
            self.units = hit[1][1]
            return hit[1]
        made = self._build()
        if len(_LAID) >= 256:
            _LAID.clear()
        _LAID[key] = ((list(sim.heads), list(sim.units), sim.tenants, sim.view.remaining), made)
        return made

    def _build(self) -> tuple[tuple[np.ndarray, ...], list[Unit], int]:
        sim = self.sim
        tabs = [_table(h, t) for h, t in zip(sim.heads, sim.tails)]
        units: list[Unit] = [u for tab in tabs for u in tab.units]
        n_models = len(tabs)
        mt = np.zeros((max(n_models, 1), P.N_MT), np.int64)
        mf = np.zeros((max(n_models, 1), 1), np.float64)
        flat, offs, rem, wsum, rows = [], [], [], [], []
        ckr: list[tuple[int, int]] = []
        at = [0, 0, 0, 0]  # unit rows, flat, offs, rem
        for m, tab in enumerate(tabs):
            tu, n = sim.units[m], len(sim.units[m].comp)
            if len(sim.tenants[m].compute_s) != n:
                raise AssertionError("a tenant's unit table and its compute list differ")
            mt[m] = (n, at[1], len(tab.flat), at[2], at[3], len(ckr))
            mf[m, 0] = tu.latency_s
            flat.append(tab.flat + at[0])
            offs.append(tab.offs)
            rem.append(np.array(sim.view.remaining[m], np.float64))
            wsum.append(np.array(_wasted_before(sim.tenants[m]), np.float64))
            at = [at[0] + len(tab.units), at[1] + len(tab.flat), at[2] + n + 1, at[3] + n + 1]
            for i in range(n):
                live = tu.live[i]
                if live:
                    for kind in (Kind.STORE, Kind.LOAD):
                        rows.append(Unit(kind, m, -1, live, 0, tu.latency_s))
                    ckr.append((len(units) + len(rows) - 2, len(units) + len(rows) - 1))
                else:
                    ckr.append((-1, -1))
        units += rows
        ut = np.array([(int(u.kind), u.nbytes, u.hold, u.index) for u in units],
                      np.int64).reshape(-1, 4)
        us = np.array([u.seconds for u in units], np.float64)
        most = max((len(t.flat) for t in tabs), default=0)

        def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(1, dtype)

        table = (mt, mf, cat(flat, np.int64), cat(offs, np.int64), cat(rem, np.float64),
                 cat(wsum, np.float64), np.array(ckr, np.int64).reshape(-1, 2))
        self.units = units
        return (ut, us, *table), units, most

    def _engine_state(self) -> tuple[np.ndarray, np.ndarray]:
        """The engine's scalars at the start (``engine_kernel``'s ``si``, ``sf``)."""
        sim, eng = self.sim, self.sim.engine
        si, sf = np.zeros(K.N_INT, np.int64), np.zeros(K.N_FLOAT, np.float64)
        si[K.I_FREE] = eng.free
        si[[K.I_DMA_U, K.I_DMA_R, K.I_PE_U, K.I_PE_R, K.I_RID, K.I_SRID]] = -1
        si[K.I_PULL] = 1  # ``Engine.run`` kicks the DMA at 0 (the policy has nothing yet)
        si[K.I_BUDGET] = sim.loop.max_events if sim.loop.max_events is not None else 1 << 62
        si[K.I_HPRIO] = L.WAKE
        sf[[K.F_PE_END, K.F_DMA_END, K.F_UNTIL]] = math.inf
        sf[K.F_BW] = eng.bw
        return si, sf

    def _requests(self) -> tuple[np.ndarray, np.ndarray]:
        """One row per arrival (``taskqueue``'s ``rc``, ``rx``); keeps the deadlines."""
        arr = self.sim.arrivals
        if isinstance(arr, ArrivalRows):
            time_s, model, prio, self.deadline = arr.time_s, arr.model, arr.priority, \
                arr.deadline_s
        else:
            time_s = np.array([r[0] for r in arr], np.float64)
            model = np.array([r[1] for r in arr], np.int64)
            prio = np.array([r[2] for r in arr], np.int64)
            self.deadline = np.array([r[3] for r in arr], np.float64)
        n = len(time_s)
        rc = np.zeros((max(n, 1), Q.N_RC), np.int64)
        rx = np.zeros((max(n, 1), Q.N_RX), np.float64)
        rc[:n, Q.R_MODEL], rc[:n, Q.R_PRIO] = model, prio
        rc[:, Q.R_RESTORE] = rc[:, Q.R_HPOS] = -1
        rx[:n, Q.X_ARR] = time_s
        rx[:, Q.X_START] = rx[:, Q.X_FINISH] = math.nan
        return rc, rx

    def _lay_out(self) -> tuple[tuple[np.ndarray, ...], ...]:
        sim = self.sim
        (ut, us, *tab), _, most = self._tables()
        si, sf = self._engine_state()
        rc, rx = self._requests()
        n = len(self.deadline)
        time_s = rx[:n, Q.X_ARR]
        ti, tf = np.zeros(Q.N_TI, np.int64), np.zeros(Q.N_TF, np.float64)
        pol = sim.policy
        ti[[Q.T_N, Q.T_PREEMPTIVE, Q.T_MECH]] = n, pol.preemptive, _MECH[pol.mechanism.value]
        ti[Q.T_THEN] = -1
        ti[Q.T_KEEPSEG] = sim.segments is not None
        ti[Q.T_KEEPDEC] = sim.decisions is not None
        ti[[Q.T_ASEQ, Q.T_TSEQ, Q.T_SEQ]] = 0, 1, 2  # the first arrival, then the tick
        ti[Q.T_MAXFLAT] = most
        tf[Q.G_TICK] = math.inf
        if sim.progress is not None:
            step = (float(time_s[-1]) if n else 0.0) / 200 or 1e-3
            tf[Q.G_TICK], tf[Q.G_STEP] = step, step
        cap, room = 4 * most + ROOM, max(ROOM, 1)
        engine = (si, sf, ut, us, np.empty((2, cap), np.int64), np.empty((2, room), np.int64),
                  np.empty(cap, np.int64), np.empty((cap, 2), np.int64),
                  np.empty((cap, 2), np.float64))
        keep = n + ROOM if sim.segments is not None else 1
        dec = room if sim.decisions is not None else 1
        out = (np.empty(keep, np.int64), np.empty((keep, 2)), np.empty(room, np.int64),
               np.empty((room, 2)), np.empty((dec, 3), np.int64), np.empty(dec),
               np.zeros(7, np.int64))
        return engine, (ti, tf, rc, rx, np.zeros(max(n, 1), np.int64)), tuple(tab), out

    def _grow(self, eng: tuple, out: tuple) -> tuple[tuple, tuple]:
        """Every array ``run_tasks`` asked a size for (``need``), at least doubled."""
        need = out[-1]
        e, o = list(eng), list(out)
        spots = {0: [(e, 4)], 1: [(e, 5)], 2: [(e, 6)], 3: [(e, 7), (e, 8)],
                 4: [(o, 0), (o, 1)], 5: [(o, 2), (o, 3)], 6: [(o, 4), (o, 5)]}
        for k, size in enumerate(need.tolist()):
            for box, j in spots[k] if size else ():
                a = box[j]
                axis = 1 if a.ndim == 2 and k < 2 else 0
                old = a.shape[axis]
                shape = list(a.shape)
                shape[axis] = max(size, 2 * old)
                b = np.empty(shape, a.dtype)
                if axis:
                    b[:, :old] = a
                else:
                    b[:old] = a
                box[j] = b
        need[:] = 0
        return tuple(e), tuple(o)

    # -- results -----------------------------------------------------------------------------
    def _engine_back(self, si: list[int], sf: list[float]) -> None:
        """The engine's state and the loop's clock as the run left them."""
        sim, e = self.sim, self.sim.engine
        (e.free, e.need, waiting, store_wait) = si[:K.I_DMA_IDLE]
        (e.dispatched, e.computed, e.store_after, e.claimed, e.peak_claimed,
         orphan) = si[K.I_DISPATCHED:K.I_PULL]
        e.waiting, e.store_wait, e.orphan = bool(waiting), bool(store_wait), bool(orphan)
        e.dma_idle, e.pull, e.pe_busy = (bool(si[K.I_DMA_IDLE]), bool(si[K.I_PULL]),
                                         bool(si[K.I_PE_BUSY]))
        u, r = si[K.I_PE_U], si[K.I_PE_R]
        e.pe_job = (self.units[u], r) if u >= 0 else None
        u, r = si[K.I_DMA_U], si[K.I_DMA_R]
        e.dma_job = (self.units[u], r) if u >= 0 else None
        e.pe_start, e.pe_busy_s, e.dram_busy_s, e.last_end = (
            sf[K.F_PE_START], sf[K.F_PE_BUSY_S], sf[K.F_DRAM_BUSY_S], sf[K.F_LAST_END])
        e.pe_end, e.dma_end = sf[K.F_PE_END], sf[K.F_DMA_END]
        sim.loop.now, sim.loop.fired = sf[K.F_NOW], si[K.I_FIRED]

    def _write_back(self, eng: tuple, req: tuple, out: tuple) -> None:
        """Results where the Python path leaves them (see the module)."""
        sim = self.sim
        si, sf = eng[0].tolist(), eng[1].tolist()
        ti, _, rc, rx, _ = req
        if si[K.I_SRID] >= 0:
            rc[si[K.I_SRID], Q.R_DSP] = si[K.I_DSP]
        self._engine_back(si, sf)
        n = int(ti[Q.T_NEXT])
        sim.next_arrival = n
        rows = rc[:n]
        restore = eng[2][:, 1]
        sim.requests = RequestRows(rc, rx, self.deadline, n,  # type: ignore[assignment]
                                   [t.batch for t in sim.tenants],
                                   [len(t.comp) for t in sim.units], restore)
        sim.columns = RequestColumns(rx[:n, Q.X_START], rx[:n, Q.X_FINISH], rows[:, Q.R_STATE],
                                     rows[:, Q.R_PRE], rx[:n, Q.X_OVER], rx[:n, Q.X_WASTE])
        sg, sgf, ef, eff, dl, dlf, _ = out
        if sim.segments is not None:
            k = int(ti[Q.T_NSEG])
            sim.segments = [[a, b, c] for a, (b, c) in zip(sg[:k].tolist(), sgf[:k].tolist())]
        k = int(ti[Q.T_NEF])
        sim.effects = [(a, b, c) for a, (b, c) in zip(ef[:k].tolist(), eff[:k].tolist())]
        if sim.decisions is not None:
            mech = sim.policy.mechanism
            made = {L.RUN: lambda r, t: Run(r), L.IDLE: lambda r, t: IDLE,
                    L.PREEMPT: lambda r, t: Preempt(r, mech, t)}
            k = int(ti[Q.T_NDEC])
            sim.decisions.extend((now, made[kind](r, t)) for now, (kind, r, t) in
                                 zip(dlf[:k].tolist(), dl[:k].tolist()))

    def unfinished(self) -> int:
        """Requests neither done nor killed, which then count as killed (``Simulator.run``)."""
        cols = self.sim.columns
        assert cols is not None, "unfinished() reads a finished run's columns"
        left = (cols.state != Q.DONE) & (cols.state != Q.KILLED)
        cols.state[left] = Q.KILLED
        return int(left.sum())
