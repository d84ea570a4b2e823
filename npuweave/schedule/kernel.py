"""Layerweaver's decision on flat arrays: the scoring of a candidate, the filter, the pick.

``plan("layerweaver", ...)`` spends about 3-4 us per decision in Python (the ``Board`` and
``Layerweaver.select`` reference); the one compiled loop (``npuweave.schedule.loop``) makes
the same decisions on flat arrays, compiled by numba when it is installed. The scoring
(``evaluate``, both readings of chapter IV), the starvation filter (``pool``), the pick
(``pick_lw``) and the failsafe (``fcfs``) are written once here; the loop calls them for
closed loops and open arrivals alike, and Layerweaver+ builds its Mode 1 on them
(``npuweave.schedule.loop_steps``); the buffer arithmetic is ``npuweave.schedule.buffer``.
They perform the same float operations in the same order as ``Board.fetch_end``,
``Board.fetch_window``, ``Layerweaver.evaluate``/``select`` and ``Board.commit`` (no fastmath,
so no reassociation or fused multiply-add), hence the same decisions and bit-identical
predicted times; hypothesis tests compare them on random instances.

State layout: units of all tenants are concatenated (tenant ``t``'s next unit is
``off[t] + pos[t]``); the in-flight list is the slice ``head:tail`` of three arrays
(``npuweave.schedule.buffer``). Without numba the functions are plain Python, copied into the
loop (``npuweave.schedule.jit.python``).
"""

from __future__ import annotations

import numpy as np

from npuweave.schedule import jit
from npuweave.schedule.base import EPS
from npuweave.schedule.buffer import fetch_end, fetch_window

# EPS is read as a compile-time constant by numba (the same value as npuweave.schedule.base)


def load() -> bool:
    """Compile (or load from numba's cache) every kernel now; False when numba is missing.

    ``plan`` and the closed-loop fast path do this themselves for runs long enough to repay it
    (``npuweave.schedule.plan.kernels_pay``); a long-lived process (a notebook, a benchmark)
    may call it once up front so that shorter runs use the kernels too.
    """
    return jit.compile()


def loaded() -> bool:
    """Whether this process has already swapped in the compiled kernels (numba imported)."""
    return jit.loaded()


def available() -> bool:
    """Whether the kernel can be compiled (numba is installed; not imported by this check)."""
    return jit.available()


@jit.kernel(inline=True)
def evaluate(t, u, printed, t_m, t_c, free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f,
             head, tail, bw, ev):
    """Chapter IV's idle terms of tenant ``t``'s next unit ``u`` into ``ev[t]``: total, compute
    idle, memory idle incurred, fetch end, compute end (``Layerweaver.evaluate`` in the
    ``printed`` or the ``npuweave`` reading)."""
    sz = size[u]
    if sz <= free:
        fe = t_m + ftime[u]
    else:
        fe = fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, sz, bw)
    ce = (t_c if t_c > fe else fe) + comp[u]
    h = inh[u]
    if printed:
        fetched = 0.0
        if fe < t_c:
            fetched = fetch_window(fl_s, fl_c, fl_f, head, tail, free - sz, bw, fe, t_c) / bw
        mem = fetched
        charged = fetched
        ci = t_m + ftime[u] - t_c
        if not ci > 0.0:
            ci = 0.0
    else:
        mem = h
        if fe > t_c:
            ci = fe - t_c
        else:
            ci = 0.0
            if fe < t_c and h + (t_c - fe) > 0.0:
                mem = h + fetch_window(fl_s, fl_c, fl_f, head, tail, free - sz, bw, fe,
                                       t_c) / bw
        charged = (mem if mem > 0.0 else 0.0) - (h if h > 0.0 else 0.0)
    pi = maxft - (ce - fe)
    ev[t][0] = ci + charged + (pi if pi > 0.0 else 0.0)
    ev[t][1] = ci
    ev[t][2] = mem
    ev[t][3] = fe
    ev[t][4] = ce


@jit.kernel(inline=True)
def pool(k, active, nact, compute_kind, ev, ok):
    """Chapter IV's starvation filter: which candidates may be picked (into ``ok``)."""
    all_ci = nact > 1
    all_mem = nact > 1
    for t in range(k):
        if active[t]:
            if ev[t][1] <= EPS:
                all_ci = False
            if ev[t][2] <= EPS:
                all_mem = False
    n_ok = 0
    for t in range(k):
        o = active[t]
        if o and all_ci:
            o = compute_kind[t]
        elif o and all_mem:
            o = not compute_kind[t]
        ok[t] = o
        n_ok += o
    if n_ok == 0:  # no candidate of the wanted kind: the whole group
        for t in range(k):
            ok[t] = active[t]


@jit.kernel(inline=True)
def pick_lw(k, ok, ev, inh_now, printed):
    """``layerweaver._pick``: least total; ties: no inherent memory idle, largest distance."""
    best = np.inf
    for t in range(k):
        if ok[t] and ev[t][0] < best:
            best = ev[t][0]
    use_h = (not printed) or best <= EPS
    pick = -1
    pick_h = True
    pick_nd = 0.0
    for t in range(k):
        if not ok[t] or not ev[t][0] <= best + EPS:
            continue
        h = inh_now[t] > 0.0 and use_h
        nd = -(ev[t][4] - ev[t][3])
        if pick < 0 or (h < pick_h) or (h == pick_h and nd < pick_nd):
            pick, pick_h, pick_nd = t, h, nd
    return pick


@jit.kernel(inline=True)
def fcfs(k, active, pos, arrival):
    """``sequential.fcfs_tenant``: the request in progress, else the earliest issued."""
    for t in range(k):
        if active[t] and pos[t] > 0:
            return t
    pick = -1
    for t in range(k):
        if active[t] and (pick < 0 or arrival[t] < arrival[pick]):
            pick = t
    return pick


@jit.kernel(inline=True)
def evaluate_all(k, active, pos, off, printed, t_m, t_c, free, maxft, size, comp, ftime, inh,
                 fl_s, fl_c, fl_f, head, tail, bw, ev, inh_now):
    """``evaluate`` for the next unit of every active tenant (and its inherent idle)."""
    for t in range(k):
        if active[t]:
            u = off[t] + pos[t]
            inh_now[t] = inh[u]
            evaluate(t, u, printed, t_m, t_c, free, maxft, size, comp, ftime, inh, fl_s, fl_c,
                     fl_f, head, tail, bw, ev)
