"""The compiled serving loop's numba functions (``npuweave.sim.lwkernel`` drives them).

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

from npuweave.schedule.base import EPS
from npuweave.schedule.buffer import commit
from npuweave.schedule.jit import kernel as _jit
from npuweave.schedule.kernel import choose_lw, evaluate_all, pool

SEQ, LW_PRINTED, LW_NPUWEAVE, LW_PLUS, LW_PLUS_PRINTED = 0, 1, 2, 3, 4


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
            fe, t_c, head, tail, used, fl_s, fl_c, fl_f = commit(
                u, t_m, t_c, buf - used, size, comp, ftime, fl_s, fl_c, fl_f, head, tail, used,
                bw)
            t_m = fe
        out[lo + p] = t_c


@_jit
def _pick_plus(k, ok, ev, inh_now, deadline, printed):
    """Mode 1 of ``_choose_fast``: least total (EPS), then deadline, inherent idle (in the
    printed reading only when the least total is zero: ``lw_reading.tie_key``), fe - ce."""
    best = np.inf
    for t in range(k):
        if ok[t] and ev[t, 0] < best:
            best = ev[t, 0]
    use_h = (not printed) or best <= EPS
    best += EPS
    pick = -1
    for t in range(k):
        if not ok[t] or not ev[t, 0] <= best:
            continue
        if pick < 0:
            pick = t
            continue
        a_d, b_d = deadline[t], deadline[pick]
        a_h, b_h = inh_now[t] > 0.0 and use_h, inh_now[pick] > 0.0 and use_h
        a_x, b_x = ev[t, 3] - ev[t, 4], ev[pick, 3] - ev[pick, 4]
        if a_d < b_d or (a_d == b_d and (a_h < b_h or (a_h == b_h and a_x < b_x))):
            pick = t
    return pick


@_jit
def _choose(code, k, active, nact, pos, seg, arrival, deadline, compute_kind, est, bound,
            prune, t_m, t_c, now, free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f, head,
            tail, bw, ev, ok, inh_now, stats):
    """The policy's choice; ``stats``: [estimates, urgent] counters."""
    if code != LW_PLUS and code != LW_PLUS_PRINTED:
        return choose_lw(k, active, nact, pos, seg, arrival, code == LW_PRINTED, code == SEQ,
                         compute_kind, t_m, t_c, free, maxft, size, comp, ftime, inh, fl_s,
                         fl_c, fl_f, head, tail, bw, ev, ok, inh_now)
    printed = code == LW_PLUS_PRINTED
    evaluate_all(k, active, pos, seg, printed, t_m, t_c, free, maxft, size, comp, ftime, inh,
                 fl_s, fl_c, fl_f, head, tail, bw, ev, inh_now)
    pool(k, active, nact, compute_kind, ev, ok)
    pick = _pick_plus(k, ok, ev, inh_now, deadline, printed)
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
        fe, ce, head, tail, used, fl_s, fl_c, fl_f = commit(
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
