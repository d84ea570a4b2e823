"""The compiled serving loop's numba functions (``npuweave.sim.lwkernel`` drives them).

Flat-array versions of ``lwserve.serve_layerwise``'s steps: the predictor's ``commit`` and
idle-time evaluation (chapter IV, both readings), the candidate pool with the starvation
filter, Layerweaver's and Layerweaver+'s picks, dynamic batching per model into one or more
slots (per-model FIFO or per-request grouping), deadline inheritance, and the loop ``_serve``
itself; ``_replay_table`` builds the ``precise`` standalone table. Every function
performs the same float operations in the same order as the Python path. They are plain
Python until ``_compile`` jits them (after ``npuweave.schedule.kernel``'s Board arithmetic,
which they call).
"""

from __future__ import annotations

import numpy as np

from npuweave.schedule.base import EPS
from npuweave.schedule.buffer import commit_in_place, in_flight
from npuweave.schedule.jit import borrow
from npuweave.schedule.jit import kernel as _jit
from npuweave.schedule.kernel import choose_lw, evaluate_all, fcfs, pool

SEQ, LW_PRINTED, LW_NPUWEAVE, LW_PLUS, LW_PLUS_PRINTED = 0, 1, 2, 3, 4


@_jit
def _replay_table(size, comp, ftime, lo, n, buf, bw, out):
    """``out[lo + p]`` = ``replay_alone`` of units ``p..n-1`` (``out[lo + n]`` = 0)."""
    fl_s, fl_c, fl_f = in_flight(n + 1)
    out[lo + n] = 0.0
    for p in range(n):
        t_m = 0.0
        t_c = 0.0
        used = 0
        head = 0
        tail = 0
        for u in range(lo + p, lo + n):
            fe, t_c, head, tail, used = commit_in_place(
                u, t_m, t_c, buf - used, size, comp, ftime, fl_s, fl_c, fl_f, head, tail, used,
                bw)
            t_m = fe
        out[lo + p] = t_c


@_jit(inline=True)
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


@_jit(inline=True)
def _choose(code, k, active, nact, pos, seg, arrival, deadline, compute_kind, est, bound,
            prune, t_m, t_c, now, free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f, head,
            tail, bw, work, stats):
    """The policy's choice; ``work``: ``scratch``'s arrays; ``stats``: [estimates, urgent]
    counters. Copied into ``_serve`` (no call: a call passing arrays costs two atomic
    reference-count operations per array, which were most of the loop's time; at most 30
    arguments, or Python passes them as ``*args``, which numba cannot inline)."""
    ev, ok, inh_now = work
    if code != LW_PLUS and code != LW_PLUS_PRINTED:
        return choose_lw(k, active, nact, pos, seg, arrival, code == LW_PRINTED, code == SEQ,
                         compute_kind, t_m, t_c, free, maxft, size, comp, ftime, inh, fl_s,
                         fl_c, fl_f, head, tail, bw, ev, ok, inh_now)
    printed = code == LW_PLUS_PRINTED
    evaluate_all(k, active, pos, seg, printed, t_m, t_c, free, maxft, size, comp, ftime, inh,
                 fl_s, fl_c, fl_f, head, tail, bw, ev, inh_now)
    pool(k, active, nact, compute_kind, ev, ok)
    pick = _pick_plus(k, ok, ev, inh_now, deadline, printed)
    return _urgency(k, active, pick, ev[pick, 4], deadline, seg, pos, now if now > t_c else t_c,
                    prune, bound, est, stats)


@_jit(inline=True)
def _urgency(k, active, pick, pick_ce, deadline, seg, pos, t_end, prune, bound, est, stats):
    """Mode 2 of ``_choose_fast`` after Mode 1 picked ``pick`` (its compute end
    ``pick_ce``): the earliest-deadline request estimated to miss even alone, else ``pick``."""
    urgent = -1
    u_deadline = np.inf
    for t in range(k):
        if not active[t]:
            continue
        d = deadline[t]
        if d == np.inf or (urgent >= 0 and d >= u_deadline):
            continue
        slack = d - (t_end if t == pick else pick_ce)
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
def _serve(code, prune, inherit, k, slots, nb_max, seg_off, n_units, size, comp, ftime, inh, est,
           bound, alone, mft, pe_sum, batch_kind, buf, bw, state, times, models, order, moff,
           rel, window, limit, finish, batch_of):
    """The ``serve_layerwise`` loop; returns ``(missed, decisions, estimates, urgent,
    pe_busy)`` and fills ``finish`` / ``batch_of``. Board tenant ``t`` is slot ``t % slots``
    of model ``t // slots`` (``slots`` batches of a model in service at once: 1 for
    per-model FIFO, ``max_inflight`` for per-request grouping). ``batch_kind[m * nb_max + b -
    1]``: model ``m`` at batch ``b`` is compute-bound (a batch is classified by its own
    costs); ``alone`` at the same index: its standalone time (deadline inheritance).
    ``state``: the loop's working arrays, fresh from ``lwkernel.loop_state`` (the in-flight
    list sized by ``buffer.room``).

    Every array is the caller's and borrowed (``jit.borrow``): the inlined steps then count
    no references per decision (two atomic operations per array at each binding of an
    inlined function's parameters were most of the loop's time)."""
    (seg_off, n_units, size, comp, ftime, inh, est, bound, alone, mft, pe_sum, batch_kind,
     times, models, order, moff, rel, finish, batch_of) = borrow(
        (seg_off, n_units, size, comp, ftime, inh, est, bound, alone, mft, pe_sum,
         batch_kind, times, models, order, moff, rel, finish, batch_of))
    (compute_kind, active, pos, seg, lo, hi, arrival, own, deadline, cur_mft, ph, pa, ev, ok,
     inh_now, fl_s, fl_c, fl_f, stats) = borrow(state)
    work = (ev, ok, inh_now)
    n = times.shape[0]
    nt = k * slots
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
        # -- admit: arrivals up to now, then batches into free slots (Batcher.admit) --
        while nxt < n and times[nxt] <= now:
            pa[models[nxt]] += 1
            nxt += 1
        for m in range(k):
            while pa[m] > ph[m]:
                t = _free_slot(m, slots, active)
                q = pa[m] - ph[m]
                first = moff[m] + ph[m]
                if t < 0 or (q < nb_max and times[order[first]] + window > now):
                    break
                b = q if q < nb_max else nb_max
                ph[m] += b
                j = m * nb_max + b - 1
                pe_busy += pe_sum[j]
                lo[t], hi[t], seg[t], pos[t] = first, first + b, seg_off[j], 0
                own[t] = _earliest(times, order, first, first + b) + rel[m]
                deadline[t] = own[t]
                arrival[t] = times[order[first]]
                cur_mft[t] = mft[j]
                compute_kind[t] = batch_kind[j]
                active[t] = True
                nact += 1
                maxft = _max_mft(nt, active, cur_mft)
        if nact == 0:  # idle: jump to the next arrival or window end (Batcher.wake)
            later = _next_time(k, nxt, n, times, order, moff, pa, ph, nb_max, window, now)
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
        if inherit:
            _inherit(k, slots, nb_max, active, own, deadline, times, order, moff, pa, ph, rel,
                     alone)
        free = buf - used
        if nact == 1:  # the policy's answer without binding _choose's ~20 arrays
            t = _only(nt, active)  # (Mode 1 of Layerweaver+ too; Mode 2 may still override)
            if code == LW_PLUS or code == LW_PLUS_PRINTED:
                t = _urgency(nt, active, t, 0.0, deadline, seg, pos, now if now > t_c else t_c,
                             prune, bound, est, stats)
        elif code == SEQ:  # choose_lw's failsafe branch, without binding its arrays
            t = fcfs(nt, active, pos, arrival)
        else:
            t = _choose(code, nt, active, nact, pos, seg, arrival, deadline, compute_kind, est,
                        bound, prune, t_m, t_c, now, free, maxft, size, comp, ftime, inh, fl_s,
                        fl_c, fl_f, head, tail, bw, work, stats)
        decisions += 1
        # -- Board.commit --
        fe, ce, head, tail, used = commit_in_place(
            seg[t] + pos[t], t_m, t_c, free, size, comp, ftime, fl_s, fl_c, fl_f, head, tail,
            used, bw)
        t_m = fe
        t_c = ce
        if pos[t] + 1 < n_units[t // slots]:
            pos[t] += 1
        else:  # the batch is dispatched: its requests finish at ce (_State.finished)
            missed += _finish_batch(t, ce, lo, hi, order, times, rel[t // slots], finish,
                                    batch_of)
            active[t] = False
            own[t] = np.inf
            deadline[t] = np.inf
            nact -= 1
            maxft = _max_mft(nt, active, cur_mft)
        now = t_m
    return missed, decisions, stats[0], stats[1], pe_busy


@_jit(inline=True)
def _only(k, active):
    """The one active tenant (the loop calls it with exactly one)."""
    for t in range(k):
        if active[t]:
            return t
    return -1


@_jit(inline=True)
def _free_slot(m, slots, active):
    """The lowest free slot's board tenant of model ``m`` (-1: all busy; Batcher.admit)."""
    for t in range(m * slots, (m + 1) * slots):
        if not active[t]:
            return t
    return -1


@_jit(inline=True)
def _earliest(times, order, a, b):
    """The earliest arrival among queued requests ``order[a:b]`` (``a < b``)."""
    out = times[order[a]]
    for r in range(a + 1, b):
        if times[order[r]] < out:
            out = times[order[r]]
    return out


@_jit(inline=True)
def _inherit(k, slots, nb_max, active, own, deadline, times, order, moff, pa, ph, rel, alone):
    """``_State.inherit``: each batch in service takes the deadline of its model's queue
    (``Batcher.due``: the earliest deadline of the next batch less its standalone time) when
    that is earlier than its own."""
    for m in range(k):
        q = pa[m] - ph[m]
        due = np.inf
        if q > 0:
            b = q if q < nb_max else nb_max
            first = moff[m] + ph[m]
            d = times[order[first]] + rel[m]
            for r in range(first + 1, first + b):
                x = times[order[r]] + rel[m]
                if x < d:
                    d = x
            due = d - alone[m * nb_max + b - 1]
        for t in range(m * slots, (m + 1) * slots):
            if active[t]:
                deadline[t] = due if due < own[t] else own[t]


@_jit(inline=True)
def _max_mft(k, active, cur_mft):
    """``Board._refresh``: the longest single fetch among the active tenants' units."""
    out = 0.0
    for v in range(k):
        if active[v] and cur_mft[v] > out:
            out = cur_mft[v]
    return out


@_jit(inline=True)
def _next_time(k, nxt, n, times, order, moff, pa, ph, nb_max, window, now):
    """``Batcher.wake`` with nothing in service: the next arrival or batching-window end
    (``inf``: none)."""
    later = np.inf
    if nxt < n:
        later = times[nxt]
    for m in range(k):
        q = pa[m] - ph[m]
        if q > 0:
            w_end = times[order[moff[m] + ph[m]]] + window
            c = now if q >= nb_max else (w_end if w_end > now else now)
            if c < later:
                later = c
    return later


@_jit(inline=True)
def _finish_batch(t, ce, lo, hi, order, times, rel, finish, batch_of):
    """``_State.finished``: the batch of tenant ``t`` (relative deadline ``rel``) ends at
    ``ce``; returns its misses."""
    b = hi[t] - lo[t]
    missed = 0
    for r in range(lo[t], hi[t]):
        i = order[r]
        finish[i] = ce
        batch_of[i] = b
        if ce > times[i] + rel:
            missed += 1
    return missed
