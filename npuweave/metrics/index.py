"""``IntervalIndex``: a run's busy intervals as arrays, grouped once for every metric.

The closed-loop metrics (STP, fairness, throughput, utilization, makespan) all read the same
intervals: by (tenant, request) for progress and by resource for busy time. Building those
groupings once per run instead of once per metric and tenant is what makes them cheap
(``docs/ARRIVALS_METRICS.md``). The index iterates and measures like the sequence it was built
from, so code that only knows sequences of intervals still works when handed one.

Everything is built on first use. Progress needs, per request, whether it did any work, its
earliest start and latest end (``reach_of``), and only for a request that straddles the window
its busy seconds inside and in all (``work_split``, from its own spans); a source that offers
``request_reach()`` and ``request_spans()`` (``npuweave.sim.IntervalColumns``: read from the
simulator's runs as they are) answers without its rows being sorted. The arithmetic is
element-wise in NumPy and every per-request total is its values added one at a time in
interval order (``np.bincount`` does so, as Python's ``sum``), so the numbers are the very
floats the record-by-record code gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from npuweave.errors import ConfigError

Spans = tuple[np.ndarray, np.ndarray]


class Columns(NamedTuple):
    """An index's intervals as arrays (codes into name tables)."""

    resource: np.ndarray
    resources: dict[Any, int]
    tenant: np.ndarray
    tenants: tuple[Any, ...]
    request: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray


class Work(NamedTuple):
    """Per request (``slot``): some busy time, earliest start, latest end, and the busy
    seconds in interval order (None: asked of the source on first use)."""

    tenants: dict[Any, int]  # tenant name -> code
    span: int  # slot = code * span + request - offset (or its rank in ``keys``)
    offset: int
    keys: np.ndarray | None  # sorted keys of a sparse index, None when slots are dense
    worked: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    total: np.ndarray | None


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

    __slots__ = ("records", "_cols", "_work", "_total", "_groups", "_merged")

    def __init__(self, records: Sequence[Any]) -> None:
        self.records = records
        self._cols: Columns | None = None
        self._work: Work | None = None
        self._total: np.ndarray | None = None
        self._groups: _Slices | None = None
        self._merged: dict[str, Spans] = {}

    @classmethod
    def build(cls, intervals: Iterable[Any]) -> IntervalIndex:
        """Index ``intervals`` (anything with resource, tenant, request, start_s, end_s).

        A sequence that also offers ``columns()`` (``npuweave.sim.IntervalColumns``: resource
        codes and names, tenant codes and names, request, start_s, end_s arrays) is indexed
        from its arrays, without reading one record; one that offers ``request_reach()``,
        ``request_spans()`` and ``request_totals()`` too gives the per-request work without
        its columns.
        """
        return cls(intervals if isinstance(intervals, Sequence) else tuple(intervals))

    # -- the arrays, built on first use -------------------------------------------------------
    def columns(self) -> Columns:
        """The intervals as ``Columns``."""
        if self._cols is None:
            self._cols = _columns(self.records)
        return self._cols

    @property
    def resource(self) -> tuple[np.ndarray, dict[Any, int]]:
        """Resource codes, and the code of each resource name."""
        c = self.columns()
        return c.resource, c.resources

    @property
    def start_s(self) -> np.ndarray:
        return self.columns().start_s

    @property
    def end_s(self) -> np.ndarray:
        return self.columns().end_s

    def work(self) -> Work:
        """Per-request reach and the slot table (``Work``)."""
        if self._work is None:
            hook = getattr(self.records, "request_reach", None)
            if callable(hook):
                span, worked, lo, hi = hook()
                names = self.records.tenants  # type: ignore[attr-defined]
                self._work = Work({t: k for k, t in enumerate(names)}, span, 0, None, worked,
                                  lo, hi, None)
            else:
                self._work = _work(self.columns())
        return self._work

    def _totals(self) -> np.ndarray:
        """Each slot's busy seconds in interval order (the source's, on first use)."""
        if self._total is None:
            total = self.work().total
            self._total = total if total is not None else np.asarray(
                self.records.request_totals())  # type: ignore[attr-defined]
        return self._total

    def __iter__(self) -> Iterator[Any]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def max_end(self) -> float:
        """End of the last interval (0.0 when there is none), as ``max`` over the records."""
        end = self.end_s
        return float(end.max()) if end.size else 0.0

    # -- per request ------------------------------------------------------------------------
    def reach_of(self, tenants: Sequence[Any], tenant: np.ndarray,
                 request: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(worked, lo, hi)`` per request: whether its busy seconds are > 0 (False without
        intervals), earliest start and latest end (``inf``, ``-inf`` without intervals) of
        request ``request[i]`` of tenant ``tenants[tenant[i]]``."""
        w = self.work()
        if tuple(w.tenants) == tuple(tenants):  # the same names in the same order (one run)
            codes = np.asarray(tenant, np.int64)
        else:
            codes = np.array([w.tenants.get(t, -1) for t in tenants], np.int64)[tenant]
        request = np.asarray(request, np.int64)
        if _dense(w, codes, request):  # every request has a slot: read them straight
            slot = codes * w.span + (request - w.offset if w.offset else request)
            return w.worked[slot], w.lo[slot], w.hi[slot]
        slot, found = _slots(w, codes, request)
        return (found & w.worked[slot], np.where(found, w.lo[slot], np.inf),
                np.where(found, w.hi[slot], -np.inf))

    def work_total(self, tenant: Any, request: int) -> float:
        """Busy seconds of one request (PE and DRAM together; 0.0 when it has none)."""
        k = _slot(self.work(), tenant, request)
        return float(self._totals()[k]) if k >= 0 else 0.0

    def work_inside(self, tenant: Any, request: int, t0: float, t1: float) -> float:
        """Busy seconds of one request clipped to ``[t0, t1]``."""
        return self.work_split(tenant, request, t0, t1)[0]

    def work_split(self, tenant: Any, request: int, t0: float,
                   t1: float) -> tuple[float, float]:
        """``(inside, total)``: busy seconds of one request clipped to ``[t0, t1]``, and in
        all, each added in interval order from its own spans (the same floats as
        ``work_total``); ``(0.0, 0.0)`` when it has no interval."""
        w = self.work()
        k = _slot(w, tenant, request)
        if k < 0:
            return 0.0, 0.0
        hook = getattr(self.records, "request_split", None)
        if callable(hook):  # one pass over the source's runs
            split = hook(w.tenants[tenant], int(request), t0, t1)
            if split is not None:
                return split
        s, e = self.spans(tenant, request)
        total = float(sum((e - s).tolist()))
        if t0 <= w.lo[k] and w.hi[k] <= t1:
            return total, total  # every span inside: the clipped sum is the same sum
        return float(sum(np.maximum(0.0, np.minimum(e, t1) - np.maximum(s, t0)).tolist())), total

    def spans(self, tenant: Any, request: int) -> Spans:
        """``(start_s, end_s)`` of one request's intervals, in interval order."""
        hook = getattr(self.records, "request_spans", None)
        code = self.work().tenants.get(tenant, -1)
        if callable(hook) and self._cols is None and code >= 0:
            return hook(code, int(request))
        c = self.columns()
        code = {t: k for k, t in enumerate(c.tenants)}.get(tenant, -1)
        pick = (c.tenant == code) & (c.request == request)
        return c.start_s[pick], c.end_s[pick]

    @property
    def groups(self) -> Mapping[tuple[Any, int], Spans]:
        """Each request's ``(starts, ends)`` in interval order, requests in first-seen order."""
        if self._groups is None:
            self._groups = _group(self.columns())
        return self._groups

    @property
    def totals(self) -> dict[tuple[Any, int], float]:
        """Each request's busy seconds, in the order of ``groups``."""
        return {k: self.work_total(*k) for k in self.groups}

    def merged(self, resource: str) -> Spans:
        """The union of ``resource``'s intervals as sorted disjoint spans (cached)."""
        if resource not in self._merged:
            codes, table = self.resource
            pick = codes == table.get(resource, -1)
            self._merged[resource] = merge_arrays(self.start_s[pick], self.end_s[pick])
        return self._merged[resource]


def _columns(records: Sequence[Any]) -> Columns:
    columns = getattr(records, "columns", None)
    if callable(columns):
        res, res_names, ten, ten_names, request, start_s, end_s = columns()
        return Columns(np.asarray(res), {name: i for i, name in enumerate(res_names)},
                       np.asarray(ten), tuple(ten_names), np.asarray(request),
                       np.asarray(start_s, np.float64), np.asarray(end_s, np.float64))
    # one list comprehension per field is the cheapest way to read slotted records
    res, res_table = _codes([iv.resource for iv in records])
    ten, ten_table = _codes([iv.tenant for iv in records])
    return Columns(res, res_table, ten, tuple(ten_table),
                   np.array([iv.request for iv in records], np.int64),
                   np.array([iv.start_s for iv in records], np.float64),
                   np.array([iv.end_s for iv in records], np.float64))


def _codes(values: Sequence[Any]) -> tuple[np.ndarray, dict[Any, int]]:
    """Small integer codes of ``values`` in first-seen order, and the code of each value."""
    table = {v: i for i, v in enumerate(dict.fromkeys(values))}  # C loops, not a Python one
    codes = np.fromiter(map(table.__getitem__, values), dtype=np.int64, count=len(values))
    return codes, table


def _work(c: Columns) -> Work:
    """``Work`` from columns: dense slots ``code * span + request - offset`` where they are
    few enough, else the sorted distinct keys."""
    request = c.request.astype(np.int64)
    offset = int(request.min()) if request.size else 0
    span = int(request.max()) - offset + 1 if request.size else 1
    key = c.tenant.astype(np.int64) * span + (request - offset)
    keys = None
    n = len(c.tenants) * span
    if n > 4 * key.size + 4096:  # sparse request numbers: slots by rank
        keys, key = np.unique(key, return_inverse=True)
        n = keys.size
    n = max(n, 1)  # a slot to read (and ignore) when nothing is found
    # bincount adds each slot's weights one at a time in row order: Python's ``sum``
    total = np.bincount(key, weights=c.end_s - c.start_s, minlength=n)
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(lo, key, c.start_s)
    np.maximum.at(hi, key, c.end_s)
    return Work({t: k for k, t in enumerate(c.tenants)}, span, offset, keys, total > 0, lo, hi,
                total)


def _dense(w: Work, codes: np.ndarray, request: np.ndarray) -> bool:
    """Whether every ``(tenant code, request)`` has a slot in ``w``'s dense slots."""
    return bool(w.keys is None and codes.size and codes.min() >= 0
                and request.min() >= w.offset and request.max() - w.offset < w.span)


def _slots(w: Work, codes: np.ndarray, request: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slot of each ``(tenant code, request)`` in ``w`` and whether it has one."""
    r = request - w.offset
    found = (codes >= 0) & (r >= 0) & (r < w.span)
    key = np.where(found, codes * w.span + r, 0)
    if w.keys is None:
        return key, found
    pos = np.minimum(np.searchsorted(w.keys, key), w.keys.size - 1)  # keys: never empty
    found &= w.keys[pos] == key
    return np.where(found, pos, 0), found


def _slot(w: Work, tenant: Any, request: int) -> int:
    """``_slots`` of one request (-1: none)."""
    code, r = w.tenants.get(tenant, -1), int(request) - w.offset
    if code < 0 or not 0 <= r < w.span:
        return -1
    key = code * w.span + r
    if w.keys is None:
        return key
    pos = int(np.searchsorted(w.keys, key))
    return pos if pos < w.keys.size and w.keys[pos] == key else -1


def _group(c: Columns) -> _Slices:
    """Each (tenant, request)'s rows, groups in first-seen order, rows in interval order."""
    request = c.request.astype(np.int64)
    offset = int(request.min()) if request.size else 0
    span = int(request.max()) - offset + 1 if request.size else 1
    keys = c.tenant.astype(np.int64) * span + (request - offset)
    order = np.argsort(keys, kind="stable")  # stable: keeps interval order within a group
    sorted_keys = keys[order]
    cut = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    lo = np.concatenate(([0], cut)).astype(np.int64) if keys.size else cut
    hi = np.append(lo[1:], keys.size)
    rank = np.argsort(order[lo], kind="stable")  # groups in first-seen order
    names = [(c.tenants[k // span], k % span + offset) for k in sorted_keys[lo].tolist()]
    bounds = {names[g]: (int(lo[g]), int(hi[g])) for g in rank.tolist()}
    return _Slices(bounds, c.start_s[order], c.end_s[order])


class _Slices(Mapping[tuple[Any, int], Spans]):
    """Each request's ``(starts, ends)``, sliced from the grouped arrays when asked for.

    Examples
    --------
    >>> s = _Slices({("a", 0): (1, 3)}, np.arange(4.0), np.arange(4.0) + 1)
    >>> list(s), s["a", 0][1].tolist()
    ([('a', 0)], [2.0, 3.0])
    """

    def __init__(self, bounds: dict[tuple[Any, int], tuple[int, int]], starts: np.ndarray,
                 ends: np.ndarray) -> None:
        self._bounds, self._starts, self._ends = bounds, starts, ends

    def __getitem__(self, key: tuple[Any, int]) -> Spans:
        lo, hi = self._bounds[key]
        return self._starts[lo:hi], self._ends[lo:hi]

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        return iter(self._bounds)

    def __len__(self) -> int:
        return len(self._bounds)


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
