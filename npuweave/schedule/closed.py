"""Closed-loop streams on the one decision loop: a started ``Board`` in, its decisions out.

``plan`` (``plan_using``'s ``"kernel"`` path) and the closed-loop fast path hand a board whose
streams have issued their first request (``plan.start_streams``) to ``run_closed``, which
flattens it (``npuweave.schedule.loop``'s state: the board's tables, positions, requests,
arrival times, clocks and in-flight list), runs ``loop.run_loop`` with the closed-loop
arrival rule, and returns one row per decision: ``tenant, request, unit, fs, fe, cs, ce``.
The policy's code says which rule chooses (``policy_code``); AI-MT's generator state and
threshold box go in and come back, so the policy ends as its Python ``select`` would leave it.

Without numba (or with ``plain``) the same loop runs as plain Python on lists
(``loop.runner``).
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from npuweave.schedule import jit, loop
from npuweave.schedule.board import Board, concatenated
from npuweave.schedule.buffer import room
from npuweave.schedule.loop_steps import (
    AIMT,
    LW_PLUS,
    LW_PLUS_PRINTED,
)

INT_MAX = int(np.iinfo(np.int64).max)
#: the open arrivals' tables and outputs, empty in a closed loop: shared, as nothing can be
#: written to an empty array
_NONE_F, _NONE_I = np.zeros(0), np.zeros(0, np.int64)


def policy_code(policy: object) -> int | None:
    """The loop's code for ``policy`` (after its ``start``: Layerweaver's failsafe is decided
    there): its ``loop_code()``, unless a subclass overrides ``select`` below the class
    that states the code (then the loop would not make its decisions); None when the loop
    does not run it.

    Examples
    --------
    >>> from npuweave.schedule import get_scheduler
    >>> from npuweave.schedule.sequential import Sequential
    >>> class Mine(Sequential):
    ...     def select(self, board):
    ...         return board.active[-1]
    >>> policy_code(get_scheduler("sequential")), policy_code(get_scheduler("fair"))
    (0, None)
    >>> policy_code(Mine()) is None
    True
    """
    mro = type(policy).__mro__
    states = next((c for c in mro if "loop_code" in vars(c)), None)
    selects = next((c for c in mro if "select" in vars(c)), None)
    if states is None or selects is None or (selects is not states
                                            and issubclass(selects, states)):
        return None
    return policy.loop_code()  # type: ignore[attr-defined]


def policy_tables(policy: Any, code: int, est: np.ndarray | None = None,
                  bound: np.ndarray | None = None, alone: np.ndarray | None = None) -> tuple:
    """``run_loop``'s ``pol`` for ``policy`` under ``code``: Layerweaver+'s ``prune`` and
    ``inherit`` flags and tables (``est, bound, alone``, placeholders when not given), AI-MT's
    thresholds, box and generator state (placeholders for other policies)."""
    none = np.zeros(1)
    low_free = min_d = 0.0
    box, mt = np.zeros(4), np.zeros(1, np.int64)
    if code == AIMT:
        low_free, min_d = float(policy.low_free), float(policy.min_d)
        box = np.array(policy.box, np.float64)
        mt = np.array(policy.rng.getstate()[1], np.int64)
    plus = code in (LW_PLUS, LW_PLUS_PRINTED)
    return (code, bool(plus and policy.prune), bool(getattr(policy, "inherit", False)),
            none if est is None else est, none if bound is None else bound,
            none if alone is None else alone, low_free, min_d, box, mt)


def run_closed(policy: Any, board: Board, requests: int | None, window_s: float | None,
               cap: int, plain: bool = False) -> tuple[np.ndarray, ...]:
    """Run ``board`` (started by ``policy``) to the end on the closed loop; return
    ``tenant, request, unit, fs, fe, cs, ce`` (one row per decision). ``cap``: the expected
    number of decisions (the arrays grow past it)."""
    code = policy_code(policy)
    if code is None:
        raise ValueError(f"policy {getattr(policy, 'name', policy)!r} is not in the loop")
    compiled = jit.compile() and not plain
    b = board
    off, size, comp, ftime, inh, kinds, mft = _static(b)
    k = len(b.tenants)
    fl = b.in_flight()
    st = loop.state(k, 1, len(fl) + room(b.buf, size, max(cap, 1)))
    st[loop.ST["compute_kind"]], st[loop.ST["cur_mft"]] = kinds, mft  # read only here
    st[loop.ST["active"]][b.active] = True
    seg, nu = off[:-1], off[1:] - off[:-1]
    st[loop.ST["seg"]][:], st[loop.ST["nu"]][:] = seg, nu
    for name in ("pos", "req", "arrival"):
        st[loop.ST[name]][:] = getattr(b, name)
    if fl:
        fl_s, fl_c, fl_f = st[loop.ST_FL:loop.ST_FL + 3]
        fl_s[:len(fl)] = [s for s, _ in fl]
        fl_c[:len(fl)] = [c for _, c in fl]
        fl_f[:len(fl)] = [s / b.bw for s, _ in fl]
    si, sf = st[loop.ST_SI], st[loop.ST["sf"]]
    si[loop.TAIL], si[loop.USED] = len(fl), b.used
    sf[loop.T_M], sf[loop.T_C], sf[loop.NOW] = b.t_m, b.t_c, b.t_m
    pol = policy_tables(policy, code)
    tab = (k, 1, 1, b.buf, b.bw, seg, mft, np.zeros(k), kinds, nu, size, comp, ftime, inh)
    arr = (True, *loop_end(requests, window_s), _NONE_F, _NONE_I, _NONE_I,
           np.zeros(k, np.int64), np.zeros(k), 0.0, INT_MAX)
    out = [True, *columns(max(cap, 1)), _NONE_F, _NONE_I]
    run, pol, tab, arr, st, out = loop.runner(compiled, pol, tab, arr, st, out)
    n = loop.drive(run, pol, tab, arr, st, out)
    if code in (LW_PLUS, LW_PLUS_PRINTED):
        policy.decisions += n  # as its select counts them (no deadlines: no estimate)
    settle(policy, code, pol)
    if isinstance(out[1], np.ndarray):  # compiled: each column a row of the output
        return (*out[1][:, :n], *out[2][:, :n])
    return (*(_column(c, n, np.int64) for c in out[1]),
            *(_column(c, n, np.float64) for c in out[2]))


def columns(cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty output columns for ``cap`` decisions: ``o_int`` (tenant, request, unit) and
    ``o_float`` (fs, fe, cs, ce), one row per column, one entry per decision."""
    return np.empty((3, cap), np.int64), np.empty((4, cap), np.float64)


def loop_end(requests: int | None, window_s: float | None) -> tuple[int, float, bool]:
    """The closed loop's end as ``run_loop`` reads it: ``requests, horizon, has_horizon``."""
    return (-1 if requests is None else int(requests),
            0.0 if window_s is None else float(window_s), window_s is not None)


def _static(b: Board) -> tuple[np.ndarray, ...]:
    """``off, size, comp, ftime, inh, compute kind, mft`` of board ``b`` as arrays: its
    tenant set's shared ``Tables.flat`` while no tenant's list was replaced (the loop only
    reads them), else built from its lists."""
    return b.tables.flat() if b.tables.same(b) else concatenated(b)


def _column(c: Any, n: int, dtype: type) -> np.ndarray:
    """The first ``n`` entries of an output column (an array, or ``array.array``: no copy)."""
    return np.frombuffer(c, dtype)[:n] if isinstance(c, array) else np.asarray(c[:n], dtype)


def settle(policy: Any, code: int, pol: tuple) -> None:
    """Leave ``policy`` as its own ``select`` would after the run ``pol`` (``policy_tables``)
    was given to: AI-MT's generator state and threshold box."""
    if code == AIMT:
        version, _, gauss = policy.rng.getstate()
        policy.rng.setstate((version, tuple(int(w) for w in pol[9]), gauss))
        policy.box[:] = [float(x) for x in pol[8]]
