"""A whole open-loop serving run of a rule-stated task-level policy in one compiled call.

``Simulator.run`` with ``fcfs``, ``hpf``, ``hpf-p``, ``sjf``, ``sjf-p`` or any other ``Ruled``
policy (``npuweave.schedule.task``; any mechanism) runs here when numba is installed: the
arrivals, the queue of waiting requests, the policy's decisions (its ``key`` and ``wins``,
passed in as compiled functions by ``npuweave.sim.taskrules``: one compiled loop for every
rule), preemption and the engine's hardware rules
(``npuweave.sim.engine_kernel.run_stretch``) all live in arrays, so nothing returns to Python
between events. ``run_tasks`` stops only to let Python grow an array (``GROW``), report
progress (``TICK``), or at the end (``FINISHED``) or the event budget (``BUDGET``); the glue
is ``npuweave.sim.taskrun``.

This is ``Simulator`` (``npuweave.sim.serve``: ``_arrival_event``, ``_tick``, ``_on_end``) and
``Dispatcher`` (``npuweave.sim.dispatch``: ``_next_task``, ``_decide``, ``_apply``) for these
policies, with the same events in the same order (arrivals and progress ticks are the loop's
outside events: priority 3, after the engine's at one instant, then in the order they were
scheduled) and the same float operations. The Python simulator stays the reference:
``tests/sim/test_taskloop.py`` holds whole runs equal, float for float.

Arguments are four tuples of arrays, then the rule: ``eng`` (the engine's, ``engine_kernel``),
``req`` (the loop's scalars and the requests, ``npuweave.sim.taskqueue``), ``tab`` (the models'
tables, ``npuweave.sim.taskpreempt``), ``out`` (segments, preemption effects, decisions, and
``need``: the sizes asked for with ``GROW``), ``key`` and ``wins``.
"""

from __future__ import annotations

from npuweave.schedule.jit import borrow, kernel
from npuweave.sim.engine_kernel import (
    ASK,
    F_DMA_END,
    F_HTIME,
    F_NOW,
    F_PE_END,
    I_BUDGET,
    I_DMA_IDLE,
    I_FIRED,
    I_FR_H,
    I_FR_T,
    I_HPRIO,
    I_NRUNS,
    I_PD_H,
    I_PD_T,
    I_PE_BUSY,
    I_PE_U,
    I_POS,
    I_PULL,
    I_RD_H,
    I_RD_T,
    I_RID,
    I_SEND,
    INF,
    _pull,
    run_stretch,
)
from npuweave.sim.taskpreempt import (
    MT_FLAT,
    MT_NFLAT,
    MT_OFFS,
    MT_UNITS,
    checkpoint,
    computing,
    dispatched,
    enqueue,
    kill,
    ran,
    rekeyed,
    remaining,
    start,
)
from npuweave.sim.taskqueue import (
    CHECKPOINT,
    DONE,
    DRAIN,
    G_STEP,
    G_TICK,
    QUEUED,
    R_HPOS,
    R_MODEL,
    R_PRE,
    R_PRIO,
    R_PROG,
    R_STATE,
    T_ASEQ,
    T_DRAIN,
    T_HN,
    T_KEEPDEC,
    T_KEEPSEG,
    T_MAXFLAT,
    T_MECH,
    T_N,
    T_NDEC,
    T_NEF,
    T_NEXT,
    T_NSEG,
    T_PREEMPTIVE,
    T_SEQ,
    T_SMODEL,
    T_THEN,
    T_TSEQ,
    X_ARR,
    X_FINISH,
    X_K0,
    X_K1,
    rekey,
)

FINISHED, GROW, TICK, BUDGET = range(4)
IDLE, RUN, PREEMPT = range(3)  # decisions (the log's kinds)
WAKE = 3  # the outside events' priority (``npuweave.sim.dispatch.WAKE``)


@kernel
def _last_started(si, ut, mt, rc, r):
    """``Dispatcher._last_started``: request ``r``'s last computation started (or ended)."""
    units = mt[rc[r, R_MODEL], MT_UNITS]
    if rc[r, R_PROG] == units:
        return True
    return computing(si, r) and ut[si[I_PE_U], 3] == units - 1


@kernel
def _decide(si, ut, ti, rc, rx, hq, mt, rem, key, wins):
    """``Dispatcher._decide`` with ``Ruled.decide`` (its ``key`` and ``wins``): (kind, request,
    then)."""
    run = si[I_RID]
    if run >= 0 and dispatched(si, rc, run) == mt[rc[run, R_MODEL], MT_UNITS] and \
            _last_started(si, ut, mt, rc, run):
        si[I_RID] = -1  # its last computation runs: the NPU is free
        ti[T_DRAIN] = 0
        run = -1
    if ti[T_HN] == 0:
        return IDLE, -1, -1
    best = hq[0]
    if run < 0 or ti[T_DRAIN]:
        return RUN, best, -1
    if not ti[T_PREEMPTIVE]:
        return IDLE, -1, -1
    r0, r1 = key(rx[run, X_ARR], rc[run, R_PRIO], remaining(mt, rem, rc, run))
    if wins(rx[best, X_K0], rx[best, X_K1], best, r0, r1, run):
        return PREEMPT, run, best
    return IDLE, -1, -1


@kernel
def _kick(si):
    if si[I_DMA_IDLE]:
        si[I_DMA_IDLE] = 0
        si[I_PULL] = 1


@kernel
def _consult(eng, req, tab, out, key, wins, now):
    """``Dispatcher._consult``: decide, then carry the decision out (``_apply``)."""
    si, sf, ut, us, rq, pd, fr, ri, rf = eng
    ti, tf, rc, rx, hq = req
    mt, mf, flat, offs, rem, wsum, ckr = tab
    sg, sgf, ef, eff, dl, dlf, need = out
    kind, r, then = _decide(si, ut, ti, rc, rx, hq, mt, rem, key, wins)
    if ti[T_KEEPDEC]:
        n = ti[T_NDEC]
        dl[n, 0], dl[n, 1], dl[n, 2] = kind, r, then
        dlf[n] = now
        ti[T_NDEC] = n + 1
    if kind == RUN:
        if ti[T_DRAIN]:  # the drained request keeps the NPU; this one follows it
            ti[T_THEN] = r
        elif si[I_RID] < 0 and ti[T_THEN] < 0:
            start(si, sf, ut, pd, ti, rc, rx, hq, mt, mf, flat, offs, r)
            _kick(si)
    elif kind == PREEMPT:
        rc[r, R_PRE] += 1
        ti[T_THEN] = then
        if ti[T_MECH] == DRAIN:
            ti[T_DRAIN] = 1
        else:
            si[I_RID] = -1
            if ti[T_MECH] == CHECKPOINT:
                checkpoint(eng, req, tab, out, key, r, now)
            else:
                kill(eng, req, tab, out, key, r, now)
        _kick(si)


@kernel
def _next_task(eng, req, tab, out, key, wins, now):
    """``Dispatcher._next_task``: whether the DMA has a job (in ``pd`` or the stream)."""
    si, sf, ut, us, rq, pd, fr, ri, rf = eng
    ti, tf, rc, rx, hq = req
    mt, mf, flat, offs, rem, wsum, ckr = tab
    run = si[I_RID]
    if run >= 0 and dispatched(si, rc, run) == mt[rc[run, R_MODEL], MT_UNITS]:
        if not _last_started(si, ut, mt, rc, run):
            return False  # it holds the NPU (and stays preemptible)
        si[I_RID] = -1
        ti[T_DRAIN] = 0
        run = -1
    if run >= 0:
        return True
    if ti[T_THEN] >= 0:
        r = ti[T_THEN]
        ti[T_THEN] = -1
        start(si, sf, ut, pd, ti, rc, rx, hq, mt, mf, flat, offs, r)
    elif ti[T_HN]:
        _consult(eng, req, tab, out, key, wins, now)
    return si[I_PD_H] < si[I_PD_T] or si[I_RID] >= 0


@kernel
def _ask(eng, req, tab, out, key, wins):
    """The DMA asked for a job its queue and stream do not have: the rest of its pull."""
    si, sf, ut, us, rq, pd, fr, ri, rf = eng
    ti = req[0]
    mt, mf, flat, offs, rem, wsum, ckr = tab
    while True:
        if not _next_task(eng, req, tab, out, key, wins, sf[F_NOW]):
            si[I_DMA_IDLE] = 1
            return
        m = ti[T_SMODEL]
        st = flat[mt[m, MT_FLAT]:mt[m, MT_FLAT] + mt[m, MT_NFLAT]]
        so = offs[mt[m, MT_OFFS]:mt[m, MT_OFFS] + mt[m, MT_UNITS] + 1]
        if _pull(si, sf, ut, us, rq, pd, fr, st, so) != ASK:
            return


@kernel
def _replay(si, ut, ti, rc, rx, hq, mt, rem, ri, rf, sg, sgf, key):
    """``Simulator._on_end``'s bookkeeping for the stretch's runs (``engine_kernel``)."""
    for k in range(si[I_NRUNS]):
        r, count = ri[k, 0], ri[k, 1]
        ran(ti, rx, sg, sgf, r, rf[k, 0], rf[k, 1])
        if count:
            p = rc[r, R_PROG] + count
            rc[r, R_PROG] = p
            if p == mt[rc[r, R_MODEL], MT_UNITS]:
                rc[r, R_STATE] = DONE
                rx[r, X_FINISH] = rf[k, 1]
            elif rc[r, R_HPOS] >= 0:  # a checkpointed request's last computation ended
                rekeyed(key, mt, rem, rc, rx, r)
                rekey(hq, ti, rc, rx, r)
    si[I_NRUNS] = 0


@kernel
def _fits(q, si, h, t, more, need, k):
    """Queue ``q`` (columns; head ``si[h]``, tail ``si[t]``) can take ``more`` at its tail,
    moved to its start if need be; else ``need[k]`` is the size asked for."""
    cap = q.shape[1]
    if si[t] + more <= cap:
        return True
    live = si[t] - si[h]
    if live + more > cap:
        need[k] = live + more
        return False
    for j in range(live):
        for row in range(q.shape[0]):
            q[row, j] = q[row, si[h] + j]
    si[h] = 0
    si[t] = live
    return True


@kernel
def _room(eng, req, out):
    """Whether every array has room for what the next step can add (``need``: else)."""
    si, sf, ut, us, rq, pd, fr, ri, rf = eng
    ti = req[0]
    sg, sgf, ef, eff, dl, dlf, need = out
    ready = si[I_RD_T] - si[I_RD_H]
    jobs = si[I_PD_T] - si[I_PD_H] + si[I_SEND] - si[I_POS] + 2 * ti[T_MAXFLAT] + 16
    ok = _fits(rq, si, I_RD_H, I_RD_T, jobs, need, 0)
    ok = _fits(pd, si, I_PD_H, I_PD_T, 64, need, 1) and ok
    ok = _fits(fr.reshape(1, fr.shape[0]), si, I_FR_H, I_FR_T, ready + jobs, need, 2) and ok
    if ready + jobs > ri.shape[0]:
        need[3], ok = ready + jobs, False
    if ti[T_KEEPSEG] and ti[T_NSEG] + ready + jobs > sg.shape[0]:
        need[4], ok = ti[T_NSEG] + ready + jobs, False
    if ti[T_NEF] + 8 > ef.shape[0]:
        need[5], ok = ti[T_NEF] + 8, False
    if ti[T_KEEPDEC] and ti[T_NDEC] + 8 > dl.shape[0]:
        need[6], ok = ti[T_NDEC] + 8, False
    return ok


@kernel
def _more(si, ti):
    """``Simulator._tick``'s test: work is left."""
    return (ti[T_NEXT] < ti[T_N] or si[I_RID] >= 0 or ti[T_HN] > 0 or not si[I_DMA_IDLE]
            or si[I_PE_BUSY])


@kernel
def run_tasks(eng, req, tab, out, key, wins):
    """Run until the end, the budget, a progress tick, or an array too small (see the
    module); returns ``FINISHED``, ``BUDGET``, ``TICK`` or ``GROW``. Every array is the
    caller's and borrowed (``jit.borrow``: no reference counts at each call below)."""
    eng, req, tab, out = borrow(eng), borrow(req), borrow(tab), borrow(out)
    si, sf, ut, us, rq, pd, fr, ri, rf = eng
    ti, tf, rc, rx, hq = req
    mt, mf, flat, offs, rem, wsum, ckr = tab
    sg, sgf, ef, eff, dl, dlf, need = out
    while True:
        if not _room(eng, req, out):
            return GROW
        # the engine's next event (``Engine.next_event``; its kind does not matter here:
        # every kind goes before an outside event at the same instant)
        t = min(sf[F_PE_END], sf[F_DMA_END])
        if si[I_PULL] and sf[F_NOW] < t:
            t = sf[F_NOW]
        nxt = ti[T_NEXT]
        ta = rx[nxt, X_ARR] if nxt < ti[T_N] else INF
        tt = tf[G_TICK]
        tick = tt < ta or tt == ta and ti[T_TSEQ] < ti[T_ASEQ]
        ht = tt if tick else ta
        if ht >= t:  # the engine's event first (outside events come after it at one instant)
            if t == INF:
                return FINISHED
            if si[I_FIRED] >= si[I_BUDGET]:
                return BUDGET
            sf[F_HTIME] = ht
            si[I_HPRIO] = WAKE
            m = ti[T_SMODEL]
            st = flat[mt[m, MT_FLAT]:mt[m, MT_FLAT] + mt[m, MT_NFLAT]]
            so = offs[mt[m, MT_OFFS]:mt[m, MT_OFFS] + mt[m, MT_UNITS] + 1]
            status = run_stretch(si, sf, ut, us, rq, pd, fr, st, so, ri, rf)
            _replay(si, ut, ti, rc, rx, hq, mt, rem, ri, rf, sg, sgf, key)
            if status == ASK:
                _ask(eng, req, tab, out, key, wins)
            continue
        if si[I_FIRED] >= si[I_BUDGET]:
            return BUDGET
        si[I_FIRED] += 1
        sf[F_NOW] = ht
        if tick:
            if _more(si, ti):
                tf[G_TICK] = ht + tf[G_STEP]
                ti[T_TSEQ] = ti[T_SEQ]
                ti[T_SEQ] += 1
                return TICK
            tf[G_TICK] = INF
            continue
        ti[T_NEXT] = nxt + 1
        enqueue(ti, mt, rem, rc, rx, hq, key, nxt, QUEUED)
        _consult(eng, req, tab, out, key, wins, ht)
        ti[T_ASEQ] = ti[T_SEQ]
        ti[T_SEQ] += 1
