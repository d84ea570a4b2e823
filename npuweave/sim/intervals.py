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
    n_pe, n_dram = len(pe[3]), len(dram[3])
    if _in_order(pe[3], pe[4]) and _in_order(dram[3], dram[4]):
        # each resource already runs in (start, end) order, as the engine's always do: a
        # stable sort by start alone of DRAM rows then PE rows puts DRAM first at the same
        # start and keeps each resource's order (and merges the two sorted runs in one pass)
        by_start = np.argsort(np.concatenate((dram[3], pe[3])), kind="stable")
        where = np.empty(n_pe + n_dram, dtype=np.int64)  # row -> its position in the result
        where[by_start] = np.arange(n_pe + n_dram)
        to_dram, to_pe = where[:n_dram], where[n_dram:]
    else:  # lexsort: last key first; stable, so equal keys keep PE-then-DRAM input order
        start = np.concatenate((pe[3], dram[3]))
        is_pe = np.arange(n_pe + n_dram) < n_pe
        order = np.lexsort((np.concatenate((pe[4], dram[4])), is_pe, start))
        where = np.empty(n_pe + n_dram, dtype=np.int64)
        where[order] = np.arange(n_pe + n_dram)
        to_pe, to_dram = where[:n_pe], where[n_pe:]
    # scatter each column into place (fewer large temporaries than concatenate-and-gather;
    # small integer types: fresh pages cost more than the copies on a busy machine)
    cols = []
    for k, dtype in enumerate((np.int32,) * 3 + (np.float64,) * 2):
        out = np.empty(n_pe + n_dram, dtype=dtype)
        out[to_pe] = pe[k]
        out[to_dram] = dram[k]
        cols.append(out)
    resource = np.zeros(n_pe + n_dram, dtype=np.int8)
    resource[to_dram] = 1
    return IntervalColumns(RESOURCES, tuple(tenants), tuple(tuple(u) for u in units),
                           resource, *cols)


def _in_order(start: np.ndarray, end: np.ndarray) -> bool:
    """Whether rows are sorted by (start, end), so a stable sort would keep them in place."""
    if start.size < 2:
        return True
    ds = start[1:] - start[:-1]
    return bool(np.all((ds > 0) | ((ds == 0) & (end[1:] >= end[:-1]))))

