"""The weight buffer model on flat arrays: fetch end, fetch window and commit, written once.

The ``Board`` (``npuweave.schedule.board``) keeps the thesis's schedule state for the Python
policies; every compiled loop (the closed-loop Layerweaver kernel, the serving loop, the
standalone replay table) keeps the same state as scalars plus the in-flight list as three
arrays, ``fl_s`` (bytes), ``fl_c`` (completion time), ``fl_f`` (bytes / bandwidth, stored when
the unit entered), live between ``head`` and ``tail``. These functions are that state's
arithmetic, with the same float operations in the same order as ``Board.fetch_end``,
``Board.fetch_window`` and ``Board.commit`` (no fastmath), so every loop's decisions and times
equal the reference's bit for bit (property tests in ``tests/schedule`` and ``tests/lwplus``).
They are plain Python until ``npuweave.schedule.jit.compile`` jits them.
"""

from __future__ import annotations

import numpy as np

from npuweave.schedule.jit import kernel


@kernel
def fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, size, bw):
    """``Board.fetch_end`` for a fetch of ``size`` bytes that does not fit the ``free`` bytes."""
    t = t_m + free / bw
    need = size - free
    for j in range(head, tail):
        s = fl_s[j]
        c = fl_c[j]
        if t < c:
            t = c
        if need <= s:
            return t + need / bw
        need -= s
        t += fl_f[j]  # = s / bw, stored when the unit entered the list
    return np.inf  # unreachable for units that fit the buffer (tiling guarantees it)


@kernel
def fetch_window(fl_s, fl_c, fl_f, head, tail, free, bw, t0, t1):
    """``Board.fetch_window`` with ``free = BufSize - used - size`` precomputed."""
    j = head
    while j < tail and fl_c[j] <= t0:
        free += fl_s[j]
        j += 1
    t = t0
    got = 0.0
    if free > 0:
        if t + free / bw >= t1:
            return (t1 - t) * bw
        t += free / bw
        got = float(free)
    # the hottest loop of the greedy rule: a ``for`` and each entry read once (the loop runs
    # as plain Python without numba)
    for k in range(j, tail):
        c = fl_c[k]
        if c >= t1:
            break
        if t < c:
            t = c
        f = fl_f[k]
        if t + f >= t1:
            return got + (t1 - t) * bw
        t += f
        got += fl_s[k]
    return got


@kernel
def in_flight(cap):
    """An empty in-flight list with room for ``cap`` units: ``fl_s, fl_c, fl_f``."""
    return np.zeros(cap, np.int64), np.zeros(cap, np.float64), np.zeros(cap, np.float64)


@kernel(inline=True)
def commit_in_place(u, t_m, t_c, free, size, comp, ftime, fl_s, fl_c, fl_f, head, tail, used,
                    bw):
    """``Board.commit`` of unit ``u`` (``free`` bytes free) on in-flight arrays with room,
    ``tail < len(fl_s)`` or ``head > 0``: fetch, compute at ``max(t_c, fetch end)``, drop the
    in-flight units done by the fetch end (the live part slides down when the end is
    reached) and append this one. Returns ``(fe, ce, head, tail, used)``; the compute start
    is ``max(t_c, fe)`` of the ``t_c`` passed in.

    No array is grown or rebound here: rebinding arrays in a numba loop costs reference
    counting at every decision (about a third of the closed-loop kernel's time). The loops
    size the arrays with ``room``, and the closed loops stop when they are full and resume
    after the caller has grown them (``npuweave.schedule.kernel.resume``)."""
    sz = size[u]
    if sz == 0:
        fe = t_m
    elif sz <= free:
        fe = t_m + ftime[u]
    else:
        fe = fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, sz, bw)
    ce = (t_c if t_c > fe else fe) + comp[u]
    while head < tail and fl_c[head] <= fe:
        used -= fl_s[head]
        head += 1
    if tail == len(fl_s):  # slide the live part down
        fl_s[:tail - head] = fl_s[head:tail]
        fl_c[:tail - head] = fl_c[head:tail]
        fl_f[:tail - head] = fl_f[head:tail]
        tail -= head
        head = 0
    if sz > 0 and ce > fe:
        fl_s[tail] = sz
        fl_c[tail] = ce
        fl_f[tail] = ftime[u]
        tail += 1
        used += sz
    return fe, ce, head, tail, used


def room(buffer_bytes: int, size: np.ndarray, decisions: int) -> int:
    """An in-flight capacity that ``commit_in_place`` never outgrows: the list holds units
    whose bytes fit the buffer together (at most ``buffer // smallest unit`` of them), and
    at most one per decision.

    Examples
    --------
    >>> room(100, np.array([0, 30, 50]), 10**6)   # three 30-byte units fit 100 bytes
    5
    """
    pos = size[size > 0]
    most = int(buffer_bytes // int(pos.min())) if pos.size else 0
    return min(most, int(decisions)) + 2
