"""Anchor: Layerweaver's closed-loop decision loop in plain Python (benchmarks only).

``lwgreedy.c`` again, line for line, on Python lists: what a programmer would write in
Python for this loop with no NumPy and no numba. npuweave without numba must be at least as
fast (issue 23). ``bench_anchors.py`` checks that its decisions and compute ends equal the C
loop's before it prints a rate.

``run(k, failsafe, requests, bw, buf, off, size, comp, ftime, inh, ckind, mft)`` takes the
C loop's input as Python lists and returns ``(tenants, compute ends)``, one per decision.
"""

from __future__ import annotations

import math

EPS = 1e-12


def _fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, sz, bw):
    t = t_m + free / bw
    need = sz - free
    for j in range(head, tail):
        s, c = fl_s[j], fl_c[j]
        if t < c:
            t = c
        if need <= s:
            return t + need / bw
        need -= s
        t += fl_f[j]
    return math.inf


def _fetch_window(fl_s, fl_c, fl_f, head, tail, free, bw, t0, t1):
    j = head
    while j < tail and fl_c[j] <= t0:
        free += fl_s[j]
        j += 1
    t, got = t0, 0.0
    if free > 0:
        if t + free / bw >= t1:
            return (t1 - t) * bw
        t += free / bw
        got = float(free)
    while j < tail:
        s, c = fl_s[j], fl_c[j]
        if c >= t1:
            break
        if t < c:
            t = c
        if t + fl_f[j] >= t1:
            return got + (t1 - t) * bw
        t += fl_f[j]
        got += s
        j += 1
    return got


def _greedy(k, active, pos, off, size, comp, ftime, inh, ckind, maxft, t_m, t_c, free, fl,
            head, tail, bw, ev_fe):
    fl_s, fl_c, fl_f = fl
    tot, dd = [0.0] * k, [0.0] * k
    all_ci = all_mem = True
    for v in range(k):
        if not active[v]:
            continue
        u = off[v] + pos[v]
        sz = size[u]
        fe = t_m + ftime[u] if sz <= free else _fetch_end(fl_s, fl_c, fl_f, head, tail, t_m,
                                                          free, sz, bw)
        ev_fe[v] = fe
        ce = (t_c if t_c > fe else fe) + comp[u]
        h = mem = inh[u]
        if fe > t_c:
            ci = fe - t_c
        else:
            ci = 0.0
            if fe < t_c and h + (t_c - fe) > 0.0:
                mem = h + _fetch_window(fl_s, fl_c, fl_f, head, tail, free - sz, bw, fe,
                                        t_c) / bw
        charged = (mem if mem > 0.0 else 0.0) - (h if h > 0.0 else 0.0)
        pi = maxft - (ce - fe)
        tot[v] = ci + charged + (pi if pi > 0.0 else 0.0)
        dd[v] = ce - fe
        if ci <= EPS:
            all_ci = False
        if mem <= EPS:
            all_mem = False
    ok = []
    for v in range(k):
        o = active[v]
        if o and all_ci:
            o = ckind[v] != 0
        elif o and all_mem:
            o = ckind[v] == 0
        ok.append(o)
    if not any(ok):
        ok = list(active)
    best = min((tot[v] for v in range(k) if ok[v]), default=math.inf)
    t, pick_h, pick_nd = -1, True, 0.0
    for v in range(k):
        if not ok[v] or not tot[v] <= best + EPS:
            continue
        h, nd = inh[off[v] + pos[v]] > 0.0, -dd[v]
        if t < 0 or h < pick_h or (h == pick_h and nd < pick_nd):
            t, pick_h, pick_nd = v, h, nd
    return t


def run(k, failsafe, requests, bw, buf, off, size, comp, ftime, inh, ckind, mft):
    """The closed loop to the end: ``(tenant per decision, compute end per decision)``."""
    active, pos, req, arrival = [True] * k, [0] * k, [0] * k, [0.0] * k
    ev_fe = [0.0] * k
    fl_s, fl_c, fl_f = [], [], []
    t_m = t_c = 0.0
    head = used = 0
    nact = k
    maxft = max(mft)
    o_t, o_ce = [], []
    while nact > 0:
        free = buf - used
        tail = len(fl_s)
        chose = False
        if nact == 1:
            t = active.index(True)
        elif failsafe:
            t = next((v for v in range(k) if active[v] and pos[v] > 0), -1)
            if t < 0:
                for v in range(k):
                    if active[v] and (t < 0 or arrival[v] < arrival[t]):
                        t = v
        else:
            t = _greedy(k, active, pos, off, size, comp, ftime, inh, ckind, maxft, t_m, t_c,
                        free, (fl_s, fl_c, fl_f), head, tail, bw, ev_fe)
            chose = True
        i = pos[t]
        u = off[t] + i
        sz = size[u]
        if sz == 0:
            fe = t_m
        elif chose:
            fe = ev_fe[t]
        elif sz <= free:
            fe = t_m + ftime[u]
        else:
            fe = _fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, sz, bw)
        ce = (t_c if t_c > fe else fe) + comp[u]
        while head < tail and fl_c[head] <= fe:
            used -= fl_s[head]
            head += 1
        if sz > 0 and ce > fe:
            fl_s.append(sz)
            fl_c.append(ce)
            fl_f.append(ftime[u])
            used += sz
        t_m, t_c = fe, ce
        o_t.append(t)
        o_ce.append(ce)
        r = req[t]
        if u + 1 < off[t + 1]:
            pos[t] = i + 1
        elif r + 1 < requests:
            req[t], arrival[t], pos[t] = r + 1, ce, 0
        else:
            active[t] = False
            nact -= 1
            maxft = max((mft[v] for v in range(k) if active[v]), default=0.0)
    return o_t, o_ce
