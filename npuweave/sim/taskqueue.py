"""The compiled task loop's state layout and its queue of waiting requests
(``npuweave.sim.taskloop``).

Requests are rows: ``rc`` (int64 columns ``R_*``) and ``rx`` (float64 columns ``X_*``), one row
per arrival, the request id being the row. The queue is a binary heap of request ids ordered
by ``(key0, key1, id)`` (the policy's ``key``, ``npuweave.sim.taskrules``; the same order as
``first_by``), with each queued request's heap position in ``rc[:, R_HPOS]`` (-1: not queued),
so a request can leave the queue from anywhere (a preempted request's successor, chosen at the
preemption, is started later) and a queued request's key can change (SJF: a checkpointed
request's last computation ends while it waits).

Examples
--------
>>> import numpy as np
>>> rc, rx = np.zeros((3, N_RC), np.int64), np.zeros((3, N_RX))
>>> rc[:, R_HPOS] = -1
>>> rx[:, X_K0] = [2.0, 1.0, 1.0]
>>> hq, ti = np.zeros(3, np.int64), np.zeros(N_TI, np.int64)
>>> for r in (0, 1, 2):
...     push(hq, ti, rc, rx, r)
>>> int(hq[0]), int(ti[T_HN])
(1, 3)
>>> remove(hq, ti, rc, rx, 1); int(hq[0])
2
"""

from __future__ import annotations

from npuweave.schedule.jit import kernel

# request int columns: model, priority, state, progress, dispatched (when not held by the
# engine's stream), preemptions, restarts, restore unit row (-1: none), heap position
R_MODEL, R_PRIO, R_STATE, R_PROG, R_DSP, R_PRE, R_RESTART, R_RESTORE, R_HPOS = range(9)
N_RC = 9
# request float columns: arrival, start, finish, overhead, wasted, queue key
X_ARR, X_START, X_FINISH, X_OVER, X_WASTE, X_K0, X_K1 = range(7)
N_RX = 7
# request states (``npuweave.sim.requests.State``, in this order: ``STATES``)
QUEUED, RUNNING, PREEMPTED, DONE, KILLED = range(5)
STATES = ("queued", "running", "preempted", "done", "killed")
# the loop's int scalars: next arrival, arrivals, request to run next (-1), draining,
# preemptive, mechanism, heap size, segments kept (flag, count), effects, decisions (flag,
# count), event sequence counter, the arrival's and the progress tick's sequence numbers,
# the model whose jobs the engine's stream holds, the most jobs of one request
(T_NEXT, T_N, T_THEN, T_DRAIN, T_PREEMPTIVE, T_MECH, T_HN, T_KEEPSEG, T_NSEG, T_NEF,
 T_KEEPDEC, T_NDEC, T_SEQ, T_ASEQ, T_TSEQ, T_SMODEL, T_MAXFLAT) = range(17)
N_TI = 17
# the loop's float scalars: the progress tick's next time (inf: none) and period
G_TICK, G_STEP = range(2)
N_TF = 2
CHECKPOINT, KILL, DRAIN = range(3)  # ``T_MECH``


@kernel
def _less(rx, a, b):
    """Whether request ``a`` comes before ``b``: ``(key0, key1, id)`` as tuples compare."""
    ka, kb = rx[a, X_K0], rx[b, X_K0]
    if ka != kb:
        return ka < kb
    ka, kb = rx[a, X_K1], rx[b, X_K1]
    if ka != kb:
        return ka < kb
    return a < b


@kernel
def _sift(hq, n, rc, rx, i):
    """The request at heap slot ``i`` (of ``n``) moves to its place: up past the parents it
    comes before, else down past the lesser child while that comes before it."""
    r = hq[i]
    while True:
        j = (i - 1) >> 1
        if i == 0 or not _less(rx, r, hq[j]):
            j = 2 * i + 1
            if j + 1 < n and _less(rx, hq[j + 1], hq[j]):
                j += 1
            if j >= n or not _less(rx, hq[j], r):
                break
        hq[i] = hq[j]
        rc[hq[i], R_HPOS] = i
        i = j
    hq[i] = r
    rc[r, R_HPOS] = i


@kernel
def push(hq, ti, rc, rx, r):
    """Request ``r`` (its key in ``rx``) joins the queue."""
    n = ti[T_HN]
    hq[n] = r
    ti[T_HN] = n + 1
    _sift(hq, n + 1, rc, rx, n)


@kernel
def remove(hq, ti, rc, rx, r):
    """Request ``r`` (queued) leaves the queue."""
    i = rc[r, R_HPOS]
    n = ti[T_HN] - 1
    ti[T_HN] = n
    rc[r, R_HPOS] = -1
    if i < n:  # the last one takes its slot, then its place
        hq[i] = hq[n]
        _sift(hq, n, rc, rx, i)


@kernel
def rekey(hq, ti, rc, rx, r):
    """Request ``r``'s key changed (in ``rx``): its place in the queue follows."""
    _sift(hq, ti[T_HN], rc, rx, rc[r, R_HPOS])
