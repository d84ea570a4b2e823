"""What a run's metrics read per request, from its PE and DRAM runs: reach first, totals later.

Per request slot (``tenant code * span + request``) the closed-loop metrics need whether it
did any work, its earliest start and latest end (its reach), the start of its first
computation and the end of its last, and per resource the busy seconds (``RunWork``). None of
these depends on the order the two runs interleave, so ``run_work`` reads each run once,
straight through (compiled when the kernels are loaded, NumPy otherwise).

A request's busy seconds added in interval order (the runs merged by start, DRAM first at the
same start: ``npuweave.sim.intervals``) are what the record-by-record metrics add, bit for
bit. Only a request that straddles a measurement window needs them (its share inside), and
one compiled pass over its own rows adds them (``request_split``); ``run_totals`` adds every
request's from the merged columns for whoever asks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from npuweave.schedule.jit import borrow, loaded
from npuweave.schedule.jit import kernel as _jit
from npuweave.schedule.reach import fold_span, note_ends, note_slot

Run = Sequence[np.ndarray]  # (tenant, request, unit, start_s, end_s)


class Parts(NamedTuple):
    """A DRAM run given by the PE row each part fetched weights for (its tenant, request and
    unit are that row's): what the closed-loop fast path keeps, three columns instead of
    five (``npuweave.schedule.fetchparts.replay_parts``). ``reach``: both runs' ``RunWork``
    as the compiled replay folded it while it moved the parts, and whether no span had a
    negative or NaN length (so ``run_work`` does not read the runs again); None where it
    did not fold them."""

    row: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    reach: tuple[RunWork, bool] | None = None


def fresh_slots(slots: int,
                span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per slot, before any span is folded: ``worked`` (False), ``lo`` (inf), ``hi``
    (-inf), ``start_s`` and ``finish_s`` (NaN); the four floats in one block."""
    n = slots * span
    fresh = np.empty((4, n))
    fresh[0], fresh[1], fresh[2:] = np.inf, -np.inf, np.nan
    return np.zeros(n, np.bool_), fresh[0], fresh[1], fresh[2], fresh[3]


def full_run(pe: Run, dram: Run | Parts) -> Run:
    """``dram`` as ``(tenant, request, unit, start_s, end_s)`` (gathered from ``pe`` where
    given as ``Parts``)."""
    if not isinstance(dram, Parts):
        return dram
    return (pe[0][dram.row], pe[1][dram.row], pe[2][dram.row], dram.start_s, dram.end_s)


class RunWork(NamedTuple):
    """A run's reach and totals, per request slot ``tenant code * span + request`` and per
    resource.

    ``worked``: some busy interval of positive length (its busy seconds are > 0); ``lo``,
    ``hi``: earliest start and latest end (``inf``, ``-inf`` without intervals); ``start_s``,
    ``finish_s``: start of its first unit's and end of its last unit's computation (NaN
    without); ``busy``: PE and DRAM seconds, each run's spans added in run order (as the
    engine adds them); ``in_order``: both runs were in (start, end) order.
    """

    span: int
    worked: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    start_s: np.ndarray
    finish_s: np.ndarray
    busy: np.ndarray
    in_order: bool


def run_work(pe: Run, dram: Run | Parts, last: np.ndarray, slots: int,
             totals: Callable[[], np.ndarray]) -> RunWork:
    """``RunWork`` of runs ``pe`` and ``dram`` (``last``: each tenant's last unit index;
    ``totals``: the per-slot busy seconds, asked for only where a span has a negative or NaN
    length, so that "positive length" would not say "positive total"). Parts that carry
    their reach (folded by the replay, for the same tenants) are not read again."""
    reach = dram.reach if isinstance(dram, Parts) else None
    work, exact = _fold_runs(pe, dram, last, slots) if reach is None else reach
    return work if exact else work._replace(worked=totals() > 0)


def _fold_runs(pe: Run, dram: Run | Parts, last: np.ndarray,
               slots: int) -> tuple[RunWork, bool]:
    """``RunWork`` of runs ``pe`` and ``dram``, each read once (compiled, or NumPy), and
    whether no span has a negative or NaN length."""
    span = run_span(pe, dram)
    worked, lo, hi, start_s, finish_s = fresh_slots(slots, span)
    if loaded():  # the PE run's first and last units in the same pass
        busy_pe, pe_order, pe_exact = _reach(pe[0], pe[1], None, pe[3], pe[4], span, worked,
                                             lo, hi, pe[2], last, start_s, finish_s)
        busy_dram, dram_order, dram_exact = _reach(*dram_columns(pe, dram), span, worked, lo, hi,
                                                   None, None, None, None)
    else:
        busy_pe, pe_order, pe_exact = _reach_numpy(pe[0], pe[1], None, pe[3], pe[4], span,
                                                   worked, lo, hi)
        busy_dram, dram_order, dram_exact = _reach_numpy(*dram_columns(pe, dram), span, worked,
                                                         lo, hi)
        _ends(pe[0], pe[1], pe[2], pe[3], pe[4], last, span, start_s, finish_s)
    return RunWork(span, worked, lo, hi, start_s, finish_s, np.array([busy_pe, busy_dram]),
                   pe_order and dram_order), pe_exact and dram_exact


def run_totals(pe: Run, dram: Run | Parts, slots: int,
               merged: Callable[[], tuple[np.ndarray, ...]]) -> np.ndarray:
    """Each slot's busy seconds, PE and DRAM, added in interval order: ``np.bincount`` (which
    adds each slot's weights one at a time in row order) over the ``merged()`` columns
    ``resource, tenant, request, unit, start_s, end_s`` (the metrics never ask for every
    request's: ``request_split`` adds a straddling one's)."""
    span = run_span(pe, dram)
    _, t, q, _, s, e = merged()
    return np.bincount(t.astype(np.int64) * span + q, weights=e - s, minlength=slots * span)


def request_split(pe: Run, dram: Run | Parts, lo: float, hi: float, tenant: int, request: int,
                  t0: float, t1: float) -> tuple[float, float]:
    """``(inside, total)``: busy seconds of request ``request`` of tenant ``tenant`` clipped to
    ``[t0, t1]``, and in all, each added in interval order. Its rows are those of each run
    (both in (start, end) order) that start within its reach ``[lo, hi]``; one compiled pass
    (``_split``), for a request that straddles a measurement window."""
    t, r, row, s, e = dram_columns(pe, dram)
    return _split(pe[0], pe[1], pe[3], pe[4], t, r, row, s, e, lo, hi, tenant, request, t0, t1)


def dram_columns(pe: Run, dram: Run | Parts) -> tuple[np.ndarray, np.ndarray, np.ndarray | None,
                                                  np.ndarray, np.ndarray]:
    """``(tenant, request, row, start_s, end_s)`` of the DRAM run: row ``b`` is request
    ``request[q]`` of tenant ``tenant[q]``, ``q = row[b]`` (the PE run's columns, for
    ``Parts``), or ``q = b`` where ``row`` is None."""
    if isinstance(dram, Parts):
        return pe[0], pe[1], dram.row, dram.start_s, dram.end_s
    return dram[0], dram[1], None, dram[3], dram[4]


def run_span(pe: Run, dram: Run | Parts | None = None) -> int:
    """Slots per tenant: one more than the highest request index (at least 1); ``dram`` as
    ``Parts`` or None: the PE run's requests only."""
    top = int(pe[1].max()) + 1 if pe[1].size else 1
    if dram is None or isinstance(dram, Parts):  # the parts' requests are PE rows'
        return top
    return max(top, int(dram[1].max()) + 1 if dram[1].size else 1)


@_jit
def _reach(t, r, row, s, e, span, worked, lo, hi, u, last, start_s, finish_s):
    """Add one run's rows to ``worked``, ``lo``, ``hi`` (row ``a`` is request ``r[q]`` of
    tenant ``t[q]``, ``q = row[a]``, or ``a`` where ``row`` is None); return ``(busy seconds
    added in row order, the rows are in (start, end) order, no row has a negative or NaN
    length)``. Consecutive rows of one slot (a fetch's parts) are folded in registers first
    (``npuweave.schedule.reach``'s steps). For the PE run, ``u`` (unit), ``last`` (each
    tenant's last unit), ``start_s`` and ``finish_s`` also take each slot's first unit's
    start and last unit's end (None for the DRAM run: numba compiles that branch away).
    Every array is the caller's, borrowed (``jit.borrow``: the inlined steps)."""
    t, r, s, e, worked, lo, hi = borrow((t, r, s, e, worked, lo, hi))
    if u is not None:
        ub, lastb, sb, fb = borrow((u, last, start_s, finish_s))
    busy = 0.0
    in_order = True
    exact = True
    s0 = -np.inf
    e0 = -np.inf
    q0 = -1
    k = -1
    any_work = False
    first = np.inf
    end = -np.inf
    for a in range(len(s)):
        q = a if row is None else row[a]
        if q != q0:
            q0 = q
            slot = t[q] * span + r[q]
            if slot != k:
                note_slot(k, any_work, first, end, worked, lo, hi)
                k, any_work, first, end = slot, False, np.inf, -np.inf
        busy, any_work, exact, first, end, in_order, s0, e0 = fold_span(
            s[a], e[a], busy, any_work, exact, first, end, in_order, s0, e0)
        if u is not None:
            note_ends(ub[a], lastb[t[q]], k, s[a], e[a], sb, fb)
    note_slot(k, any_work, first, end, worked, lo, hi)
    return busy, in_order, exact


def _reach_numpy(t: np.ndarray, r: np.ndarray, row: np.ndarray | None, s: np.ndarray,
                 e: np.ndarray, span: int, worked: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray) -> tuple[float, bool, bool]:
    """``_reach`` in NumPy (no compiled kernels): the same values (``np.cumsum`` adds in row
    order; minimum and maximum do not depend on it)."""
    if not s.size:
        return 0.0, True, True
    if row is not None:
        t, r = t[row], r[row]
    k = t.astype(np.int64) * span + r
    d = e - s
    worked[k[d > 0]] = True
    np.minimum.at(lo, k, s)
    np.maximum.at(hi, k, e)
    return float(np.cumsum(d)[-1]), in_order(s, e), bool((d >= 0).all())


def _ends(t: np.ndarray, r: np.ndarray, u: np.ndarray, s: np.ndarray, e: np.ndarray,
          last: np.ndarray, span: int, start_s: np.ndarray, finish_s: np.ndarray) -> None:
    """Set each slot's first unit's compute start and last unit's compute end from the PE
    run (what ``_reach`` does with ``u``, in NumPy: no compiled kernels)."""
    key = t.astype(np.int64) * span + r
    first = u == 0
    start_s[key[first]] = s[first]
    ends = u == last[t]
    finish_s[key[ends]] = e[ends]


@_jit
def _split(p_t, p_r, p_s, p_e, d_t, d_r, row, d_s, d_e, lo, hi, tenant, request, t0, t1):
    """``request_split``: the request's rows of the two runs that start in ``[lo, hi]``, in
    merged order (by start, DRAM first at the same start, as ``_next``), their lengths added
    to ``total`` and their lengths clipped to ``[t0, t1]`` to ``inside``, each clip as
    NumPy's ``maximum(0.0, minimum(e, t1) - maximum(s, t0))`` (for times that are not NaN)."""
    a = np.searchsorted(p_s, lo)
    a1 = np.searchsorted(p_s, hi, side="right")
    b = np.searchsorted(d_s, lo)
    b1 = np.searchsorted(d_s, hi, side="right")
    inside = 0.0
    total = 0.0
    while True:
        while a < a1 and not (p_t[a] == tenant and p_r[a] == request):
            a += 1
        while b < b1:
            q = b if row is None else row[b]
            if d_t[q] == tenant and d_r[q] == request:
                break
            b += 1
        if a >= a1 and b >= b1:
            return inside, total
        if b < b1 and (a >= a1 or d_s[b] <= p_s[a]):
            s, e = d_s[b], d_e[b]
            b += 1
        else:
            s, e = p_s[a], p_e[a]
            a += 1
        total += e - s
        c = (e if e < t1 else t1) - (s if s > t0 else t0)
        inside += 0.0 if 0.0 > c else c


def in_order(start: np.ndarray, end: np.ndarray) -> bool:
    """Whether rows are sorted by (start, end), so a stable sort would keep them in place."""
    if start.size < 2:
        return True
    ds = start[1:] - start[:-1]
    return bool(np.all((ds > 0) | ((ds == 0) & (end[1:] >= end[:-1]))))
