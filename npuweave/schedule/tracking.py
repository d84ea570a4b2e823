"""What the closed-loop kernel records besides its decisions, in the same pass: DMA parts and totals.

The closed-loop fast path (``npuweave.sim.fastloop``) needs, besides the decisions, the DMA
parts of every fetch (the engine's DRAM intervals) and the run's totals: busy seconds per
resource and, per request, its busy seconds added in interval order, earliest start, latest
end, first compute start and finish (``npuweave.sim.intervals.RunWork``). Replaying the
parts and walking the two runs afterwards took two more passes over about 70,000 rows;
``run_kernel`` with ``tracked`` calls ``note`` after each decision instead, on the parts
``npuweave.schedule.fetchparts.parts_of`` walked from the in-flight list before the commit.

Interval order is by start, DRAM first at the same start (``npuweave.sim.intervals``). A
request's DMA parts and its computations each come in that order, so its total is their
merge: each computation waits in a queue of its tenant until a later part of the same request
starts after it, or the request's last unit is dispatched. The float operations are the
walk's, in the walk's order: the totals equal it bit for bit
(``tests/sim/test_closed_columns.py``, which also checks the runs' order, ``note``'s premise).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from npuweave.schedule import jit


class Track(NamedTuple):
    """What ``run_kernel`` records with ``tracked``, besides the decisions: the DMA parts
    (``p_j``: decision; ``p_s``, ``p_e``: start, end), one row per request whose last unit was
    dispatched (``r_i``: tenant, request; ``r_f``: first compute start, finish, busy seconds
    in interval order, earliest start, latest end), and its working state: per tenant the
    request in progress (``acc``: total, earliest, latest, start) and its queued
    computations (``q``: start, end; tenant ``t``'s between ``qh[t]`` and ``qt[t]``, within
    its units' ``off`` range), ``w_i`` = ``[parts, request rows, fetch ends all as
    predicted]``, ``w_f`` = ``[PE busy, DRAM busy]``."""

    p_j: np.ndarray
    p_s: np.ndarray
    p_e: np.ndarray
    r_i: np.ndarray
    r_f: np.ndarray
    acc: np.ndarray
    q: np.ndarray
    qh: np.ndarray
    qt: np.ndarray
    w_i: np.ndarray
    w_f: np.ndarray


def track(k: int, units: int, cap: int, requests: int) -> Track:
    """Empty ``Track`` outputs for ``k`` tenants of ``units`` units in all, about ``cap``
    decisions and ``requests`` requests (``resume`` grows them; 0 and 0: the smallest, for
    a run without it). Written pages are what a run pays for (fresh memory faults on first
    touch), so nothing is kept that the fast path can recompute."""
    parts = 2 * cap + 16 if cap else 0
    rows = requests + 16 if cap else 0
    return Track(np.empty(parts, np.int64), np.empty(parts), np.empty(parts),
                 np.empty((2, rows), np.int64), np.empty((5, rows)), np.zeros((k, 4)),
                 np.zeros((2, units)), np.zeros(k, np.int64), np.zeros(k, np.int64),
                 np.array([0, 0, 1], np.int64), np.zeros(2))


@jit.kernel(inline=True)
def track_room(tr, m, head, tail):
    """Whether the tracked outputs (``Track``, ``m`` parts written) have room for one more
    decision: its parts (at most one per in-flight unit, plus the free space) and a
    finished request."""
    return m + tail - head + 2 <= len(tr.p_j) and tr.w_i[1] < len(tr.r_i[0])


@jit.kernel(inline=True)
def flush(tr, t, s):
    """Add the queued computations of tenant ``t``'s request in progress that start before
    ``s`` to its total (``Track.q``, in order)."""
    acc, q, qh, qt = tr.acc, tr.q, tr.qh, tr.qt
    j = qh[t]
    while j < qt[t] and q[0, j] < s:
        acc[t, 0] += q[1, j] - q[0, j]
        j += 1
    qh[t] = j


@jit.kernel(inline=True)
def add_span(tr, t, s, e):
    """Add DMA span ``(s, e)`` to the total of tenant ``t``'s request in progress, after
    the queued computations of that request that start before ``s`` (the merge order of
    ``npuweave.sim.intervals``: by start, DRAM first at the same start)."""
    acc = tr.acc
    flush(tr, t, s)
    acc[t, 0] += e - s
    if s < acc[t, 1]:
        acc[t, 1] = s
    if e > acc[t, 2]:
        acc[t, 2] = e


@jit.kernel(inline=True)
def note(tr, t, n, m0, m1, last, off, o_int, o_float, busy_pe, busy_dram):
    """Decision ``n`` (of tenant ``t``, its DMA parts in rows ``m0:m1`` of ``tr.p_s``, ``tr.p_e``) into
    the run's totals: per request its spans added in interval order (computations wait in
    a queue per tenant until a later part of the same request starts after them), earliest
    start, latest end, first compute start; a request's last unit writes its row. Returns
    the busy seconds per resource, ``busy_pe`` and ``busy_dram`` with this decision's spans
    added in run order. ``m1 < 0``: the fetch could not end (``w_i[2]`` set to 0).

    Both runs come in (start, end) order, the merge's premise, by construction: a
    computation starts at ``max(t_c, fe)`` with ``t_c`` the previous compute end, and a
    fetch's parts start from the previous fetch end on, one after the other."""
    r, i = o_int[1, n], o_int[2, n]
    fe, cs, ce = o_float[1, n], o_float[2, n], o_float[3, n]
    acc = tr.acc
    if i == 0:
        acc[t, 0], acc[t, 1], acc[t, 2], acc[t, 3] = 0.0, np.inf, -np.inf, cs
        tr.qh[t], tr.qt[t] = off[t], off[t]
    if m1 < 0 or (m1 > m0 and tr.p_e[m1 - 1] != fe):
        tr.w_i[2] = 0  # the last part does not end at the predicted fetch end
        m1 = m0
    for p in range(m0, m1):
        s, e = tr.p_s[p], tr.p_e[p]
        busy_dram += e - s
        add_span(tr, t, s, e)
    busy_pe += ce - cs
    if cs < acc[t, 1]:
        acc[t, 1] = cs
    if ce > acc[t, 2]:
        acc[t, 2] = ce
    j = tr.qt[t]
    tr.q[0, j], tr.q[1, j] = cs, ce
    tr.qt[t] = j + 1
    if last:
        flush(tr, t, np.inf)
        k = tr.w_i[1]
        tr.r_i[0, k], tr.r_i[1, k] = t, r
        tr.r_f[0, k], tr.r_f[1, k], tr.r_f[2, k] = acc[t, 3], ce, acc[t, 0]
        tr.r_f[3, k], tr.r_f[4, k] = acc[t, 1], acc[t, 2]
        tr.w_i[1] = k + 1
    return busy_pe, busy_dram


def grown(tr: Track, live: int, wider: Callable[[np.ndarray], np.ndarray]) -> Track:
    """``tr`` with its parts and request rows made ``wider`` where ``track_room`` would
    stop (``live``: in-flight units now)."""
    if tr.w_i[0] + live + 2 > tr.p_j.shape[0]:
        tr = tr._replace(p_j=wider(tr.p_j), p_s=wider(tr.p_s), p_e=wider(tr.p_e))
    if tr.w_i[1] == tr.r_i.shape[1]:
        tr = tr._replace(r_i=wider(tr.r_i), r_f=wider(tr.r_f))
    return tr
