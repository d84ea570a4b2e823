"""The compiled serving loop's numba functions (``npuweave.experiments.lwkernel`` drives them).

Flat-array versions of ``lwserve.serve_layerwise``'s steps: the predictor's ``commit`` and
idle-time evaluation (chapter IV, both readings), the candidate pool with the starvation
filter, Layerweaver's and Layerweaver+'s picks, dynamic batching per model, and the loop
``_serve`` itself; ``_replay_table`` builds the ``precise`` standalone table. Every function
performs the same float operations in the same order as the Python path. They are plain
Python until ``_compile`` jits them (after ``npuweave.schedule.kernel``'s Board arithmetic,
which they call).
"""

from __future__ import annotations

import numpy as np

from npuweave.schedule import kernel as _k
from npuweave.schedule.base import EPS

SEQ, LW_PRINTED, LW_NPUWEAVE, LW_PLUS = 0, 1, 2, 3

_PLAIN: dict[str, object] = {}
_COMPILED: list[bool] = []
_INLINE = ("_commit",)  # numba copies these into each caller (no call in the hot loop)
# the Board arithmetic of the Layerweaver kernel (rebound to the jitted versions by _compile)
_fetch_end = _k._fetch_end
_fetch_window = _k._fetch_window


def _jit(fn):
    _PLAIN[fn.__name__] = fn
    return fn


def _compile() -> bool:
    """Jit this module's kernel functions (after ``npuweave.schedule.kernel``'s)."""
    if not _COMPILED:
        ok = _k._compile()
        namespace = globals()
        namespace["_fetch_end"], namespace["_fetch_window"] = _k._fetch_end, _k._fetch_window
        if ok:
            from numba import njit

            for name, fn in _PLAIN.items():
                jit = njit(cache=True, inline="always") if name in _INLINE else njit(cache=True)
                namespace[name] = jit(fn)
        _COMPILED.append(ok)
    return _COMPILED[0]


@_jit
def _replay_table(size, comp, ftime, lo, n, buf, bw, out):
    """``out[lo + p]`` = ``replay_alone`` of units ``p..n-1`` (``out[lo + n]`` = 0)."""
    fl_s = np.zeros(n + 1, np.int64)
    fl_c = np.zeros(n + 1, np.float64)
    fl_f = np.zeros(n + 1, np.float64)
    out[lo + n] = 0.0
    for p in range(n):
        t_m = 0.0
        t_c = 0.0
        used = 0
        head = 0
        tail = 0
        for u in range(lo + p, lo + n):
            fe, t_c, head, tail, used, fl_s, fl_c, fl_f = _commit(
                u, t_m, t_c, buf - used, size, comp, ftime, fl_s, fl_c, fl_f, head, tail, used,
                bw)
            t_m = fe
        out[lo + p] = t_c


@_jit
def _commit(u, t_m, t_c, free, size, comp, ftime, fl_s, fl_c, fl_f, head, tail, used, bw):
    """``Board.commit`` of unit ``u`` (``free`` bytes free): drop the in-flight units done by
    its fetch end and append it (sliding the list down, or growing it, when full). Returns
    ``(fe, ce, head, tail, used, fl_s, fl_c, fl_f)``."""
    sz = size[u]
    if sz == 0:
        fe = t_m
    elif sz <= free:
        fe = t_m + ftime[u]
    else:
        fe = _fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, sz, bw)
    ce = (t_c if t_c > fe else fe) + comp[u]
    while head < tail and fl_c[head] <= fe:
        used -= fl_s[head]
        head += 1
    if tail == fl_s.shape[0]:
        if head > 0:
            fl_s[:tail - head] = fl_s[head:tail]
            fl_c[:tail - head] = fl_c[head:tail]
            fl_f[:tail - head] = fl_f[head:tail]
            tail -= head
            head = 0
        else:
            fl_s, fl_c, fl_f = _k_grow(fl_s, tail), _k_grow(fl_c, tail), _k_grow(fl_f, tail)
    if sz > 0 and ce > fe:
        fl_s[tail] = sz
        fl_c[tail] = ce
        fl_f[tail] = ftime[u]
        tail += 1
        used += sz
    return fe, ce, head, tail, used, fl_s, fl_c, fl_f


@_jit
def _evaluate(t, u, printed, t_m, t_c, free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f,
              head, tail, bw, ev):
    """Chapter IV's idle terms of tenant ``t``'s next unit ``u`` into ``ev[t]``: total, compute
    idle, memory idle incurred, fetch end, compute end (the reading's arithmetic).

    ``schedule.kernel._select`` inlines the same npuweave-reading arithmetic on purpose: one
    jitted helper shared by both costs the Layerweaver kernel 10-30% per decision (numba
    reference-counts the array arguments on every call, inlined or not; notes/dedupe.md)."""
    sz = size[u]
    if sz <= free:
        fe = t_m + ftime[u]
    else:
        fe = _fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, sz, bw)
    ce = (t_c if t_c > fe else fe) + comp[u]
    h = inh[u]
    if printed:  # Layerweaver.evaluate with the printed reading
        fetched = 0.0
        if fe < t_c:
            fetched = _fetch_window(fl_s, fl_c, fl_f, head, tail, free - sz, bw, fe, t_c) / bw
        mem = fetched
        charged = fetched
        ci = t_m + ftime[u] - t_c
        if not ci > 0.0:
            ci = 0.0
    else:  # the npuweave reading (LayerweaverPlus._choose_fast)
        mem = h
        if fe > t_c:
            ci = fe - t_c
        else:
            ci = 0.0
            if fe < t_c and h + (t_c - fe) > 0.0:
                mem = h + _fetch_window(fl_s, fl_c, fl_f, head, tail, free - sz, bw, fe,
                                        t_c) / bw
        charged = (mem if mem > 0.0 else 0.0) - (h if h > 0.0 else 0.0)
    pi = maxft - (ce - fe)
    ev[t, 0] = ci + charged + (pi if pi > 0.0 else 0.0)
    ev[t, 1] = ci
    ev[t, 2] = mem
    ev[t, 3] = fe
    ev[t, 4] = ce


@_jit
def _pool(k, active, nact, compute_kind, ev, ok):
    """Chapter IV's starvation filter: which candidates may be picked (into ``ok``)."""
    all_ci = nact > 1
    all_mem = nact > 1
    for t in range(k):
        if active[t]:
            if ev[t, 1] <= EPS:
                all_ci = False
            if ev[t, 2] <= EPS:
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
    if n_ok == 0:
        for t in range(k):
            ok[t] = active[t]


@_jit
def _pick_lw(k, ok, ev, inh_now, printed):
    """``layerweaver._pick``: least total; ties: no inherent memory idle, largest distance."""
    best = np.inf
    for t in range(k):
        if ok[t] and ev[t, 0] < best:
            best = ev[t, 0]
    use_h = (not printed) or best <= EPS
    pick = -1
    pick_h = True
    pick_nd = 0.0
    for t in range(k):
        if not ok[t] or not ev[t, 0] <= best + EPS:
            continue
        h = inh_now[t] > 0.0 and use_h
        nd = -(ev[t, 4] - ev[t, 3])
        if pick < 0 or (h < pick_h) or (h == pick_h and nd < pick_nd):
            pick, pick_h, pick_nd = t, h, nd
    return pick


@_jit
def _pick_plus(k, ok, ev, inh_now, deadline):
    """Mode 1 of ``_choose_fast``: least total (EPS), then deadline, inherent idle, fe - ce."""
    best = np.inf
    for t in range(k):
        if ok[t] and ev[t, 0] < best:
            best = ev[t, 0]
    best += EPS
    pick = -1
    for t in range(k):
        if not ok[t] or not ev[t, 0] <= best:
            continue
        if pick < 0:
            pick = t
            continue
        a_d, b_d = deadline[t], deadline[pick]
        a_h, b_h = inh_now[t] > 0.0, inh_now[pick] > 0.0
        a_x, b_x = ev[t, 3] - ev[t, 4], ev[pick, 3] - ev[pick, 4]
        if a_d < b_d or (a_d == b_d and (a_h < b_h or (a_h == b_h and a_x < b_x))):
            pick = t
    return pick


@_jit
def _choose(code, k, active, nact, pos, seg, arrival, deadline, compute_kind, est, bound,
            prune, t_m, t_c, now, free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f, head,
            tail, bw, ev, ok, inh_now, stats):
    """The policy's choice; ``stats``: [estimates, urgent] counters."""
    if code == SEQ:
        for t in range(k):
            if active[t] and pos[t] > 0:
                return t
        pick = -1
        for t in range(k):
            if active[t] and (pick < 0 or arrival[t] < arrival[pick]):
                pick = t
        return pick
    if code != LW_PLUS and nact == 1:
        for t in range(k):
            if active[t]:
                return t
    printed = code == LW_PRINTED
    for t in range(k):
        if active[t]:
            u = seg[t] + pos[t]
            inh_now[t] = inh[u]
            _evaluate(t, u, printed, t_m, t_c, free, maxft, size, comp, ftime, inh, fl_s,
                      fl_c, fl_f, head, tail, bw, ev)
    _pool(k, active, nact, compute_kind, ev, ok)
    if code != LW_PLUS:
        return _pick_lw(k, ok, ev, inh_now, printed)
    pick = _pick_plus(k, ok, ev, inh_now, deadline)
    t_end = now if now > t_c else t_c
    urgent = -1
    u_deadline = np.inf
    for t in range(k):
        if not active[t]:
            continue
        d = deadline[t]
        if d == np.inf or (urgent >= 0 and d >= u_deadline):
            continue
        slack = d - (t_end if t == pick else ev[pick, 4])
        u = seg[t] + pos[t]
        if prune and slack >= bound[u]:
            continue
        stats[0] += 1
        if est[u] > slack:
            urgent = t
            u_deadline = d
    if urgent >= 0:
        stats[1] += 1
        return urgent
    return pick


@_jit
def _serve(code, prune, k, nb_max, seg_off, n_units, size, comp, ftime, inh, est, bound, mft,
           pe_sum, batch_kind, buf, bw, times, models, order, moff, rel, window, limit,
           finish, batch_of):
    """The ``serve_layerwise`` loop; returns ``(missed, decisions, estimates, urgent,
    pe_busy)`` and fills ``finish`` / ``batch_of``. ``batch_kind[m * nb_max + b - 1]``: model
    ``m`` at batch ``b`` is compute-bound (a batch is classified by its own costs)."""
    n = times.shape[0]
    compute_kind = np.zeros(k, np.bool_)  # per tenant: the batch in service's class
    active = np.zeros(k, np.bool_)
    pos = np.zeros(k, np.int64)
    seg = np.zeros(k, np.int64)
    nu = np.zeros(k, np.int64)
    lo = np.zeros(k, np.int64)
    hi = np.zeros(k, np.int64)
    arrival = np.zeros(k, np.float64)
    deadline = np.full(k, np.inf)
    cur_mft = np.zeros(k, np.float64)
    ph = np.zeros(k, np.int64)   # per model: requests started
    pa = np.zeros(k, np.int64)   # per model: requests admitted
    ev = np.zeros((k, 5), np.float64)
    ok = np.zeros(k, np.bool_)
    inh_now = np.zeros(k, np.float64)
    stats = np.zeros(2, np.int64)
    cap_fl = 64
    fl_s = np.zeros(cap_fl, np.int64)
    fl_c = np.zeros(cap_fl, np.float64)
    fl_f = np.zeros(cap_fl, np.float64)
    head = 0
    tail = 0
    used = 0
    t_m = 0.0
    t_c = 0.0
    now = 0.0
    nxt = 0
    nact = 0
    maxft = 0.0
    missed = 0
    decisions = 0
    pe_busy = 0.0
    while missed < limit:
        # -- admit: arrivals up to now, then batches of idle models (_State.admit) --
        while nxt < n and times[nxt] <= now:
            pa[models[nxt]] += 1
            nxt += 1
        for m in range(k):
            q = pa[m] - ph[m]
            if q > 0 and not active[m]:
                first = moff[m] + ph[m]
                if q >= nb_max or times[order[first]] + window <= now:
                    b = q if q < nb_max else nb_max
                    ph[m] += b
                    pe_busy += _start_batch(m, b, first, nb_max, seg_off, n_units, mft, pe_sum,
                                            times, order, rel, seg, nu, pos, lo, hi, deadline,
                                            arrival, cur_mft)
                    compute_kind[m] = batch_kind[m * nb_max + b - 1]
                    active[m] = True
                    nact += 1
                    maxft = _max_mft(k, active, cur_mft)
        if nact == 0:  # idle: jump to the next arrival or window end (_State.next_event)
            later = _next_time(k, nxt, n, times, order, moff, pa, ph, active, nb_max, window,
                               now)
            if later == np.inf:
                break
            now = later
            if t_m < now:  # Predictor.tell
                t_m = now
            if t_c < now:
                t_c = now
            while head < tail and fl_c[head] <= now:
                used -= fl_s[head]
                head += 1
            continue
        free = buf - used
        t = _choose(code, k, active, nact, pos, seg, arrival, deadline, compute_kind, est,
                    bound, prune, t_m, t_c, now, free, maxft, size, comp, ftime, inh, fl_s,
                    fl_c, fl_f, head, tail, bw, ev, ok, inh_now, stats)
        decisions += 1
        # -- Board.commit --
        fe, ce, head, tail, used, fl_s, fl_c, fl_f = _commit(
            seg[t] + pos[t], t_m, t_c, free, size, comp, ftime, fl_s, fl_c, fl_f, head, tail,
            used, bw)
        t_m = fe
        t_c = ce
        if pos[t] + 1 < nu[t]:
            pos[t] += 1
        else:  # the batch is dispatched: its requests finish at ce (_State.finished)
            missed += _finish_batch(t, ce, lo, hi, order, times, rel, finish, batch_of)
            active[t] = False
            deadline[t] = np.inf
            nact -= 1
            maxft = _max_mft(k, active, cur_mft)
        now = t_m
    return missed, decisions, stats[0], stats[1], pe_busy


@_jit
def _start_batch(m, b, first, nb_max, seg_off, n_units, mft, pe_sum, times, order, rel, seg,
                 nu, pos, lo, hi, deadline, arrival, cur_mft):
    """``_State._start``: model ``m`` takes its next ``b`` queued requests (from position
    ``first`` of its queue) as one batch; returns its compute seconds (``pe_busy``)."""
    j = m * nb_max + b - 1
    lo[m], hi[m] = first, first + b
    seg[m], nu[m], pos[m] = seg_off[j], n_units[m], 0
    tmin = times[order[first]]
    for r in range(first + 1, first + b):
        if times[order[r]] < tmin:
            tmin = times[order[r]]
    deadline[m] = tmin + rel[m]
    arrival[m] = times[order[first]]
    cur_mft[m] = mft[j]
    return pe_sum[j]


@_jit
def _max_mft(k, active, cur_mft):
    """``Board._refresh``: the longest single fetch among the active tenants' units."""
    out = 0.0
    for v in range(k):
        if active[v] and cur_mft[v] > out:
            out = cur_mft[v]
    return out


@_jit
def _next_time(k, nxt, n, times, order, moff, pa, ph, active, nb_max, window, now):
    """``_State.next_event``: the next arrival or batching-window end (``inf``: none)."""
    later = np.inf
    if nxt < n:
        later = times[nxt]
    for m in range(k):
        q = pa[m] - ph[m]
        if q > 0 and not active[m]:
            w_end = times[order[moff[m] + ph[m]]] + window
            c = now if q >= nb_max else (w_end if w_end > now else now)
            if c < later:
                later = c
    return later


@_jit
def _finish_batch(t, ce, lo, hi, order, times, rel, finish, batch_of):
    """``_State.finished``: the batch of tenant ``t`` ends at ``ce``; returns its misses."""
    b = hi[t] - lo[t]
    missed = 0
    for r in range(lo[t], hi[t]):
        i = order[r]
        finish[i] = ce
        batch_of[i] = b
        if ce > times[i] + rel[t]:
            missed += 1
    return missed


@_jit
def _k_grow(a, n):
    out = np.empty(2 * n + 16, a.dtype)
    out[:n] = a[:n]
    return out
