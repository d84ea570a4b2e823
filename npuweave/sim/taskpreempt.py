"""The compiled task loop's moves on the engine: start a request, take its jobs back, cut its
computation, checkpoint or kill it (``npuweave.sim.taskloop``).

These are ``Dispatcher._start`` (``npuweave.sim.dispatch``), the task-level part of
``npuweave.sim.preempt`` and ``Engine.take_back``/``cut`` (``npuweave.sim.engine_preempt``)
over the arrays of ``npuweave.sim.engine_kernel`` and ``npuweave.sim.taskqueue``, with the same
float operations in the same order; the Python versions stay the reference
(``tests/sim/test_taskloop.py`` holds whole runs equal).

The engine's *stream* (``engine_kernel``: the running request's jobs in dispatch order, read
ahead by the DMA) belongs to one request, ``si[I_SRID]``. Its jobs of units already dispatched
but not yet pulled are the jobs the Python simulator keeps in ``pending``; ``flush`` moves them
there (``pd``) before anything else is queued or withdrawn, so the order stays Python's.

Per model, ``mt`` holds the unit count and where the model's rows start in the concatenated
tables: ``flat`` (its jobs, unit rows, in dispatch order), ``offs`` (where unit ``i``'s jobs
start; ``units + 1`` entries), ``rem`` (isolated seconds of units ``i..end``, the policies'
``remaining_s``), ``wsum`` (PE seconds of units ``0..i-1``, Python's ``sum``, for kills) and
``ckr`` (per unit: the checkpoint store's and the restore load's unit rows, -1 when nothing is
live). ``mf[m, 0]``: the model's DRAM latency.
"""

from __future__ import annotations

from npuweave.schedule.jit import kernel
from npuweave.sim.engine_kernel import (
    F_BW,
    F_PE_END,
    F_PE_START,
    I_COMPUTED,
    I_DISPATCHED,
    I_DMA_R,
    I_DMA_U,
    I_DSP,
    I_ORPHAN,
    I_PD_H,
    I_PD_T,
    I_PE_BUSY,
    I_PE_R,
    I_PE_U,
    I_POS,
    I_PROG,
    I_RD_H,
    I_RD_T,
    I_RID,
    I_RUNITS,
    I_SEND,
    I_SRID,
    I_STORE_AFTER,
    I_STORE_WAIT,
    INF,
    STORE,
    _compute,
    _leave,
    _post_pull,
    _release,
    _store_now,
)
from npuweave.sim.taskqueue import (
    PREEMPTED,
    R_DSP,
    R_MODEL,
    R_PRIO,
    R_PROG,
    R_RESTART,
    R_RESTORE,
    R_STATE,
    RUNNING,
    T_KEEPSEG,
    T_NEF,
    T_NSEG,
    T_SMODEL,
    X_ARR,
    X_K0,
    X_K1,
    X_OVER,
    X_START,
    X_WASTE,
    push,
    remove,
)

MT_UNITS, MT_FLAT, MT_NFLAT, MT_OFFS, MT_REM, MT_CK = range(6)
N_MT = 6


@kernel
def remaining(mt, rem, rc, r):
    """``View.remaining_s`` of request ``r``."""
    return rem[mt[rc[r, R_MODEL], MT_REM] + rc[r, R_PROG]]


@kernel
def rekeyed(key, mt, rem, rc, rx, r):
    """Write request ``r``'s queue key (the policy's ``key``) into ``rx``."""
    k0, k1 = key(rx[r, X_ARR], rc[r, R_PRIO], remaining(mt, rem, rc, r))
    rx[r, X_K0] = k0
    rx[r, X_K1] = k1


@kernel
def enqueue(ti, mt, rem, rc, rx, hq, key, r, state):
    """Request ``r`` joins the queue in ``state`` (arrived, or preempted)."""
    rc[r, R_STATE] = state
    rekeyed(key, mt, rem, rc, rx, r)
    push(hq, ti, rc, rx, r)


@kernel
def computing(si, r):
    """Whether the PE is computing a job of request ``r``."""
    return si[I_PE_BUSY] != 0 and si[I_PE_R] == r


@kernel
def dispatched(si, rc, r):
    """Units of request ``r`` handed to the engine in its current pass."""
    return si[I_DSP] if r == si[I_SRID] else rc[r, R_DSP]


@kernel
def ran(ti, rx, sg, sgf, r, start, end):
    """Request ``r`` had the PE from ``start`` to ``end`` (``Simulator.ran``)."""
    if rx[r, X_START] != rx[r, X_START]:
        rx[r, X_START] = start
    if ti[T_KEEPSEG]:
        n = ti[T_NSEG]
        if n and sg[n - 1] == r:
            sgf[n - 1, 1] = end
        else:
            sg[n] = r
            sgf[n, 0] = start
            sgf[n, 1] = end
            ti[T_NSEG] = n + 1


@kernel
def _effect(ti, ef, eff, r, decided, effective):
    n = ti[T_NEF]
    ef[n] = r
    eff[n, 0] = decided
    eff[n, 1] = effective
    ti[T_NEF] = n + 1


@kernel
def _queue_job(si, pd, u, r):
    t = si[I_PD_T]
    pd[0, t] = u
    pd[1, t] = r
    si[I_PD_T] = t + 1


@kernel
def _transfer_s(sf, ut, mf, m, row):
    """``TenantUnits.transfer_s`` of the checkpoint unit ``row`` (it has bytes)."""
    return mf[m, 0] + ut[row, 1] / sf[F_BW]


@kernel
def flush(si, ti, mt, flat, offs, rc, pd):
    """The stream's jobs of units already dispatched go to ``pd``; the stream is let go."""
    o = si[I_SRID]
    if o < 0:
        return
    m = ti[T_SMODEL]
    base = mt[m, MT_FLAT]
    d = si[I_DSP]
    for p in range(si[I_POS], offs[mt[m, MT_OFFS] + d]):
        _queue_job(si, pd, flat[base + p], o)
    rc[o, R_DSP] = d
    si[I_SRID] = -1
    si[I_POS] = 0
    si[I_SEND] = 0


@kernel
def start(si, sf, ut, pd, ti, rc, rx, hq, mt, mf, flat, offs, r):
    """Request ``r`` (queued) gets the NPU (``Dispatcher._start``); its restore load first."""
    remove(hq, ti, rc, rx, r)
    rc[r, R_STATE] = RUNNING
    flush(si, ti, mt, flat, offs, rc, pd)
    m = rc[r, R_MODEL]
    d = rc[r, R_DSP]
    ti[T_SMODEL] = m
    si[I_SRID] = r
    si[I_DSP] = d
    si[I_POS] = offs[mt[m, MT_OFFS] + d]
    si[I_SEND] = mt[m, MT_NFLAT]
    si[I_RID] = r
    si[I_RUNITS] = mt[m, MT_UNITS]
    si[I_PROG] = rc[r, R_PROG]
    row = rc[r, R_RESTORE]
    if row >= 0:
        _queue_job(si, pd, row, r)
        rx[r, X_OVER] += _transfer_s(sf, ut, mf, m, row)
        rc[r, R_RESTORE] = -1


@kernel
def take_back(si, sf, ut, us, rq, pd, fr, r, first, now):
    """``Engine.take_back(r, first)`` (the stream flushed first)."""
    w = si[I_PD_H]
    for j in range(si[I_PD_H], si[I_PD_T]):
        u, q = pd[0, j], pd[1, j]
        if q == r and ut[u, 3] >= first:
            continue
        pd[0, w] = u
        pd[1, w] = q
        w += 1
    si[I_PD_T] = w
    w, n = si[I_RD_H], 0
    for j in range(si[I_RD_H], si[I_RD_T]):
        u, q = rq[0, j], rq[1, j]
        if q == r and ut[u, 3] >= first:
            n += 1
            if ut[u, 2]:  # (releasing reads none of the counts below)
                _release(si, sf, ut, fr, ut[u, 2])
            continue
        rq[0, w] = u
        rq[1, w] = q
        w += 1
    si[I_RD_T] = w
    if n:
        si[I_DISPATCHED] -= n
        if si[I_STORE_WAIT]:
            si[I_STORE_AFTER] -= n
    du = si[I_DMA_U]
    if du >= 0 and si[I_DMA_R] == r and ut[du, 3] >= first:
        if ut[du, 0] == STORE and si[I_STORE_WAIT]:
            si[I_STORE_WAIT] = 0
            si[I_DMA_U] = -1
            si[I_DMA_R] = -1
            _post_pull(si)
        elif ut[du, 2]:
            si[I_ORPHAN] = 1
    if si[I_STORE_WAIT] and si[I_COMPUTED] >= si[I_STORE_AFTER]:
        _store_now(si, sf, ut, us, fr, now)


@kernel
def checkpoint(eng, req, tab, out, key, r, now):
    """``preempt``'s checkpoint of the running request ``r``: its jobs not started come back
    (``_take_back``), a store of its live state is queued, it waits to resume."""
    si, sf, ut, us, rq, pd, fr, ri, rf = eng
    ti, tf, rc, rx, hq = req
    mt, mf, flat, offs, rem, wsum, ckr = tab
    sg, sgf, ef, eff, dl, dlf, need = out
    pu = si[I_PE_U]
    on_pe = computing(si, r) and ut[pu, 3] >= 0
    first = ut[pu, 3] + 1 if on_pe else rc[r, R_PROG]
    flush(si, ti, mt, flat, offs, rc, pd)
    take_back(si, sf, ut, us, rq, pd, fr, r, first, now)
    rc[r, R_DSP] = first
    _effect(ti, ef, eff, r, now, sf[F_PE_START] + us[pu] if on_pe else now)
    m = rc[r, R_MODEL]
    row = ckr[mt[m, MT_CK] + first - 1, 0] if first else -1
    enqueue(ti, mt, rem, rc, rx, hq, key, r, PREEMPTED)
    if row >= 0:
        _queue_job(si, pd, row, r)
        rx[r, X_OVER] += _transfer_s(sf, ut, mf, m, row)
        rc[r, R_RESTORE] = ckr[mt[m, MT_CK] + first - 1, 1]


@kernel
def _cut(si, sf, ut, us, rq, fr, r, now):
    """``Engine.cut(r)``: the seconds its computation running now had run (0.0: none)."""
    if not computing(si, r):
        return 0.0
    begun = sf[F_PE_START]
    sf[F_PE_END] = INF
    _leave(si, sf, ut, us, fr, now)
    if si[I_RD_H] < si[I_RD_T]:
        _compute(si, sf, us, rq, now)
    return now - begun


@kernel
def kill(eng, req, tab, out, key, r, now):
    """``preempt``'s kill of the running request ``r`` (``_cut``, then ``_kill`` with a
    restart): its computation running now is cut off, its pass is wasted, it waits to start
    over. (``_cut`` also moves earlier checkpoints' effects; a run has one mechanism, so there
    are none.)"""
    si, sf, ut, us, rq, pd, fr, ri, rf = eng
    ti, tf, rc, rx, hq = req
    mt, mf, flat, offs, rem, wsum, ckr = tab
    sg, sgf, ef, eff, dl, dlf, need = out
    if computing(si, r) and sf[F_PE_START] < now:
        ran(ti, rx, sg, sgf, r, sf[F_PE_START], now)
    flush(si, ti, mt, flat, offs, rc, pd)
    p = rc[r, R_PROG]
    take_back(si, sf, ut, us, rq, pd, fr, r, p, now)
    cut_s = _cut(si, sf, ut, us, rq, fr, r, now)
    _effect(ti, ef, eff, r, now, now)
    rx[r, X_WASTE] += wsum[mt[rc[r, R_MODEL], MT_REM] + p] + cut_s
    rc[r, R_PROG] = 0
    rc[r, R_DSP] = 0
    rc[r, R_RESTORE] = -1
    rc[r, R_RESTART] += 1
    enqueue(ti, mt, rem, rc, rx, hq, key, r, PREEMPTED)
