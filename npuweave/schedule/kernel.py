"""Layerweaver's ``plan`` loop as one compiled kernel on flat numpy arrays (the fast path).

``plan("layerweaver", ...)`` spends about 3-4 us per decision in Python (the ``Board`` and
``Layerweaver.select`` reference); this kernel runs the same loop, selection, commit and
closed-loop re-issue rule with numba, at well under 1 us per decision. It performs the same
float operations in the same order as ``Board.fetch_end``, ``Board.fetch_window``,
``Layerweaver.select`` and ``Board.commit`` (no fastmath, so no reassociation or fused
multiply-add), hence the same decisions and bit-identical predicted times; a hypothesis test
compares the two on random instances.

State layout: units of all tenants are concatenated (``off[t]:off[t + 1]`` is tenant ``t``);
the in-flight list is the slice ``head:tail`` of two arrays that grow with the output. Without
numba the functions below are plain Python (correct, but slower than the reference).
"""

from __future__ import annotations

import importlib.util

import numpy as np

EPS = 1e-12  # same as npuweave.schedule.base.EPS (copied: the kernel reads globals as constants)

# numba is the optional ``fast`` extra (pip install 'npuweave[fast]'). It is imported lazily, on
# the first kernel run, never at import time: importing numba costs about a second and 200 MB of
# install, and a broken numba must not break npuweave. The functions below are plain Python
# until then; ``_compile`` swaps in jitted versions under the same global names, so the jitted
# callers find jitted callees when numba resolves their globals.
# Other modules' kernels (``npuweave.schedule.fetchparts``) register with ``_jit`` too; each
# function is swapped in its own module's globals.
_PLAIN: dict[str, object] = {}
_COMPILED: list[bool] = []  # empty: not tried yet; [True] or [False] afterwards


def _jit(fn):
    _PLAIN[f"{fn.__module__}.{fn.__name__}"] = fn
    if _COMPILED == [True]:  # a module imported after the kernels were compiled
        from numba import njit

        return njit(cache=True)(fn)
    return fn


def _compile() -> bool:
    """Jit every kernel function with numba if it imports; False (plain Python) otherwise."""
    if not _COMPILED:
        try:
            from numba import njit
        except Exception:  # ImportError, or a numba that fails against this NumPy
            _COMPILED.append(False)
        else:
            for fn in _PLAIN.values():
                fn.__globals__[fn.__name__] = njit(cache=True)(fn)  # type: ignore
            _COMPILED.append(True)
    return _COMPILED[0]


def load() -> bool:
    """Compile (or load from numba's cache) every kernel now; False when numba is missing.

    ``plan`` and the closed-loop fast path do this themselves for runs long enough to repay it
    (``npuweave.schedule.plan.kernels_pay``); a long-lived process (a notebook, a benchmark)
    may call it once up front so that shorter runs use the kernels too.
    """
    return _compile()


def loaded() -> bool:
    """Whether this process has already swapped in the compiled kernels (numba imported)."""
    return _COMPILED == [True]


@_jit
def _fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, size, bw):
    """``Board.fetch_end`` for a fetch that does not fit in the free space."""
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


@_jit
def _fetch_window(fl_s, fl_c, fl_f, head, tail, free, bw, t0, t1):
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
    while j < tail:
        s = fl_s[j]
        c = fl_c[j]
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


@_jit
def _select(k, active, pos, off, size, comp, ftime, inh, compute_kind, maxft, t_m, t_c, free,
            fl_s, fl_c, fl_f, head, tail, bw, ev_tot, ev_dd, ev_fe, ev_ok):
    """``Layerweaver.select`` (starvation filter, least total, both tie-breaks)."""
    all_ci = True
    all_mem = True
    for t in range(k):
        if not active[t]:
            continue
        u = off[t] + pos[t]
        sz = size[u]
        if sz <= free:
            fe = t_m + ftime[u]
        else:
            fe = _fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, sz, bw)
        ev_fe[t] = fe
        ce = (t_c if t_c > fe else fe) + comp[u]
        h = inh[u]
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
        ev_tot[t] = ci + charged + (pi if pi > 0.0 else 0.0)
        ev_dd[t] = ce - fe
        if ci <= EPS:
            all_ci = False
        if mem <= EPS:
            all_mem = False
    return _pick(k, active, pos, off, inh, compute_kind, all_ci, all_mem, ev_tot, ev_dd, ev_ok)


@_jit
def _pick(k, active, pos, off, inh, compute_kind, all_ci, all_mem, ev_tot, ev_dd, ev_ok):
    """The pool after starvation prevention, then ``_pick`` of ``layerweaver.py``."""
    n_ok = 0
    for t in range(k):
        ok = active[t]
        if ok and all_ci:
            ok = compute_kind[t]
        elif ok and all_mem:
            ok = not compute_kind[t]
        ev_ok[t] = ok
        n_ok += ok
    if n_ok == 0:  # no candidate of the wanted kind: the whole group
        for t in range(k):
            ev_ok[t] = active[t]
    best = np.inf
    for t in range(k):
        if ev_ok[t] and ev_tot[t] < best:
            best = ev_tot[t]
    pick = -1
    pick_h = True
    pick_nd = 0.0
    for t in range(k):
        if not ev_ok[t] or not ev_tot[t] <= best + EPS:
            continue
        h = inh[off[t] + pos[t]] > 0.0
        nd = -ev_dd[t]
        if pick < 0 or (h < pick_h) or (h == pick_h and nd < pick_nd):
            pick, pick_h, pick_nd = t, h, nd
    return pick


@_jit
def _fcfs(k, active, pos, arrival):
    """``sequential.fcfs_tenant``: the request in progress, else the earliest issued."""
    for t in range(k):
        if active[t] and pos[t] > 0:
            return t
    pick = -1
    for t in range(k):
        if active[t] and (pick < 0 or arrival[t] < arrival[pick]):
            pick = t
    return pick


@_jit
def _grow(a, n):
    out = np.empty(2 * n + 16, a.dtype)
    out[:n] = a[:n]
    return out


@_jit
def run_kernel(k, off, size, comp, ftime, inh, compute_kind, mft, buf, bw, failsafe,
               active, pos, req, arrival, t_m, t_c, fl_s, fl_c, fl_f, head, tail, used,
               requests, window, has_window, cap):
    """Run the board to the end; return ``(n, tenant, request, unit, fs, fe, cs, ce)``.

    One function for the whole loop (select, commit, re-issue) because a call per decision
    from Python would cost more than the decision itself.
    """
    o_t = np.empty(cap, np.int64)
    o_r = np.empty(cap, np.int64)
    o_i = np.empty(cap, np.int64)
    o_fs = np.empty(cap, np.float64)
    o_fe = np.empty(cap, np.float64)
    o_cs = np.empty(cap, np.float64)
    o_ce = np.empty(cap, np.float64)
    ev_tot = np.empty(k, np.float64)
    ev_dd = np.empty(k, np.float64)
    ev_fe = np.empty(k, np.float64)
    ev_ok = np.empty(k, np.bool_)
    nact = 0
    maxft = 0.0
    for t in range(k):
        if active[t]:
            nact += 1
            maxft = max(maxft, mft[t])
    n = 0
    while nact > 0:
        free = buf - used
        chose = False  # whether ev_fe holds the fetch ends of this state
        if nact == 1:
            t = 0
            while not active[t]:
                t += 1
        elif failsafe:
            t = _fcfs(k, active, pos, arrival)
        else:
            t = _select(k, active, pos, off, size, comp, ftime, inh, compute_kind, maxft, t_m,
                        t_c, free, fl_s, fl_c, fl_f, head, tail, bw, ev_tot, ev_dd, ev_fe,
                        ev_ok)
            chose = True
        # -- Board.commit --
        i = pos[t]
        u = off[t] + i
        sz = size[u]
        fs = t_m
        if sz == 0:
            fe = fs
        elif chose:
            fe = ev_fe[t]
        elif sz <= free:
            fe = t_m + ftime[u]
        else:
            fe = _fetch_end(fl_s, fl_c, fl_f, head, tail, t_m, free, sz, bw)
        cs = t_c if t_c > fe else fe
        ce = cs + comp[u]
        while head < tail and fl_c[head] <= fe:
            used -= fl_s[head]
            head += 1
        if tail == fl_s.shape[0]:  # in-flight list full: slide it down, or grow it
            if head > 0:
                fl_s[:tail - head] = fl_s[head:tail]
                fl_c[:tail - head] = fl_c[head:tail]
                fl_f[:tail - head] = fl_f[head:tail]
                tail -= head
                head = 0
            else:
                fl_s, fl_c, fl_f = _grow(fl_s, tail), _grow(fl_c, tail), _grow(fl_f, tail)
        if n == cap:  # only when the decision count was underestimated (time windows)
            o_t, o_r, o_i = _grow(o_t, n), _grow(o_r, n), _grow(o_i, n)
            o_fs, o_fe = _grow(o_fs, n), _grow(o_fe, n)
            o_cs, o_ce = _grow(o_cs, n), _grow(o_ce, n)
            cap = o_t.shape[0]
        if sz > 0 and ce > fe:
            fl_s[tail] = sz
            fl_c[tail] = ce
            fl_f[tail] = ftime[u]
            tail += 1
            used += sz
        t_m = fe
        t_c = ce
        r = req[t]
        o_t[n], o_r[n], o_i[n] = t, r, i
        o_fs[n], o_fe[n], o_cs[n], o_ce[n] = fs, fe, cs, ce
        n += 1
        if u + 1 < off[t + 1]:
            pos[t] = i + 1
        elif (ce < window) if has_window else (r + 1 < requests):  # ClosedLoop.reissue
            req[t], arrival[t], pos[t] = r + 1, ce, 0
        else:
            active[t] = False
            nact -= 1
            maxft = 0.0
            for v in range(k):
                if active[v]:
                    maxft = max(maxft, mft[v])
    return n, o_t, o_r, o_i, o_fs, o_fe, o_cs, o_ce


def available() -> bool:
    """Whether the kernel can be compiled (numba is installed; not imported by this check).

    Without numba the kernel runs as plain Python: correct, but slower than the reference.
    """
    if _COMPILED:
        return _COMPILED[0]
    return importlib.util.find_spec("numba") is not None


def run_board(board, failsafe: bool, requests: int | None, window_s: float | None,
              cap: int) -> tuple[tuple, ...]:
    """Run ``board`` (requests already issued) to the end with Layerweaver's rule, as
    ``plan`` would; return ``order, fetch starts, fetch ends, compute starts, compute ends``
    as tuples. ``cap`` is the expected number of decisions (the arrays grow past it)."""
    out = run_board_arrays(board, failsafe, requests, window_s, cap)
    order = tuple(zip(out[0].tolist(), out[1].tolist(), out[2].tolist()))
    return (order, *(tuple(a.tolist()) for a in out[3:]))


def run_board_arrays(board, failsafe: bool, requests: int | None, window_s: float | None,
                     cap: int) -> tuple[np.ndarray, ...]:
    """``run_board`` as arrays: ``tenant, request, unit, fs, fe, cs, ce`` (one row per
    decision)."""
    _compile()
    b = board
    k = len(b.tenants)
    off = np.zeros(k + 1, np.int64)
    off[1:] = np.cumsum([len(s) for s in b.size])
    flat = [x for per in b.size for x in per]
    size = np.array(flat, np.int64) if flat else np.zeros(0, np.int64)

    def floats(rows):
        return np.array([x for per in rows for x in per], np.float64)

    fl = list(b.fl)
    cap_fl = max(len(fl), 16) + min(cap, 1 << 16)
    fl_s, fl_c = np.zeros(cap_fl, np.int64), np.zeros(cap_fl, np.float64)
    fl_f = np.zeros(cap_fl, np.float64)
    fl_s[:len(fl)] = [s for s, _ in fl]
    fl_c[:len(fl)] = [c for _, c in fl]
    fl_f[:len(fl)] = [s / b.bw for s, _ in fl]
    active = np.zeros(k, np.bool_)
    active[b.active] = True
    out = run_kernel(
        k, off, size, floats(b.comp), floats(b.ftime), floats(b.inh),
        np.array([x == "compute" for x in b.kind], np.bool_), np.array(b.mft, np.float64),
        b.buf, b.bw, bool(failsafe), active, np.array(b.pos, np.int64),
        np.array(b.req, np.int64), np.array(b.arrival, np.float64), float(b.t_m),
        float(b.t_c), fl_s, fl_c, fl_f, 0, len(fl), b.used,
        -1 if requests is None else int(requests),
        0.0 if window_s is None else float(window_s), window_s is not None, max(cap, 1))
    n = out[0]
    return tuple(a[:n] for a in out[1:])
