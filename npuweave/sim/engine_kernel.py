"""The engine's hardware rules as one function over arrays, run per *stretch* (compiled by numba).

``npuweave.sim.engine`` is the reference: an object whose methods fire one event each. This
module states the same rules (its docstring) over flat state: ``run_stretch`` fires the
engine's events from ``now`` until the next outside event (the loop heap's top, given as its
time and priority), the loop's ``until``, the event budget, or the moment the source must ask
the policy (the running request has no unit left to send). Between outside events a
task-level run's jobs are known ahead: the engine's ``pending`` queue, then the running
request's remaining units in dispatch order (``stream``, the tenant's jobs flattened, with
``offs[i]`` the position of unit ``i``'s first job). Every float operation is the reference's,
in the same order, so the two agree float for float (``tests/sim/test_engine_stretch.py``
holds them equal, with the reference engine kept in ``tests/sim/engine_ref.py``).

The serving simulator's per-computation hook is split: the part that steers the engine (wake
the DMA when the running request's last computation starts, ``Simulator._on_end``) runs here;
the bookkeeping (start, segments, progress, finish) comes back in bulk as *runs*: maximal
sequences of computations of one request, ``ri[k] = (request, count)``, ``rf[k] = (first start,
last end)``. The glue (packing the engine's state, replaying the runs) is
``npuweave.sim.stretch``.

State layout: ``si`` (int64) and ``sf`` (float64) hold the scalars at the indices below; jobs
are unit ids (rows of ``ut``: kind, bytes, hold, index; ``us``: seconds) with request ids;
queues are arrays with head/tail indices in ``si`` (they only grow at the tail in a stretch).
``I_SRID`` is the request whose units ``stream`` holds, ``I_RID`` the request running now
(-1: none; the policy may have let it go while its last units are still queued).
Return value: ``DONE`` (stopped before an event that is not the engine's to fire) or ``ASK``
(the DMA is free and asks for a job the stream does not have: the caller pulls in Python).
"""

from __future__ import annotations

import numpy as np

from npuweave.schedule.jit import kernel

INF = np.inf
LOAD, COMPUTE, STORE = 0, 1, 2  # ``Kind``
FREE, PART, PULL = 0, 1, 2  # event priorities at one instant (``engine``)
DONE, ASK = 0, 1

# int state
(I_FREE, I_NEED, I_WAITING, I_STORE_WAIT, I_DMA_IDLE, I_PE_BUSY, I_DISPATCHED, I_COMPUTED,
 I_STORE_AFTER, I_CLAIMED, I_PEAK, I_ORPHAN, I_PULL, I_DMA_U, I_DMA_R, I_PE_U, I_PE_R,
 I_FIRED, I_BUDGET, I_HPRIO, I_RD_H, I_RD_T, I_FR_H, I_FR_T, I_PD_H, I_PD_T, I_POS, I_SEND,
 I_DSP, I_PROG, I_RID, I_RUNITS, I_NRUNS, I_SRID) = range(34)
N_INT = 34
# float state
F_NOW, F_PE_START, F_PE_BUSY_S, F_DRAM_BUSY_S, F_LAST_END, F_PE_END, F_DMA_END, F_HTIME, \
    F_UNTIL, F_BW = range(10)
N_FLOAT = 10


@kernel(inline=True)
def _post_pull(si):
    si[I_PULL] = 1


@kernel(inline=True)
def _next_part(si, sf, ut, fr):
    """Move the next part of the current fetch (``Engine._next_part`` and ``_transfer``; a
    part of 0 bytes ends at once as ``Engine._part_end``, written as a loop: numba's cache
    does not take mutually recursive functions)."""
    while True:
        block = fr[si[I_FR_H]]
        si[I_FR_H] += 1
        need = si[I_NEED]
        part = need if need <= block else block
        si[I_FREE] += block - part
        si[I_NEED] = need - part
        if part:
            claimed = si[I_CLAIMED] + part
            si[I_CLAIMED] = claimed
            if claimed > si[I_PEAK]:
                si[I_PEAK] = claimed
            start = sf[F_NOW]
            end = start + part / sf[F_BW]
            sf[F_DRAM_BUSY_S] += end - start
            sf[F_DMA_END] = end
            return
        if si[I_NEED] == 0:
            _end_of_job(si, sf, ut, fr)
            _post_pull(si)
            return
        if si[I_FR_H] == si[I_FR_T]:
            si[I_WAITING] = 1
            return


@kernel(inline=True)
def _free_bytes(si, fr, hold):
    si[I_CLAIMED] -= hold
    fr[si[I_FR_T]] = hold
    si[I_FR_T] += 1


@kernel(inline=True)
def _release(si, sf, ut, fr, hold):
    """``hold`` bytes of the weight buffer become free (a stalled fetch goes on)."""
    _free_bytes(si, fr, hold)
    if si[I_WAITING]:
        si[I_WAITING] = 0
        _next_part(si, sf, ut, fr)


@kernel(inline=True)
def _end_of_job(si, sf, ut, fr):
    """The current transfer's bytes are all in: drop an orphan fetch's bytes, free the DMA."""
    if si[I_ORPHAN]:  # ``_release`` without its stalled-fetch check: the fetch stalled, if
        si[I_ORPHAN] = 0  # any, is this one, and it has ended (no call cycle for numba)
        _free_bytes(si, fr, ut[si[I_DMA_U], 2])
    si[I_DMA_U] = -1
    si[I_DMA_R] = -1


@kernel(inline=True)
def _part_end(si, sf, ut, fr):
    """A transfer of nothing ended at once (inside another step: the pull is posted)."""
    if si[I_NEED] == 0:
        _end_of_job(si, sf, ut, fr)
        _post_pull(si)
    elif si[I_FR_H] < si[I_FR_T]:
        _next_part(si, sf, ut, fr)
    else:
        si[I_WAITING] = 1


@kernel(inline=True)
def _move(si, sf, ut, fr, now, nbytes, latency):
    """A transfer that claims no buffer space (activations, checkpoints)."""
    si[I_NEED] = 0
    if nbytes == 0 and latency == 0.0:
        _part_end(si, sf, ut, fr)
        return
    end = now + latency + nbytes / sf[F_BW]
    sf[F_DRAM_BUSY_S] += end - now
    sf[F_DMA_END] = end


@kernel(inline=True)
def _load(si, sf, ut, us, fr, now, u):
    while si[I_FR_H] < si[I_FR_T]:  # everything freed so far is free space for this fetch
        si[I_FREE] += fr[si[I_FR_H]]
        si[I_FR_H] += 1
    hold = ut[u, 2]
    if hold == 0:
        _move(si, sf, ut, fr, now, ut[u, 1], us[u])
        return
    free = si[I_FREE]
    part = hold if hold <= free else free
    si[I_FREE] = free - part
    si[I_NEED] = hold - part
    if part == 0:
        _part_end(si, sf, ut, fr)
        return
    start = now + us[u] if us[u] else now
    claimed = si[I_CLAIMED] + part
    si[I_CLAIMED] = claimed
    if claimed > si[I_PEAK]:
        si[I_PEAK] = claimed
    end = start + part / sf[F_BW]
    sf[F_DRAM_BUSY_S] += end - start
    sf[F_DMA_END] = end


@kernel(inline=True)
def _compute(si, sf, us, rq, now):
    h = si[I_RD_H]
    u = rq[0, h]
    si[I_PE_U] = u
    si[I_PE_R] = rq[1, h]
    si[I_RD_H] = h + 1
    si[I_PE_BUSY] = 1
    sf[F_PE_START] = now
    sf[F_PE_END] = now + us[u]


@kernel
def _pull(si, sf, ut, us, rq, pd, fr, st, offs):
    """The DMA is free: take the next job (``pending`` first, then the stream)."""
    now = sf[F_NOW]
    while True:
        if si[I_PD_H] < si[I_PD_T]:
            u, r = pd[0, si[I_PD_H]], pd[1, si[I_PD_H]]
            si[I_PD_H] += 1
        elif si[I_POS] < si[I_SEND]:
            pos = si[I_POS]
            u, r = st[pos], si[I_SRID]
            if pos == offs[si[I_DSP]]:  # the first job of the next unit: it is dispatched
                si[I_DSP] += 1
            si[I_POS] = pos + 1
        else:
            return ASK
        if ut[u, 0] != COMPUTE:
            break
        si[I_DISPATCHED] += 1
        t = si[I_RD_T]
        rq[0, t] = u
        rq[1, t] = r
        si[I_RD_T] = t + 1
        if not si[I_PE_BUSY]:
            _compute(si, sf, us, rq, now)
        if now + us[u] == now:  # it may end (and free space) this instant: let that fire first
            _post_pull(si)
            return DONE
    si[I_DMA_U] = u
    si[I_DMA_R] = r
    if ut[u, 0] == STORE:
        if si[I_COMPUTED] < si[I_DISPATCHED]:
            si[I_STORE_AFTER] = si[I_DISPATCHED]
            si[I_STORE_WAIT] = 1
            return DONE
        _move(si, sf, ut, fr, now, ut[u, 1], us[u])
        return DONE
    _load(si, sf, ut, us, fr, now, u)
    return DONE


@kernel(inline=True)
def _store_now(si, sf, ut, us, fr, now):
    """The waiting store's computations have all ended: it moves now (``Engine._store_now``)."""
    si[I_STORE_WAIT] = 0
    s = si[I_DMA_U]
    _move(si, sf, ut, fr, now, ut[s, 1], us[s])


@kernel(inline=True)
def _leave(si, sf, ut, us, fr, now):
    """The computation on the PE leaves it at ``now``, ended or cut off (``Engine._leave``)."""
    u = si[I_PE_U]
    si[I_PE_BUSY] = 0
    si[I_COMPUTED] += 1
    sf[F_PE_BUSY_S] += now - sf[F_PE_START]
    sf[F_LAST_END] = now
    if ut[u, 2]:
        _release(si, sf, ut, fr, ut[u, 2])
    if si[I_STORE_WAIT] and si[I_COMPUTED] >= si[I_STORE_AFTER]:
        _store_now(si, sf, ut, us, fr, now)


@kernel(inline=True)
def _computed(si, sf, ut, us, rq, fr, ri, rf):
    """The computation on the PE ended (``Engine._computed`` with ``Simulator._on_end``)."""
    now = sf[F_NOW]
    u, rid, start = si[I_PE_U], si[I_PE_R], sf[F_PE_START]
    _leave(si, sf, ut, us, fr, now)
    k = si[I_NRUNS]  # the hook: ``Simulator.ran`` (as runs), the wake-up, the progress
    if k and ri[k - 1, 0] == rid:
        rf[k - 1, 1] = now
    else:
        ri[k, 0] = rid
        ri[k, 1] = 0
        rf[k, 0] = start
        rf[k, 1] = now
        k += 1
        si[I_NRUNS] = k
    run = si[I_RID]
    if run >= 0 and si[I_DSP] == si[I_RUNITS] and si[I_DMA_IDLE]:
        h = si[I_RD_H]
        if si[I_PROG] == si[I_RUNITS] or (h < si[I_RD_T] and rq[1, h] == run
                                        and ut[rq[0, h], 3] == si[I_RUNITS] - 1):
            si[I_DMA_IDLE] = 0  # ``Engine.kick``
            _post_pull(si)
    if ut[u, 3] >= 0:
        ri[k - 1, 1] += 1
        if rid == run:
            si[I_PROG] += 1
    if si[I_RD_H] < si[I_RD_T]:
        _compute(si, sf, us, rq, now)


@kernel(inline=True)
def _part_event(si, sf, ut, us, rq, pd, fr, st, offs):
    """A transfer part ended (``Engine._part_event``)."""
    now = sf[F_NOW]
    if si[I_NEED] == 0:
        _end_of_job(si, sf, ut, fr)
        if sf[F_PE_END] == now or sf[F_HTIME] == now and si[I_HPRIO] <= PULL:
            _post_pull(si)
        else:
            return _pull(si, sf, ut, us, rq, pd, fr, st, offs)
    elif si[I_FR_H] < si[I_FR_T]:
        _next_part(si, sf, ut, fr)
    else:
        si[I_WAITING] = 1
    return DONE


@kernel
def run_stretch(si, sf, ut, us, rq, pd, fr, st, offs, ri, rf):
    """Fire the engine's events until one that is not its own to fire (see the module)."""
    while True:
        pe_end, dma_end = sf[F_PE_END], sf[F_DMA_END]
        if pe_end <= dma_end:
            t, kind = pe_end, FREE
        else:
            t, kind = dma_end, PART
        if si[I_PULL] and sf[F_NOW] < t:
            t, kind = sf[F_NOW], PULL
        if t == INF or sf[F_HTIME] < t or sf[F_HTIME] == t and si[I_HPRIO] < kind:
            return DONE
        if t > sf[F_UNTIL] or si[I_FIRED] >= si[I_BUDGET]:
            return DONE
        si[I_FIRED] += 1
        if kind == FREE:
            sf[F_NOW] = t
            sf[F_PE_END] = INF
            _computed(si, sf, ut, us, rq, fr, ri, rf)
        elif kind == PART:
            sf[F_NOW] = t
            sf[F_DMA_END] = INF
            if _part_event(si, sf, ut, us, rq, pd, fr, st, offs) == ASK:
                return ASK
        else:
            si[I_PULL] = 0
            if _pull(si, sf, ut, us, rq, pd, fr, st, offs) == ASK:
                return ASK
