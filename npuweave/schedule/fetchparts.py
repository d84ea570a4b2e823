"""The DMA parts of a planned schedule: ScheduleMemFetch (Figure IV.5) replayed part by part.

A weight fetch that does not fit the free space of the buffer moves in parts: first the free
space, then one part per in-flight unit as its computation ends and frees its weights, in the
order they complete. ``Board.fetch_end`` walks those parts to predict when the fetch ends; the
NPU engine (``npuweave.sim.engine``) moves them, one DRAM busy interval per part. ``fetch_parts``
replays a finished schedule's in-flight list (the ``Board``'s ``used`` and ``(bytes,
completion)`` list) and returns every part with the float operations of both, so the closed-loop
fast path (``npuweave.sim.fastloop``) can build the engine's DRAM intervals without the engine.
Like ``npuweave.schedule.kernel`` it is compiled by numba when the kernels are loaded and
plain Python otherwise.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from npuweave.schedule.jit import borrow, loaded
from npuweave.schedule.jit import kernel as _jit
from npuweave.schedule.reach import fold_span, note_ends, note_slot


@_jit
def _parts(t, i, off, sizes, fs, fe, ce, buf, bw, n, fl_s, fl_c, o_j, o_s, o_e, o_b, r, cs,
           span, worked, lo, hi, last, start_s, finish_s):
    """Fill ``o_*`` with the parts of decisions ``0..n-1`` (decision ``j``: unit ``i[j]`` of
    tenant ``t[j]``, of ``sizes[off[t[j]] + i[j]]`` bytes): the decision, start, end and,
    where ``o_b`` is not empty, bytes of each. ``fl_s``, ``fl_c`` hold the in-flight list
    (room for ``n`` entries; it restarts at 0 whenever it empties, so it stays in a few cache
    lines where units rarely wait). Where ``worked`` is not empty, also fold the PE run
    (decision ``j`` computes ``cs[j]`` to ``ce[j]`` for request ``r[j]``) and the parts into
    each request slot's reach (``npuweave.schedule.reach``: slot ``t * span + r``;
    ``worked``, ``lo``, ``hi``, and ``start_s``, ``finish_s`` from each tenant's ``last``
    unit), as ``npuweave.sim.runwork`` would from the finished runs. Returns ``(parts, ok,
    PE busy seconds, DRAM busy seconds, both runs in (start, end) order, no span of negative
    or NaN length)`` where ``ok`` says every fetch's last part ended at its predicted fetch
    end. Arrays when compiled (the caller's, borrowed: ``jit.borrow``, for the inlined
    steps); lists otherwise (plain Python indexes lists several times faster than arrays)."""
    worked, lo, hi, last, start_s, finish_s = borrow((worked, lo, hi, last, start_s, finish_s))
    head = 0
    tail = 0
    used = 0
    m = 0
    ok = True
    keep = len(o_b) > 0
    fold = len(worked) > 0
    busy_pe = 0.0
    busy_dram = 0.0
    pe_order = True
    dram_order = True
    exact = True
    p_s0 = -np.inf
    p_e0 = -np.inf
    d_s0 = -np.inf
    d_e0 = -np.inf
    k = -1
    any_work = False
    first = np.inf
    reach = -np.inf
    for j in range(n):
        if fold:
            slot = t[j] * span + r[j]
            if slot != k:
                note_slot(k, any_work, first, reach, worked, lo, hi)
                k, any_work, first, reach = slot, False, np.inf, -np.inf
        sz = sizes[off[t[j]] + i[j]]
        if sz > 0:
            # the parts in order: the free space first (q = head - 1), then the space of each
            # in-flight unit as it completes
            start = fs[j]
            need = sz
            end = np.inf
            q = head - 1
            while q < tail:
                if q < head:
                    s = buf - used
                else:
                    s = fl_s[q]
                    c = fl_c[q]
                    if start < c:
                        start = c
                if s > 0:
                    part = need if need <= s else s
                    end = start + part / bw
                    o_j[m], o_s[m], o_e[m] = j, start, end
                    if keep:
                        o_b[m] = part
                    m += 1
                    if fold:
                        busy_dram, any_work, exact, first, reach, dram_order, d_s0, d_e0 = \
                            fold_span(start, end, busy_dram, any_work, exact, first, reach,
                                      dram_order, d_s0, d_e0)
                    if need <= s:
                        break
                    need -= s
                    start = end
                    if q < head:
                        end = np.inf  # the rest waits for in-flight units (none: never ends)
                q += 1
            if end != fe[j]:
                ok = False
        if fold:
            busy_pe, any_work, exact, first, reach, pe_order, p_s0, p_e0 = fold_span(
                cs[j], ce[j], busy_pe, any_work, exact, first, reach, pe_order, p_s0, p_e0)
            note_ends(i[j], last[t[j]], k, cs[j], ce[j], start_s, finish_s)
        while head < tail and fl_c[head] <= fe[j]:
            used -= fl_s[head]
            head += 1
        if head == tail:
            head = 0
            tail = 0
        if sz > 0 and ce[j] > fe[j]:
            fl_s[tail] = sz
            fl_c[tail] = ce[j]
            tail += 1
            used += sz
    if fold:
        note_slot(k, any_work, first, reach, worked, lo, hi)
    return m, ok, busy_pe, busy_dram, pe_order and dram_order, exact


def fetch_parts(size: np.ndarray, fs: np.ndarray, fe: np.ndarray, ce: np.ndarray, buf: int,
                bw: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """DRAM parts of a schedule, one row per part in the order the DMA moves them.

    ``size``, ``fs``, ``fe``, ``ce`` are per decision (weight bytes of the unit, fetch start,
    fetch end, compute end), in dispatch order. Returns ``(decision, start_s, end_s, bytes)``
    arrays, or None when a replayed fetch does not end at its predicted ``fe`` (the schedule
    was not made by the ``Board`` with this buffer and bandwidth). Compiled once the kernels
    are loaded (``npuweave.schedule.kernel.loaded()``).

    Examples
    --------
    >>> import numpy as np
    >>> # 10-byte buffer at 10 B/s: unit 0 (10 B) fetches 0-1 s and computes 1-3 s; unit 1
    >>> # (5 B) waits for its space until unit 0 frees it at 3 s, then fetches 3-3.5 s
    >>> j, s, e, b = fetch_parts(np.array([10, 5]), np.array([0.0, 1.0]),
    ...                          np.array([1.0, 3.5]), np.array([3.0, 4.5]), 10, 10.0)
    >>> j.tolist(), s.tolist(), e.tolist(), b.tolist()
    ([0, 1], [0.0, 3.0], [1.0, 3.5], [10, 5])
    """
    n = int(size.shape[0])
    replay = replay_parts(np.zeros(n, np.int64), np.arange(n), np.array([0, n]), size, fs, fe,
                          ce, buf, bw, with_bytes=True)
    if replay is None:
        return None
    parts = replay.parts
    return parts[0], parts[1], parts[2], parts[3]


class Replay(NamedTuple):
    """What ``replay_parts`` returns: the parts ``(decision, start_s, end_s)`` (and their
    bytes), and, where it folded the runs' reach, ``(PE busy seconds, DRAM busy seconds,
    both runs in (start, end) order, no span of negative or NaN length)`` (else None)."""

    parts: tuple[np.ndarray, ...]
    folded: tuple[float, float, bool, bool] | None


def replay_parts(t: np.ndarray, i: np.ndarray, off: np.ndarray, sizes: np.ndarray,
                 fs: np.ndarray, fe: np.ndarray, ce: np.ndarray, buf: int, bw: float,
                 with_bytes: bool = False, fold: tuple | None = None) -> Replay | None:
    """``fetch_parts`` of decisions given as ``(tenant, unit)`` (``sizes``: every tenant's
    units concatenated, tenant ``k``'s from ``off[k]``): ``(decision, start_s, end_s)`` per
    part, and its bytes too ``with_bytes``, or None as ``fetch_parts`` does. The decision
    column is int32 where it fits: the part columns are what a closed-loop result keeps, and
    fresh pages cost more than writing them (issue 23).

    ``fold``: ``(r, cs, span, worked, lo, hi, last, start_s, finish_s)`` (see ``_parts``):
    where the kernels are compiled, the PE run and the parts are folded into those arrays in
    the same pass (``Replay.folded`` says so); otherwise they are left alone."""
    n = int(t.shape[0])
    cap = 2 * n + 1  # a fetch's first part, plus one per in-flight entry (each used once)
    sizes = sizes.astype(np.int64, copy=False)
    nb = cap if with_bytes else 0
    out: tuple[np.ndarray, ...]
    if loaded():
        out = (np.empty(cap, np.int32 if cap < 2**31 else np.int64), np.empty(cap),
               np.empty(cap), np.empty(nb, np.int64))
        m, ok, *folded = _parts(t, i, off, sizes, fs, fe, ce, int(buf), float(bw), n,
                                np.empty(n + 1, np.int64), np.empty(n + 1, np.float64), *out,
                                *(fold or _NO_FOLD))
    else:
        fold = None
        lists = ([0] * cap, [0.0] * cap, [0.0] * cap, [0] * nb)
        m, ok, *folded = _parts(*(a.tolist() for a in (t, i, off, sizes, fs, fe, ce)),
                                int(buf), float(bw), n, [0] * (n + 1), [0.0] * (n + 1), *lists,
                                *_NO_FOLD)
        out = (np.array(lists[0][:m], np.int32 if cap < 2**31 else np.int64),
               *(np.array(x[:m], np.float64) for x in lists[1:3]),
               np.array(lists[3][:m], np.int64))
    if not ok:
        return None
    parts = (out[0][:m], out[1][:m], out[2][:m], *((out[3][:m],) if with_bytes else ()))
    return Replay(parts, tuple(folded) if fold is not None else None)


#: ``_parts``' fold arguments when it folds nothing (an empty ``worked``)
_NO_FOLD = (np.zeros(0, np.int64), np.zeros(0), 0, np.zeros(0, np.bool_), np.zeros(0),
            np.zeros(0), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
