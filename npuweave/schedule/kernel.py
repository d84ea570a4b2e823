"""Layerweaver's compiled decisions: the scoring of a candidate, the pick, and the closed loop.

``plan("layerweaver", ...)`` spends about 3-4 us per decision in Python (the ``Board`` and
``Layerweaver.select`` reference); ``run_kernel`` runs the same loop, selection, commit and
closed-loop re-issue rule on flat arrays, compiled by numba when it is installed. The scoring
(``evaluate``, both readings of chapter IV), the starvation filter (``pool``) and the pick
(``pick_lw``) are written once here and called by every compiled loop (this closed loop and
the serving loop, ``npuweave.sim.lwloop``); the buffer arithmetic is ``npuweave.schedule.buffer``.
They perform the same float operations in the same order as ``Board.fetch_end``,
``Board.fetch_window``, ``Layerweaver.evaluate``/``select`` and ``Board.commit`` (no fastmath,
so no reassociation or fused multiply-add), hence the same decisions and bit-identical
predicted times; hypothesis tests compare them on random instances.

State layout: units of all tenants are concatenated (``off[t]:off[t + 1]`` is tenant ``t``);
the in-flight list is the slice ``head:tail`` of three arrays (``npuweave.schedule.buffer``).
Without numba the functions are plain Python (correct, but slower than the reference).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from npuweave.schedule import jit
from npuweave.schedule.base import EPS
from npuweave.schedule.board import concatenated
from npuweave.schedule.buffer import commit_in_place, fetch_end, fetch_window, in_flight, room
from npuweave.schedule.jit import borrow

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


@jit.kernel(inline=True)
def choose_lw(k, active, nact, pos, off, arrival, printed, failsafe, compute_kind, t_m, t_c,
              free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f, head, tail, bw, ev, ok,
              inh_now):
    """Layerweaver's choice among the active tenants (failsafe: first come first served)."""
    if nact == 1:
        for t in range(k):
            if active[t]:
                return t
    if failsafe:
        return fcfs(k, active, pos, arrival)
    evaluate_all(k, active, pos, off, printed, t_m, t_c, free, maxft, size, comp, ftime, inh,
                 fl_s, fl_c, fl_f, head, tail, bw, ev, inh_now)
    pool(k, active, nact, compute_kind, ev, ok)
    return pick_lw(k, ok, ev, inh_now, printed)


@jit.kernel
def scratch(k):
    """Per-candidate scratch of a decision for ``k`` tenants: ``ev`` (``evaluate``'s five
    terms), ``ok`` (``pool``) and the inherent idle of each next unit."""
    return np.zeros((k, 5), np.float64), np.zeros(k, np.bool_), np.zeros(k, np.float64)


def columns(cap: int, lists: bool = False) -> tuple:
    """Empty output columns for ``cap`` decisions: ``o_int`` (tenant, request, unit) and
    ``o_float`` (fs, fe, cs, ce), one row per column, one entry per decision; 2-D arrays, or
    for a loop run as plain Python (``as_lists``) lists of ``array.array`` columns: indexed
    from Python about as fast as lists, and read back by NumPy without a copy."""
    if lists:
        return ([array("q", bytes(8 * cap)) for _ in range(3)],
                [array("d", bytes(8 * cap)) for _ in range(4)])
    return np.empty((3, cap), np.int64), np.empty((4, cap), np.float64)


@jit.kernel(inline=True)
def has_room(n, o_int, fl_s, head, tail):
    """Whether decision ``n`` fits: a free output column and room in the in-flight list
    (``buffer.commit_in_place``'s condition)."""
    return n < len(o_int[0]) and (head > 0 or tail < len(fl_s))


@jit.kernel(inline=True)
def dispatch(t, n, o_int, o_float, fl_s, fl_c, fl_f, head, tail, used, t_m, t_c, free, off,
             size, comp, ftime, bw, pos, req, arrival, active, requests, window, has_window):
    """Decision ``n`` of a closed loop, written once for every compiled policy loop: commit
    tenant ``t``'s next unit (``buffer.commit_in_place``), write it to column ``n`` of the
    outputs (``columns``), then move the loop on: the tenant's next unit, else its next
    request issued at the compute end (``ClosedLoop.reissue``), else it leaves
    (``active[t] = False``). The caller checks ``has_room`` first; no array is rebound here
    (that would cost reference counting at every decision). Returns ``(head, tail, used,
    fe, ce)``: the in-flight bounds and the new ``t_m, t_c``."""
    i = pos[t]
    u = off[t] + i
    r = req[t]
    fe, ce, head, tail, used = commit_in_place(u, t_m, t_c, free, size, comp, ftime, fl_s,
                                               fl_c, fl_f, head, tail, used, bw)
    o_int[0][n], o_int[1][n], o_int[2][n] = t, r, i
    o_float[0][n], o_float[1][n] = t_m, fe
    o_float[2][n], o_float[3][n] = (t_c if t_c > fe else fe), ce
    if u + 1 < off[t + 1]:
        pos[t] = i + 1
    elif (ce < window) if has_window else (r + 1 < requests):  # ClosedLoop.reissue
        req[t], arrival[t], pos[t] = r + 1, ce, 0
    else:
        active[t] = False
    return head, tail, used, fe, ce


@jit.kernel
def run_kernel(k, off, size, comp, ftime, inh, compute_kind, mft, buf, bw, failsafe,
               active, pos, req, arrival, clock, fl_at, fl_s, fl_c, fl_f, requests, window,
               has_window, o_int, o_float, n, ev, ok, inh_now):
    """Run the board from decision ``n`` until it is done or its arrays are full
    (``has_room``); return the new ``n``. The state lives in the arrays passed in, updated
    in place (``clock`` = ``[t_m, t_c]``, ``fl_at`` = ``[head, tail, used]``, as
    ``flat_board`` makes them); ``resume`` grows what is full and calls again.

    One function for the whole loop (choice, then ``dispatch``) because a call per decision
    from Python would cost more than the decision itself. Every array is the caller's
    (``ev, ok, inh_now`` from ``scratch``) and borrowed (``jit.borrow``): the inlined steps
    then count no references per decision.
    """
    off, size, comp, ftime, inh, mft, fl_s, fl_c, fl_f = borrow(
        (off, size, comp, ftime, inh, mft, fl_s, fl_c, fl_f))
    compute_kind, active, pos, req, arrival, ok = borrow(
        (compute_kind, active, pos, req, arrival, ok))
    o_int, o_float, ev, inh_now = borrow((o_int, o_float, ev, inh_now))
    t_m, t_c = clock[0], clock[1]
    head, tail, used = fl_at[0], fl_at[1], fl_at[2]
    nact = 0
    maxft = 0.0
    for t in range(k):
        if active[t]:
            nact += 1
            maxft = max(maxft, mft[t])
    while nact > 0 and has_room(n, o_int, fl_s, head, tail):
        free = buf - used
        if failsafe and nact > 1:  # choose_lw's failsafe branch, without its ~25 arguments
            t = fcfs(k, active, pos, arrival)  # (a call as plain Python costs ~1 us)
        else:
            t = choose_lw(k, active, nact, pos, off, arrival, False, failsafe, compute_kind,
                          t_m, t_c, free, maxft, size, comp, ftime, inh, fl_s, fl_c, fl_f, head,
                          tail, bw, ev, ok, inh_now)
        head, tail, used, t_m, t_c = dispatch(t, n, o_int, o_float, fl_s, fl_c, fl_f, head,
                                              tail, used, t_m, t_c, free, off, size, comp,
                                              ftime, bw, pos, req, arrival, active, requests,
                                              window, has_window)
        n += 1
        if not active[t]:
            nact -= 1
            maxft = 0.0
            for v in range(k):
                if active[v]:
                    maxft = max(maxft, mft[v])
    clock[0], clock[1] = t_m, t_c
    fl_at[0], fl_at[1], fl_at[2] = head, tail, used
    return n


def run_board(board, failsafe: bool, requests: int | None, window_s: float | None,
              cap: int) -> tuple[tuple, ...]:
    """Run ``board`` (requests already issued) to the end with Layerweaver's rule, as
    ``plan`` would; return ``order, fetch starts, fetch ends, compute starts, compute ends``
    as tuples. ``cap`` is the expected number of decisions (the arrays grow past it)."""
    out = run_board_arrays(board, failsafe, requests, window_s, cap)
    order = tuple(zip(out[0].tolist(), out[1].tolist(), out[2].tolist()))
    return (order, *(tuple(a.tolist()) for a in out[3:]))


def run_board_arrays(board, failsafe: bool, requests: int | None, window_s: float | None,
                     cap: int, plain: bool = False) -> tuple[np.ndarray, ...]:
    """``run_board`` as arrays: ``tenant, request, unit, fs, fe, cs, ce`` (one row per
    decision). Without numba (or with ``plain``) the same loop runs as plain Python on lists
    (``as_lists``)."""
    compiled = jit.compile() and not plain
    b = board
    flat = flat_board(b, cap)
    inh, kinds, mft = _static(b)[4:]
    work = scratch(flat.k)
    run = run_kernel if compiled else jit.python(f"{__name__}.run_kernel")
    if not compiled:
        flat, (inh, kinds, mft), work = as_lists(flat), as_lists((inh, kinds, mft)), as_lists(work)
    tables = (flat.k, flat.off, flat.size, flat.comp, flat.ftime, inh, kinds, mft, b.buf, b.bw,
              bool(failsafe), flat.active, flat.pos, flat.req, flat.arrival, flat.clock,
              flat.fl_at)
    loop = loop_end(requests, window_s)
    return resume(lambda fl, o_int, o_float, n: run(*tables, *fl, *loop, o_int, o_float, n,
                                                    *work), flat, cap)


def as_lists(arrays):
    """``arrays`` (a tuple, or a ``FlatBoard``) with every NumPy array as a (nested) list: the
    compiled loops run as plain Python on lists when numba is missing, because indexing a
    NumPy array from Python (a scalar object per read) costs more than the loop's own work."""
    if isinstance(arrays, FlatBoard):
        return FlatBoard(*as_lists(arrays[:-1]), as_lists(arrays.fl))
    return tuple(a.tolist() if isinstance(a, np.ndarray) else a for a in arrays)


class FlatBoard(NamedTuple):
    """A ``Board``'s state as the compiled loops keep it: units of all tenants concatenated
    (``off``), the in-flight list ``fl`` (``npuweave.schedule.buffer``), ``clock`` =
    ``[t_m, t_c]`` and ``fl_at`` = ``[head, tail, used]``."""

    k: int
    off: np.ndarray
    size: np.ndarray
    comp: np.ndarray
    ftime: np.ndarray
    active: np.ndarray
    pos: np.ndarray
    req: np.ndarray
    arrival: np.ndarray
    clock: np.ndarray
    fl_at: np.ndarray
    fl: tuple[np.ndarray, np.ndarray, np.ndarray]


def flat_board(b, cap: int) -> FlatBoard:
    """``b`` (a ``Board``) flattened for a run of about ``cap`` decisions (the in-flight
    arrays sized by ``buffer.room``)."""
    k = len(b.tenants)
    off, size, comp, ftime = _static(b)[:4]
    fl = b.in_flight()
    fl_s, fl_c, fl_f = in_flight(len(fl) + room(b.buf, size, max(cap, 1)))
    fl_s[:len(fl)] = [s for s, _ in fl]
    fl_c[:len(fl)] = [c for _, c in fl]
    fl_f[:len(fl)] = [s / b.bw for s, _ in fl]
    active = np.zeros(k, np.bool_)
    active[b.active] = True
    clock = np.array([b.t_m, b.t_c], np.float64)
    fl_at = np.array([0, len(fl), b.used], np.int64)
    return FlatBoard(k, off, size, comp, ftime, active,
                     np.array(b.pos, np.int64), np.array(b.req, np.int64),
                     np.array(b.arrival, np.float64), clock, fl_at,
                     (fl_s, fl_c, fl_f))


def _static(b) -> tuple[np.ndarray, ...]:
    """``off, size, comp, ftime, inh, compute kind, mft`` of board ``b`` as arrays: its
    tenant set's shared ``Tables.flat`` while no tenant's list was replaced (the loops only
    read them), else built from its lists."""
    return b.tables.flat() if b.tables.same(b) else concatenated(b)


def loop_end(requests: int | None, window_s: float | None) -> tuple[int, float, bool]:
    """The closed loop's end as ``dispatch`` reads it: ``requests, window, has_window``."""
    return (-1 if requests is None else int(requests),
            0.0 if window_s is None else float(window_s), window_s is not None)


def resume(run: Callable[..., int], flat: FlatBoard, cap: int) -> tuple[np.ndarray, ...]:
    """Call ``run(fl, o_int, o_float, n)`` (a compiled loop from decision ``n``) until the
    board is done, growing the outputs or the in-flight arrays whenever the loop stops on
    them (``has_room``); return ``tenant, request, unit, fs, fe, cs, ce``. A board of lists
    (``as_lists``) gets list columns."""
    o_int, o_float = columns(max(cap, 1), isinstance(flat.active, list))
    fl = flat.fl
    n = 0
    while True:
        n = run(fl, o_int, o_float, n)
        if not any(flat.active):
            break
        if n == len(o_int[0]):  # the decision count was underestimated (time windows)
            o_int, o_float = _wider(o_int), _wider(o_float)
        if flat.fl_at[0] == 0 and flat.fl_at[1] == len(fl[0]):
            fl = tuple(_wider(a) for a in fl)
    return (*(_column(c, n, np.int64) for c in o_int),
            *(_column(c, n, np.float64) for c in o_float))


def _column(c, n: int, dtype: type) -> np.ndarray:
    """The first ``n`` entries of an output column (an array, or ``array.array``: no copy)."""
    return np.frombuffer(c, dtype)[:n] if isinstance(c, array) else np.asarray(c[:n], dtype)


def _wider(a):
    """``a`` (an array, a list or ``array.array``, or a list of those: columns) with every
    column twice as long (the new entries uninitialised in arrays, zero otherwise)."""
    if isinstance(a, np.ndarray):
        out = np.empty((*a.shape[:-1], 2 * a.shape[-1] + 16), a.dtype)
        out[..., :a.shape[-1]] = a
        return out
    if isinstance(a, array):
        return a + array(a.typecode, bytes(a.itemsize * (len(a) + 16)))
    if isinstance(a[0], (list, array)):
        return [_wider(c) for c in a]
    return a + [a[0] * 0] * (len(a) + 16)
