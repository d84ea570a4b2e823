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

import numpy as np

from npuweave.schedule.jit import kernel as _jit
from npuweave.schedule.jit import loaded


@_jit
def _parts(t, i, off, sizes, fs, fe, ce, buf, bw, n, fl_s, fl_c, o_j, o_s, o_e, o_b):
    """Fill ``o_*`` with the parts of decisions ``0..n-1`` (decision ``j``: unit ``i[j]`` of
    tenant ``t[j]``, of ``sizes[off[t[j]] + i[j]]`` bytes): the decision, start, end and,
    where ``o_b`` is not empty, bytes of each; return ``(parts, ok)`` where ``ok`` says every
    fetch's last part ended at its predicted fetch end. ``fl_s``, ``fl_c`` hold the
    in-flight list (room for ``n`` entries; it restarts at 0 whenever it empties, so it
    stays in a few cache lines where units rarely wait). Arrays when compiled; lists
    otherwise (plain Python indexes lists several times faster than arrays)."""
    head = 0
    tail = 0
    used = 0
    m = 0
    ok = True
    keep = len(o_b) > 0
    for j in range(n):
        sz = sizes[off[t[j]] + i[j]]
        if sz > 0:
            free = buf - used
            start = fs[j]
            if sz <= free:
                end = start + sz / bw
                o_j[m], o_s[m], o_e[m] = j, start, end
                if keep:
                    o_b[m] = sz
                m += 1
            else:
                if free > 0:
                    end = start + free / bw
                    o_j[m], o_s[m], o_e[m] = j, start, end
                    if keep:
                        o_b[m] = free
                    m += 1
                    start = end
                need = sz - free
                k = head
                end = np.inf
                while k < tail:
                    s = fl_s[k]
                    c = fl_c[k]
                    if start < c:
                        start = c
                    part = need if need <= s else s
                    end = start + part / bw
                    o_j[m], o_s[m], o_e[m] = j, start, end
                    if keep:
                        o_b[m] = part
                    m += 1
                    if need <= s:
                        break
                    need -= s
                    start = end
                    k += 1
            if end != fe[j]:
                ok = False
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
    return m, ok


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
    parts = replay_parts(np.zeros(n, np.int64), np.arange(n), np.array([0, n]), size, fs, fe,
                         ce, buf, bw, with_bytes=True)
    if parts is None:
        return None
    return parts[0], parts[1], parts[2], parts[3]


def replay_parts(t: np.ndarray, i: np.ndarray, off: np.ndarray, sizes: np.ndarray,
                 fs: np.ndarray, fe: np.ndarray, ce: np.ndarray, buf: int, bw: float,
                 with_bytes: bool = False) -> tuple[np.ndarray, ...] | None:
    """``fetch_parts`` of decisions given as ``(tenant, unit)`` (``sizes``: every tenant's
    units concatenated, tenant ``k``'s from ``off[k]``); returns ``(decision, start_s,
    end_s)`` per part, and its bytes too ``with_bytes``, or None as ``fetch_parts`` does.
    The decision column is int32 where it fits: the part columns are what a closed-loop
    result keeps, and fresh pages cost more than writing them (issue 23)."""
    n = int(t.shape[0])
    cap = 2 * n + 1  # a fetch's first part, plus one per in-flight entry (each used once)
    sizes = sizes.astype(np.int64, copy=False)
    nb = cap if with_bytes else 0
    out: tuple[np.ndarray, ...]
    if loaded():
        out = (np.empty(cap, np.int32 if cap < 2**31 else np.int64), np.empty(cap),
               np.empty(cap), np.empty(nb, np.int64))
        m, ok = _parts(t, i, off, sizes, fs, fe, ce, int(buf), float(bw), n,
                       np.empty(n + 1, np.int64), np.empty(n + 1, np.float64), *out)
    else:
        lists = ([0] * cap, [0.0] * cap, [0.0] * cap, [0] * nb)
        m, ok = _parts(*(a.tolist() for a in (t, i, off, sizes, fs, fe, ce)), int(buf),
                       float(bw), n, [0] * (n + 1), [0.0] * (n + 1), *lists)
        out = (np.array(lists[0][:m], np.int32 if cap < 2**31 else np.int64),
               *(np.array(x[:m], np.float64) for x in lists[1:3]),
               np.array(lists[3][:m], np.int64))
    if not ok:
        return None
    return (out[0][:m], out[1][:m], out[2][:m], *((out[3][:m],) if with_bytes else ()))
