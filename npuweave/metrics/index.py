"""``IntervalIndex``: a run's busy intervals as arrays, grouped once for every metric.

The closed-loop metrics (STP, fairness, throughput, utilization, makespan) all read the same
intervals: by (tenant, request) for progress and by resource for busy time. Building those
groupings once per run instead of once per metric and tenant is what makes them cheap
(``docs/ARRIVALS_METRICS.md``). The index iterates and measures like the sequence it was built
from, so code that only knows sequences of intervals still works when handed one.

The arithmetic is element-wise in NumPy and every sum is Python's ``sum`` over the values in
interval order, so the numbers are the very floats the record-by-record code gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from npuweave.errors import ConfigError

_FIELDS = attrgetter("resource", "tenant", "request", "start_s", "end_s")
Spans = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True, slots=True, eq=False)
class IntervalIndex:
    """Busy intervals as arrays: per resource, and per (tenant, request) in interval order.

    Examples
    --------
    >>> from types import SimpleNamespace as I
    >>> ivs = [I(resource="PE", tenant="a", request=0, start_s=0.0, end_s=2.0),
    ...        I(resource="DRAM", tenant="a", request=0, start_s=1.0, end_s=3.0)]
    >>> ix = IntervalIndex.build(ivs)
    >>> ix.work_total("a", 0), ix.max_end, len(ix)
    (4.0, 3.0, 2)
    """

    records: Sequence[Any]
    resource: tuple[np.ndarray, dict[Any, int]]
    start_s: np.ndarray
    end_s: np.ndarray
    groups: Mapping[tuple[str, int], Spans]
    totals: dict[tuple[str, int], float]
    _merged: dict[str, Spans] = field(default_factory=dict)
    # per group: (earliest start, latest end), filled on first use (or by _from_columns)
    _reach: dict[tuple[str, int], tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def build(cls, intervals: Iterable[Any]) -> IntervalIndex:
        """Index ``intervals`` (anything with resource, tenant, request, start_s, end_s).

        A sequence that also offers ``columns()`` (``npuweave.sim.IntervalColumns``: resource
        codes and names, tenant codes and names, request, start_s, end_s arrays) is indexed
        from its arrays, without reading one record.
        """
        columns = getattr(intervals, "columns", None)
        if callable(columns):
            return cls._from_columns(intervals, *columns())
        records = intervals if isinstance(intervals, Sequence) else tuple(intervals)
        # one list comprehension per field is the cheapest way to read slotted records
        start_s = np.array([iv.start_s for iv in records], dtype=np.float64)
        end_s = np.array([iv.end_s for iv in records], dtype=np.float64)
        resource = [iv.resource for iv in records]
        keys = list(zip([iv.tenant for iv in records], [iv.request for iv in records],
                        strict=True))
        groups = _group(keys, start_s, end_s)
        totals = {k: sum((e - s).tolist()) for k, (s, e) in groups.items()}
        return cls(records, _codes(resource), start_s, end_s, groups, totals)

    @classmethod
    def _from_columns(cls, records: Any, res: np.ndarray, res_names: Sequence[Any],
                      ten: np.ndarray, ten_names: Sequence[Any], request: np.ndarray,
                      start_s: np.ndarray, end_s: np.ndarray) -> IntervalIndex:
        """``build`` from code arrays; groups in first-seen order, as ``build`` makes them."""
        start_s = np.asarray(start_s, dtype=np.float64)
        end_s = np.asarray(end_s, dtype=np.float64)
        span = int(request.max()) + 1 if request.size else 1
        # stable: keeps interval order within a group; keys of 16 bits where they fit, which
        # NumPy sorts by radix (one pass) rather than by merging
        wide = np.int64 if len(ten_names) * span >= 1 << 16 else np.uint16
        keys = np.asarray(ten).astype(wide) * wide(span) + np.asarray(request).astype(wide)
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        ss, es = start_s[order], end_s[order]
        cut = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
        lo = np.concatenate(([0], cut)).astype(np.int64) if keys.size else cut
        hi = np.append(lo[1:], keys.size)
        first = order[lo]  # groups in first-seen order, as ``build`` lists them
        rank = np.argsort(first, kind="stable")
        low = np.minimum.reduceat(ss, lo) if keys.size else ss
        high = np.maximum.reduceat(es, lo) if keys.size else es
        sums = _segment_sums(es - ss, lo, hi)
        names = [(ten_names[k // span], k % span) for k in sorted_keys[lo].tolist()]
        ranked = rank.tolist()
        keys_in_order = [names[g] for g in ranked]
        groups = _Slices(dict(zip(keys_in_order, zip(lo[rank].tolist(), hi[rank].tolist()))),
                         ss, es)
        totals = dict(zip(keys_in_order, sums[rank].tolist()))
        reach = dict(zip(keys_in_order, zip(low[rank].tolist(), high[rank].tolist())))
        table = {name: i for i, name in enumerate(res_names)}
        return cls(records, (np.asarray(res), table), start_s, end_s, groups, totals,
                   _reach=reach)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def max_end(self) -> float:
        """End of the last interval (0.0 when there is none), as ``max`` over the records."""
        return float(self.end_s.max()) if self.end_s.size else 0.0

    def work_total(self, tenant: str, request: int) -> float:
        """Busy seconds of one request (PE and DRAM together; 0.0 when it has none)."""
        return self.totals.get((tenant, request), 0.0)

    def work_inside(self, tenant: str, request: int, t0: float, t1: float) -> float:
        """Busy seconds of one request clipped to ``[t0, t1]``."""
        key = (tenant, request)
        spans = self.groups.get(key)
        if spans is None:
            return 0.0
        s, e = spans
        reach = self._reach.get(key)
        if reach is None:
            reach = self._reach[key] = (float(s.min()), float(e.max()))
        if t0 <= reach[0] and reach[1] <= t1:
            return self.totals[key]  # every span inside: the clipped sum is the same sum
        return sum(np.maximum(0.0, np.minimum(e, t1) - np.maximum(s, t0)).tolist())

    def merged(self, resource: str) -> Spans:
        """The union of ``resource``'s intervals as sorted disjoint spans (cached)."""
        if resource not in self._merged:
            codes, table = self.resource
            pick = codes == table.get(resource, -1)
            self._merged[resource] = merge_arrays(self.start_s[pick], self.end_s[pick])
        return self._merged[resource]


class _Slices(Mapping[tuple[str, int], Spans]):
    """Each request's ``(starts, ends)``, sliced from the grouped arrays when asked for (most
    requests of a window never are: their totals and reach answer for them).

    Examples
    --------
    >>> s = _Slices({("a", 0): (1, 3)}, np.arange(4.0), np.arange(4.0) + 1)
    >>> list(s), s["a", 0][1].tolist()
    ([('a', 0)], [2.0, 3.0])
    """

    def __init__(self, bounds: dict[tuple[str, int], tuple[int, int]], starts: np.ndarray,
                 ends: np.ndarray) -> None:
        self._bounds, self._starts, self._ends = bounds, starts, ends

    def __getitem__(self, key: tuple[str, int]) -> Spans:
        lo, hi = self._bounds[key]
        return self._starts[lo:hi], self._ends[lo:hi]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self._bounds)

    def __len__(self) -> int:
        return len(self._bounds)


def _codes(values: Sequence[Any]) -> tuple[np.ndarray, dict[Any, int]]:
    """Small integer codes of ``values`` in first-seen order, and the code of each value."""
    table = {v: i for i, v in enumerate(dict.fromkeys(values))}  # C loops, not a Python one
    codes = np.fromiter(map(table.__getitem__, values), dtype=np.int64, count=len(values))
    return codes, table


def _group(keys: Sequence[tuple[Any, int]], start_s: np.ndarray,
           end_s: np.ndarray) -> dict[tuple[Any, int], Spans]:
    codes, table = _codes(keys)
    order = np.argsort(codes, kind="stable")  # stable: keeps interval order within a group
    bounds = np.searchsorted(codes[order], np.arange(len(table) + 1))
    out: dict[tuple[Any, int], Spans] = {}
    for key, code in table.items():
        rows = order[bounds[code]:bounds[code + 1]]
        out[key] = (start_s[rows], end_s[rows])
    return out


def _segment_sums(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``sum(x[lo[g]:hi[g]].tolist())`` for every segment ``g``, added left to right as
    Python's ``sum`` does: segment ``g`` becomes column ``g`` of a matrix, zero-padded below,
    and the rows are added one at a time (each column's sum is sequential, unlike ``np.sum``;
    the padding adds ``0.0``, which changes no sum).

    Examples
    --------
    >>> x = np.array([0.1, 0.2, 0.3, 5.0])
    >>> _segment_sums(x, np.array([0, 3]), np.array([3, 4])).tolist() == [(0.1 + 0.2) + 0.3,
    ...                                                                    5.0]
    True
    """
    groups = lo.size
    if not groups:
        return np.zeros(0)
    length = hi - lo
    mat = np.zeros((int(length.max()), groups))
    # x[i] of segment g goes to row i - lo[g], column g: flat index i * groups + g - lo[g] *
    # groups
    mat.ravel()[np.arange(x.size) * groups + np.repeat(np.arange(groups) - lo * groups,
                                                        length)] = x
    sums = np.zeros(groups)
    for row in mat:
        sums += row
    return sums


def merge_arrays(start_s: np.ndarray, end_s: np.ndarray) -> Spans:
    """Union of spans given as two arrays, as sorted disjoint ``(starts, ends)`` arrays.

    A span joins the current group when it starts at or before the group's furthest end,
    exactly as the record-by-record merge does; ends are the running maxima, not sums, so the
    values are the inputs' own floats.
    """
    if np.any(end_s < start_s):
        bad = int(np.flatnonzero(end_s < start_s)[0])
        raise ConfigError(f"interval ({start_s[bad]}, {end_s[bad]}) ends before it starts")
    if start_s.size == 0:
        return start_s, end_s
    order = np.lexsort((end_s, start_s))
    s, e = start_s[order], end_s[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:] - 1, [s.size - 1]))
    return s[first], reach[last]


def clipped_sum(starts: np.ndarray, ends: np.ndarray, lo: float, hi: float) -> float:
    """``sum(max(0, min(b, hi) - max(a, lo)))`` over spans, summed in order as Python does."""
    return float(sum(np.maximum(0.0, np.minimum(ends, hi) - np.maximum(starts, lo)).tolist()))


def as_index(intervals: Iterable[Any]) -> IntervalIndex:
    """``intervals`` itself when already indexed, else a new index of them."""
    return intervals if isinstance(intervals, IntervalIndex) else IntervalIndex.build(intervals)
