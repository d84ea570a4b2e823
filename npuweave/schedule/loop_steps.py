"""The steps of the one compiled decision loop (``npuweave.schedule.loop.run_loop``).

Each step is a small ``inline=True`` kernel: numba copies it into the loop, and without numba
``npuweave.schedule.inliner`` does the same in Python. They are grouped by concern:

* the policy's choice (``choose``), one branch per policy code, each calling its policy's
  scoring written once: Layerweaver's in ``npuweave.schedule.kernel`` (both readings, the
  failsafe ``fcfs``), Layerweaver+'s two modes here (``pick_plus``, ``urgency``: thesis V.2),
  AI-MT's in ``npuweave.schedule.aimt_kernel``;
* the arrivals: the closed loop's re-issue rule (``reissues``), and for open arrivals the
  batcher's steps (``free_slot``, ``earliest``, ``inherit``, ``next_time``, ``finish_batch``:
  ``npuweave.sim.batcher.Batcher`` and ``npuweave.sim.lwserve._State``, whose Python loop is
  the reference).

Every step performs the same float operations in the same order as its Python counterpart
(no fastmath), so the loop's decisions and times equal the reference's bit for bit.
"""

from __future__ import annotations

import numpy as np

from npuweave.schedule.aimt_kernel import choose_among
from npuweave.schedule.base import EPS
from npuweave.schedule.jit import kernel
from npuweave.schedule.kernel import evaluate_all, fcfs, pick_lw, pool

#: Policy codes of the loop: first come first served (``Sequential``, or Layerweaver with its
#: failsafe on), Layerweaver in either reading, Layerweaver+ (Mode 1 in either reading), AI-MT.
SEQ, LW_PRINTED, LW_NPUWEAVE, LW_PLUS, LW_PLUS_PRINTED, AIMT = 0, 1, 2, 3, 4, 5


@kernel(inline=True)
def pick_plus(k, ok, ev, inh_now, deadline, printed):
    """Layerweaver+'s Mode 1 (``LayerweaverPlus._choose_fast``): least total (EPS), then
    deadline, inherent idle (in the printed reading only when the least total is zero:
    ``lw_reading.tie_key``), fe - ce."""
    best = np.inf
    for t in range(k):
        if ok[t] and ev[t][0] < best:
            best = ev[t][0]
    use_h = (not printed) or best <= EPS
    best += EPS
    pick = -1
    for t in range(k):
        if not ok[t] or not ev[t][0] <= best:
            continue
        if pick < 0:
            pick = t
            continue
        a_d, b_d = deadline[t], deadline[pick]
        a_h, b_h = inh_now[t] > 0.0 and use_h, inh_now[pick] > 0.0 and use_h
        a_x, b_x = ev[t][3] - ev[t][4], ev[pick][3] - ev[pick][4]
        if a_d < b_d or (a_d == b_d and (a_h < b_h or (a_h == b_h and a_x < b_x))):
            pick = t
    return pick


@kernel(inline=True)
def urgency(k, active, pick, pick_ce, deadline, seg, pos, t_end, prune, bound, est, stats):
    """Layerweaver+'s Mode 2 after Mode 1 picked ``pick`` (its compute end ``pick_ce``): the
    earliest-deadline request estimated to miss even alone, else ``pick``; ``stats``:
    [estimates, urgent] counters."""
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


@kernel(inline=True)
def choose(code, k, active, nact, pos, seg, arrival, deadline, compute_kind, t_m, t_c, now,
           free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f, head, tail, bw, work, plus,
           aimt, stats):
    """The policy's pick among the ``nact`` active tenants (``nact > 0``); ``work``:
    ``ev, ok, inh_now`` (``loop.state``); ``plus`` and ``aimt``: Layerweaver+'s and AI-MT's
    parameters and work arrays (``loop.run_loop``). One candidate: that one; Layerweaver
    (either reading): ``kernel.evaluate_all``, the starvation filter and ``kernel.pick_lw``;
    Layerweaver+: the same scores and filter, Mode 1's pick, then Mode 2
    (``urgency``), which may override even a single candidate. Each step appears once here
    (numba copies an inlined step's code at every call site, and the copies were most of the
    loop's compile time). At most 30 arguments: past that Python passes them as ``*args``,
    which numba cannot inline."""
    pick_ce = 0.0
    if nact == 1:
        pick = only(k, active)
    elif code == SEQ:
        return fcfs(k, active, pos, arrival)
    elif code == AIMT:
        return choose_among(k, active, seg, pos, comp, ftime, free, t_c - t_m, aimt)
    else:
        ev, ok, inh_now = work
        printed = code == LW_PRINTED or code == LW_PLUS_PRINTED
        evaluate_all(k, active, pos, seg, printed, t_m, t_c, free, maxft, size, comp, ftime,
                     inh, fl_s, fl_c, fl_f, head, tail, bw, ev, inh_now)
        pool(k, active, nact, compute_kind, ev, ok)
        if code != LW_PLUS and code != LW_PLUS_PRINTED:
            return pick_lw(k, ok, ev, inh_now, printed)
        pick = pick_plus(k, ok, ev, inh_now, deadline, printed)
        pick_ce = ev[pick][4]
    if code == LW_PLUS or code == LW_PLUS_PRINTED:  # (no local flag: the plain loop's
        prune, est, bound = plus                        # specialiser folds this test)
        pick = urgency(k, active, pick, pick_ce, deadline, seg, pos,
                       now if now > t_c else t_c, prune, bound, est, stats)
    return pick


@kernel(inline=True)
def only(k, active):
    """The one active tenant (called with exactly one)."""
    for t in range(k):
        if active[t]:
            return t
    return -1


@kernel(inline=True)
def reissues(r, ce, requests, horizon, has_horizon):
    """The closed loop's rule (``plan.reissues``): whether a stream whose request ``r``
    finishes at ``ce`` issues request ``r + 1`` then (``requests`` -1: none)."""
    return (ce < horizon) if has_horizon else (r + 1 < requests)


@kernel(inline=True)
def max_mft(k, active, cur_mft):
    """``Board._refresh``: the longest single fetch among the active tenants' units."""
    out = 0.0
    for v in range(k):
        if active[v] and cur_mft[v] > out:
            out = cur_mft[v]
    return out


@kernel(inline=True)
def free_slot(m, slots, active):
    """The lowest free slot's board tenant of model ``m`` (-1: all busy; Batcher.admit)."""
    for t in range(m * slots, (m + 1) * slots):
        if not active[t]:
            return t
    return -1


@kernel(inline=True)
def admit(k, slots, nb_max, now, window, times, order, moff, rel, pa, ph, active, batches, slot,
          pe_busy):
    """``Batcher.admit``: each model's arrived requests into its free slots, a batch of up to
    ``nb_max`` once it is full or its window (from its oldest request) has passed. ``batches``:
    per (model, batch) ``seg_off, n_units`` (per model), ``mft, pe_sum, batch_kind``;
    ``slot``: the board tenants' arrays the loop keeps. Returns the batches admitted and
    ``pe_busy`` with their PE seconds added, one by one (the Python loop's order)."""
    seg_off, n_units, mft, pe_sum, batch_kind = batches
    lo, hi, seg, pos, nu, req, own, deadline, arrival, cur_mft, compute_kind = slot
    added = 0
    for m in range(k):
        while pa[m] > ph[m]:
            t = free_slot(m, slots, active)
            q = pa[m] - ph[m]
            first = moff[m] + ph[m]
            if t < 0 or (q < nb_max and times[order[first]] + window > now):
                break
            b = q if q < nb_max else nb_max
            ph[m] += b
            j = m * nb_max + b - 1
            pe_busy += pe_sum[j]
            lo[t], hi[t], seg[t], pos[t] = first, first + b, seg_off[j], 0
            nu[t], req[t] = n_units[m], order[first]
            own[t] = earliest(times, order, first, first + b) + rel[m]
            deadline[t] = own[t]
            arrival[t] = times[order[first]]
            cur_mft[t] = mft[j]
            compute_kind[t] = batch_kind[j]
            active[t] = True
            added += 1
    return added, pe_busy


@kernel(inline=True)
def tell(now, t_m, t_c, fl_s, fl_c, head, tail, used):
    """``Predictor.tell`` after an idle gap: both clocks move up to ``now`` and the in-flight
    units whose computations ended by then leave the buffer. Returns ``t_m, t_c, head,
    used``."""
    if t_m < now:
        t_m = now
    if t_c < now:
        t_c = now
    while head < tail and fl_c[head] <= now:
        used -= fl_s[head]
        head += 1
    return t_m, t_c, head, used


@kernel(inline=True)
def earliest(times, order, a, b):
    """The earliest arrival among queued requests ``order[a:b]`` (``a < b``)."""
    out = times[order[a]]
    for r in range(a + 1, b):
        if times[order[r]] < out:
            out = times[order[r]]
    return out


@kernel(inline=True)
def inherit(k, slots, nb_max, active, own, deadline, times, order, moff, pa, ph, rel, alone):
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


@kernel(inline=True)
def next_time(k, nxt, n, times, order, moff, pa, ph, nb_max, window, now):
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


@kernel(inline=True)
def finish_batch(t, ce, lo, hi, order, times, rel, finish, batch_of):
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
