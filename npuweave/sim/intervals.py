"""``IntervalColumns``: a run's busy intervals stored as columns, read as ``Interval`` records.

A closed-loop run of a few hundred requests has tens of thousands of busy intervals; building
one frozen ``Interval`` object per interval costs more than simulating it. The closed-loop
paths (``npuweave.sim.streams`` and its compiled fast path ``npuweave.sim.fastloop``) keep
the PE and DRAM runs as NumPy arrays (codes into small name tables). The closed-loop metrics
read each request's reach from the runs as they are (``request_reach``: ``npuweave.sim.runwork``)
and the spans of the few requests that straddle their window (``request_spans``); the
other metrics index the merged columns (``npuweave.metrics.index``), merged on first use;
everything else sees an ordinary read-only sequence of ``Interval`` records, built on first
use (iteration, indexing) and then kept.

Two column sets are equal when they hold the same intervals in the same order, whatever their
name tables; a column set also equals a tuple of the same ``Interval`` records.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from npuweave.schedule.jit import borrow, loaded
from npuweave.schedule.jit import kernel as _jit
from npuweave.sim.records import Interval
from npuweave.sim.runwork import (
    Parts,
    RunWork,
    dram_columns,
    full_run,
    in_order,
    request_split,
    run_totals,
    run_work,
)

#: Resource names of the single-NPU engine, by code.
RESOURCES = ("PE", "DRAM")


@dataclass(frozen=True, slots=True, eq=False)
class IntervalColumns(Sequence[Interval]):
    """Busy intervals as aligned arrays (one row per interval), merged from the PE and DRAM
    runs on first use.

    Attributes
    ----------
    resources, tenants : names by code (``resource[i]`` indexes ``resources``).
    units : per tenant code, the unit names (``unit[i]`` indexes ``units[tenant[i]]``).
    pe, dram : the runs as given to ``interval_columns``: ``(tenant, request, unit, start_s,
        end_s)`` arrays, the DRAM run maybe as ``Parts`` (``dram_run`` gives its columns).
    resource, tenant, request, unit : integer codes; ``request`` is the index within its tenant.
    start_s, end_s : float64 seconds.

    Examples
    --------
    >>> import numpy as np
    >>> pe = [np.array([0, 0]), np.array([0, 1]), np.array([0, 1]), np.array([2.0, 4.0]),
    ...       np.array([3.0, 4.5])]
    >>> dram = [np.array([0]), np.array([1]), np.array([1]), np.array([0.0]), np.array([2.0])]
    >>> cols = interval_columns(("a",), (("x", "y"),), pe, dram)
    >>> len(cols), [(iv.resource, iv.unit, iv.request, iv.duration_s) for iv in cols]
    (3, [('DRAM', 'y', 1, 2.0), ('PE', 'x', 0, 1.0), ('PE', 'y', 1, 0.5)])
    >>> span, worked, lo, hi = cols.request_reach()
    >>> worked.tolist(), hi.tolist(), cols.request_totals().tolist(), cols.request_spans(0, 1)
    ([True, True], [3.0, 4.5], [1.0, 2.5], (array([0., 4.]), array([2. , 4.5])))
    """

    resources: tuple[str, ...]
    tenants: tuple[str, ...]
    units: tuple[tuple[str, ...], ...]
    pe: tuple[np.ndarray, ...]
    dram: tuple[np.ndarray, ...] | Parts
    _cols: list[tuple[np.ndarray, ...]] = field(default_factory=list, init=False, repr=False)
    _work: list[RunWork] = field(default_factory=list, init=False, repr=False)
    _totals: list[np.ndarray] = field(default_factory=list, init=False, repr=False)
    _dram: list[tuple[np.ndarray, ...]] = field(default_factory=list, init=False, repr=False)
    _rows: list[tuple[Interval, ...]] = field(default_factory=list, init=False, repr=False)

    def _merged(self) -> tuple[np.ndarray, ...]:
        """``resource, tenant, request, unit, start_s, end_s``, merged once, then kept."""
        if not self._cols:
            self._cols.append(_merge_runs(self.pe, self.dram_run()))
        return self._cols[0]

    def dram_run(self) -> tuple[np.ndarray, ...]:
        """The DRAM run as ``(tenant, request, unit, start_s, end_s)`` arrays (gathered from
        the PE run on first use where it was given as ``Parts``)."""
        if not self._dram:
            self._dram.append(tuple(full_run(self.pe, self.dram)))
        return self._dram[0]

    @property
    def resource(self) -> np.ndarray:
        return self._merged()[0]

    @property
    def tenant(self) -> np.ndarray:
        return self._merged()[1]

    @property
    def request(self) -> np.ndarray:
        return self._merged()[2]

    @property
    def unit(self) -> np.ndarray:
        return self._merged()[3]

    @property
    def start_s(self) -> np.ndarray:
        return self._merged()[4]

    @property
    def end_s(self) -> np.ndarray:
        return self._merged()[5]

    def rows(self) -> tuple[Interval, ...]:
        """Every interval as an ``Interval`` record (built once, then kept)."""
        if not self._rows:
            res, ten, units = self.resources, self.tenants, self.units
            r, t, q, u, s, e = self._merged()
            self._rows.append(tuple(
                Interval(res[a], ten[b], c, units[b][d], f, g) for a, b, c, d, f, g in zip(
                    r.tolist(), t.tolist(), q.tolist(), u.tolist(), s.tolist(), e.tolist())))
        return self._rows[0]

    def columns(self) -> tuple[np.ndarray, tuple[str, ...], np.ndarray, tuple[str, ...],
                               np.ndarray, np.ndarray, np.ndarray]:
        """``(resource codes, resource names, tenant codes, tenant names, request, start_s,
        end_s)``: what ``npuweave.metrics.IntervalIndex`` reads without building records."""
        r, t, q, _, s, e = self._merged()
        return r, self.resources, t, self.tenants, q, s, e

    def work(self) -> RunWork:
        """Per request reach and per resource busy seconds (``RunWork``), read from the two
        runs as they are (the columns stay unmerged). Computed once, then kept."""
        if not self._work:
            last = np.array([len(u) - 1 for u in self.units], np.int64)
            self._work.append(run_work(self.pe, self.dram, last, len(self.tenants),
                                       self.request_totals))
        return self._work[0]

    def request_totals(self) -> np.ndarray:
        """Each request slot's busy seconds (``RunWork``'s slots), PE and DRAM, added in
        interval order (``runwork.run_totals``; what ``npuweave.metrics.IntervalIndex`` reads
        for ``work_total``). Computed once, then kept."""
        if not self._totals:
            self._totals.append(run_totals(self.pe, self.dram, len(self.tenants),
                                           self._merged))
        return self._totals[0]

    def request_reach(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """``(span, worked, lo, hi)`` of ``work``: what ``npuweave.metrics.IntervalIndex``
        reads for progress (STP, fairness) without the columns."""
        w = self.work()
        return w.span, w.worked, w.lo, w.hi

    def request_spans(self, tenant: int, request: int) -> tuple[np.ndarray, np.ndarray]:
        """``(start_s, end_s)`` of one request's intervals, in interval order."""
        w = self.work()
        if w.in_order and not self._cols and 0 <= request < w.span:
            # each run sorted by start: the request's rows lie among the rows that start
            # within its reach; its rows of each run, DRAM first, in a stable sort by start
            # are their merge (as ``_sort_into`` orders runs in order)
            k = tenant * w.span + request
            pe = self.pe
            runs = [_own(*run, w.lo[k], w.hi[k], tenant, request)
                    for run in (dram_columns(pe, self.dram), (pe[0], pe[1], None, pe[3], pe[4]))]
            s = np.concatenate([run[0] for run in runs])
            e = np.concatenate([run[1] for run in runs])
            order = np.argsort(s, kind="stable")
            return s[order], e[order]
        _, ten, req, _, s, e = self._merged()
        pick = (ten == tenant) & (req == request)
        return s[pick], e[pick]

    def request_split(self, tenant: int, request: int, t0: float,
                      t1: float) -> tuple[float, float] | None:
        """``(inside, total)``: one request's busy seconds clipped to ``[t0, t1]`` and in all,
        each added in interval order, from one compiled pass over its rows
        (``runwork.request_split``); None where that pass does not apply (no compiled
        kernels, or a run out of order: read ``request_spans`` then)."""
        w = self.work()
        if not (loaded() and w.in_order and 0 <= request < w.span):
            return None
        k = tenant * w.span + request
        return request_split(self.pe, self.dram, float(w.lo[k]), float(w.hi[k]), tenant,
                             request, t0, t1)

    def __len__(self) -> int:
        dram = self.dram.start_s if isinstance(self.dram, Parts) else self.dram[3]
        return int(self.pe[3].shape[0] + dram.shape[0])

    @overload
    def __getitem__(self, i: int) -> Interval: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[Interval, ...]: ...

    def __getitem__(self, i: int | slice) -> Interval | tuple[Interval, ...]:
        return self.rows()[i]

    def __iter__(self) -> Iterator[Interval]:
        return iter(self.rows())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IntervalColumns):
            if len(self) != len(other):
                return False
            return all(np.array_equal(a, b) for a, b in zip(self._decoded(), other._decoded()))
        if isinstance(other, tuple):
            return self.rows() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.rows())

    def __repr__(self) -> str:
        return f"IntervalColumns({len(self)} intervals)"

    def _decoded(self) -> tuple[np.ndarray, ...]:
        """Columns with names instead of codes, for comparing two column sets."""
        res, ten, req, uni, start, end = self._merged()
        names = np.array(self.resources + ("",), dtype=object)
        tenants = np.array(self.tenants + ("",), dtype=object)
        flat = [u for per in self.units for u in per]
        off = np.cumsum([0] + [len(per) for per in self.units])
        unit = np.array(flat + [""], dtype=object)[off[ten] + uni] if len(
            self) else np.zeros(0, dtype=object)
        return names[res], tenants[ten], req, unit, start, end


def interval_columns(tenants: Sequence[str], units: Sequence[Sequence[str]],
                     pe: Sequence[np.ndarray],
                     dram: Sequence[np.ndarray] | Parts) -> IntervalColumns:
    """Columns of a single-NPU run, in the order the engine's result lists them.

    ``pe`` and ``dram`` are ``(tenant, request, unit, start_s, end_s)`` arrays, the PE rows in
    completion order and the DRAM rows (one per transferred part) in the order they started;
    the DRAM rows may come as ``Parts`` (each part's PE row, start, end).
    The rows are sorted by start, DRAM before PE at the same start, then by end; ties keep
    that input order (a stable sort, as the engine's result does). The sort is done on first
    use: the closed-loop metrics read the per-request reach (``request_reach``) instead.

    Examples
    --------
    >>> import numpy as np
    >>> pe = [np.array([0]), np.array([0]), np.array([0]), np.array([1.0]), np.array([3.0])]
    >>> dram = [np.array([0]), np.array([0]), np.array([0]), np.array([0.0]), np.array([1.0])]
    >>> [(iv.resource, iv.start_s) for iv in interval_columns(["a"], [["x"]], pe, dram)]
    [('DRAM', 0.0), ('PE', 1.0)]
    """
    return IntervalColumns(RESOURCES, tuple(tenants), tuple(tuple(u) for u in units),
                           tuple(pe), dram if isinstance(dram, Parts) else tuple(dram))


def _merge_runs(pe: Sequence[np.ndarray], dram: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The merged columns ``resource, tenant, request, unit, start_s, end_s``."""
    n = len(pe[3]) + len(dram[3])
    resource = np.empty(n, dtype=np.int8)
    # small integer types: fresh pages cost more than the copies on a busy machine
    cols = [np.empty(n, dtype=np.int32) for _ in range(3)] + [np.empty(n, dtype=np.float64)
                                                             for _ in range(2)]
    # each resource already runs in (start, end) order, as the engine's always do: then the
    # result is the merge of the two runs, DRAM first at the same start, done in one
    # compiled pass; otherwise (or without the compiled kernels) a sort of all rows
    if not (loaded() and _merge(*pe, *dram, resource, *cols)):
        _sort_into(pe, dram, resource, cols)
    return (resource, *cols)


def _own(t: np.ndarray, r: np.ndarray, row: np.ndarray | None, s: np.ndarray, e: np.ndarray,
         lo: float, hi: float, tenant: int, request: int) -> tuple[np.ndarray, np.ndarray]:
    """``(start_s, end_s)`` of a run's rows that belong to request ``request`` of tenant
    ``tenant`` and start in ``[lo, hi]`` (the run sorted by start; row ``a`` is that of
    ``t[q]``, ``r[q]`` with ``q = row[a]``, or ``a`` where ``row`` is None)."""
    a = int(np.searchsorted(s, lo, "left"))
    b = int(np.searchsorted(s, hi, "right"))
    q = slice(a, b) if row is None else row[a:b]
    pick = (t[q] == tenant) & (r[q] == request)
    return s[a:b][pick], e[a:b][pick]


@_jit(inline=True)
def _next(a, b, p_s, p_e, d_s, d_e):
    """The merge's next row: 1 for DRAM row ``b``, 0 for PE row ``a`` (by start, DRAM first
    at the same start); -1 when that row is out of (start, end) order in its run."""
    if b < len(d_s) and (a >= len(p_s) or d_s[b] <= p_s[a]):
        if b > 0 and (d_s[b] < d_s[b - 1] or (d_s[b] == d_s[b - 1] and d_e[b] < d_e[b - 1])):
            return -1
        return 1
    if a > 0 and (p_s[a] < p_s[a - 1] or (p_s[a] == p_s[a - 1] and p_e[a] < p_e[a - 1])):
        return -1
    return 0


@_jit
def _merge(p_t, p_r, p_u, p_s, p_e, d_t, d_r, d_u, d_s, d_e, res, ten, req, unit, start, end):
    """Merge PE rows ``p_*`` and DRAM rows ``d_*`` (each in (start, end) order) into the
    output columns in ``_next``'s order; False when a run is out of order. Every array is
    the caller's, borrowed (``jit.borrow``)."""
    p_t, p_r, p_u, p_s, p_e, d_t, d_r, d_u, d_s, d_e = borrow((p_t, p_r, p_u, p_s, p_e, d_t,
                                                               d_r, d_u, d_s, d_e))
    res, ten, req, unit, start, end = borrow((res, ten, req, unit, start, end))
    a = 0
    b = 0
    for m in range(len(p_s) + len(d_s)):
        w = _next(a, b, p_s, p_e, d_s, d_e)
        if w < 0:
            return False
        if w == 1:
            res[m], ten[m], req[m], unit[m], start[m], end[m] = 1, d_t[b], d_r[b], d_u[b], \
                d_s[b], d_e[b]
            b += 1
        else:
            res[m], ten[m], req[m], unit[m], start[m], end[m] = 0, p_t[a], p_r[a], p_u[a], \
                p_s[a], p_e[a]
            a += 1
    return True


def _sort_into(pe: Sequence[np.ndarray], dram: Sequence[np.ndarray], resource: np.ndarray,
               cols: list[np.ndarray]) -> None:
    """Fill the columns by a stable sort of all rows (NumPy; no compiled kernels)."""
    n_pe, n_dram = len(pe[3]), len(dram[3])
    n = n_pe + n_dram
    if in_order(pe[3], pe[4]) and in_order(dram[3], dram[4]):
        # each run in (start, end) order: a stable sort by start alone of DRAM rows then PE
        # rows puts DRAM first at the same start and keeps each resource's order
        order = np.argsort(np.concatenate((dram[3], pe[3])), kind="stable")
        first_pe = False
    else:  # lexsort: last key first; stable, so equal keys keep PE-then-DRAM input order
        is_pe = np.arange(n) < n_pe
        order = np.lexsort((np.concatenate((pe[4], dram[4])), is_pe,
                            np.concatenate((pe[3], dram[3]))))
        first_pe = True
    where = np.empty(n, dtype=np.int64)  # row -> its position in the result
    where[order] = np.arange(n)
    to_pe, to_dram = (where[:n_pe], where[n_pe:]) if first_pe else (where[n_dram:],
                                                                    where[:n_dram])
    for k, out in enumerate(cols):  # scatter: fewer large temporaries than a gather
        out[to_pe] = pe[k]
        out[to_dram] = dram[k]
    resource[to_pe] = 0
    resource[to_dram] = 1
