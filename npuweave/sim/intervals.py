"""``IntervalColumns``: a run's busy intervals stored as columns, read as ``Interval`` records.

A closed-loop run of a few hundred requests has tens of thousands of busy intervals; building
one frozen ``Interval`` object per interval costs more than simulating it. The closed-loop
paths (``npuweave.sim.streams`` and its compiled fast path ``npuweave.sim.fastloop``) keep
them as NumPy columns (codes into small name tables) and the metrics index them without a
pass over objects (``npuweave.metrics.index``). Everything else sees an ordinary read-only
sequence of ``Interval`` records, built on first use (iteration, indexing) and then kept.

Two column sets are equal when they hold the same intervals in the same order, whatever their
name tables; a column set also equals a tuple of the same ``Interval`` records.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from npuweave.schedule.jit import kernel as _jit
from npuweave.schedule.jit import loaded
from npuweave.sim.records import Interval

#: Resource names of the single-NPU engine, by code.
RESOURCES = ("PE", "DRAM")


@dataclass(frozen=True, slots=True, eq=False)
class IntervalColumns(Sequence[Interval]):
    """Busy intervals as aligned arrays (one row per interval).

    Attributes
    ----------
    resources, tenants : names by code (``resource[i]`` indexes ``resources``).
    units : per tenant code, the unit names (``unit[i]`` indexes ``units[tenant[i]]``).
    resource, tenant, request, unit : integer codes; ``request`` is the index within its tenant.
    start_s, end_s : float64 seconds.

    Examples
    --------
    >>> import numpy as np
    >>> cols = IntervalColumns(("PE",), ("a",), (("x", "y"),), np.array([0, 0]),
    ...                        np.array([0, 0]), np.array([0, 1]), np.array([1, 0]),
    ...                        np.array([0.0, 1.0]), np.array([1.0, 3.0]))
    >>> len(cols), cols[1].unit, cols[1].request, cols[1].duration_s
    (2, 'x', 1, 2.0)
    """

    resources: tuple[str, ...]
    tenants: tuple[str, ...]
    units: tuple[tuple[str, ...], ...]
    resource: np.ndarray
    tenant: np.ndarray
    request: np.ndarray
    unit: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    _rows: list[tuple[Interval, ...]] = field(default_factory=list, init=False, repr=False)

    def rows(self) -> tuple[Interval, ...]:
        """Every interval as an ``Interval`` record (built once, then kept)."""
        if not self._rows:
            res, ten, units = self.resources, self.tenants, self.units
            t_codes = self.tenant.tolist()
            self._rows.append(tuple(
                Interval(res[r], ten[t], q, units[t][u], s, e) for r, t, q, u, s, e in zip(
                    self.resource.tolist(), t_codes, self.request.tolist(), self.unit.tolist(),
                    self.start_s.tolist(), self.end_s.tolist())))
        return self._rows[0]

    def columns(self) -> tuple[np.ndarray, tuple[str, ...], np.ndarray, tuple[str, ...],
                               np.ndarray, np.ndarray, np.ndarray]:
        """``(resource codes, resource names, tenant codes, tenant names, request, start_s,
        end_s)``: what ``npuweave.metrics.IntervalIndex`` reads without building records."""
        return (self.resource, self.resources, self.tenant, self.tenants, self.request,
                self.start_s, self.end_s)

    def __len__(self) -> int:
        return int(self.start_s.shape[0])

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
        names = np.array(self.resources + ("",), dtype=object)
        tenants = np.array(self.tenants + ("",), dtype=object)
        flat = [u for per in self.units for u in per]
        off = np.cumsum([0] + [len(per) for per in self.units])
        unit = np.array(flat + [""], dtype=object)[off[self.tenant] + self.unit] if len(
            self) else np.zeros(0, dtype=object)
        return (names[self.resource], tenants[self.tenant], self.request, unit, self.start_s,
                self.end_s)


def interval_columns(tenants: Sequence[str], units: Sequence[Sequence[str]],
                     pe: Sequence[np.ndarray], dram: Sequence[np.ndarray]) -> IntervalColumns:
    """Columns of a single-NPU run, in the order the engine's result lists them.

    ``pe`` and ``dram`` are ``(tenant, request, unit, start_s, end_s)`` arrays, the PE rows in
    completion order and the DRAM rows (one per transferred part) in the order they started.
    The rows are sorted by start, DRAM before PE at the same start, then by end; ties keep
    that input order (a stable sort, as the engine's result does).

    Examples
    --------
    >>> import numpy as np
    >>> pe = [np.array([0]), np.array([0]), np.array([0]), np.array([1.0]), np.array([3.0])]
    >>> dram = [np.array([0]), np.array([0]), np.array([0]), np.array([0.0]), np.array([1.0])]
    >>> [(iv.resource, iv.start_s) for iv in interval_columns(["a"], [["x"]], pe, dram)]
    [('DRAM', 0.0), ('PE', 1.0)]
    """
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
    return IntervalColumns(RESOURCES, tuple(tenants), tuple(tuple(u) for u in units),
                           resource, *cols)


@_jit
def _merge(p_t, p_r, p_u, p_s, p_e, d_t, d_r, d_u, d_s, d_e, res, ten, req, unit, start, end):
    """Merge PE rows ``p_*`` and DRAM rows ``d_*`` (each in (start, end) order) by start, DRAM
    first at the same start, into the output columns; False when a run is out of order."""
    n_p = len(p_s)
    n_d = len(d_s)
    a = 0
    b = 0
    for m in range(n_p + n_d):
        if b < n_d and (a >= n_p or d_s[b] <= p_s[a]):
            if b > 0 and (d_s[b] < d_s[b - 1] or (d_s[b] == d_s[b - 1] and d_e[b] < d_e[b - 1])):
                return False
            res[m], ten[m], req[m], unit[m], start[m], end[m] = 1, d_t[b], d_r[b], d_u[b], \
                d_s[b], d_e[b]
            b += 1
        else:
            if a > 0 and (p_s[a] < p_s[a - 1] or (p_s[a] == p_s[a - 1] and p_e[a] < p_e[a - 1])):
                return False
            res[m], ten[m], req[m], unit[m], start[m], end[m] = 0, p_t[a], p_r[a], p_u[a], \
                p_s[a], p_e[a]
            a += 1
    return True


def _sort_into(pe: Sequence[np.ndarray], dram: Sequence[np.ndarray], resource: np.ndarray,
               cols: list[np.ndarray]) -> None:
    """Fill the columns by a stable sort of all rows (NumPy; no compiled kernels)."""
    n_pe, n_dram = len(pe[3]), len(dram[3])
    n = n_pe + n_dram
    if _in_order(pe[3], pe[4]) and _in_order(dram[3], dram[4]):
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


def _in_order(start: np.ndarray, end: np.ndarray) -> bool:
    """Whether rows are sorted by (start, end), so a stable sort would keep them in place."""
    if start.size < 2:
        return True
    ds = start[1:] - start[:-1]
    return bool(np.all((ds > 0) | ((ds == 0) & (end[1:] >= end[:-1]))))
