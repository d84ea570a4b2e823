"""``RequestIndex``: a run's request records as arrays, grouped by tenant once for every metric.

The closed-loop metrics read each tenant's requests in finishing order (STP, fairness and
throughput sum their progress, ANTT averages their slowdowns). The index reads the records'
fields into arrays once, on first use of each, and groups the rows by tenant (tenants in
first-seen order, each tenant's rows by finish, ties in record order: what
``common.group_by_tenant`` gives), so every metric is a few array expressions.

A sequence that offers ``columns()`` (``npuweave.sim.RequestColumns``, a closed loop's
records kept as arrays) is indexed from its arrays, without building a record. Every request
of one of its tenants is the same work (one model at one batch size), so a standalone time is
looked up once per tenant there (``singles``); for plain records, once per record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import numpy as np

_FIELDS = ("request", "arrival_s", "start_s", "finish_s")


class RequestIndex(Sequence[Any]):
    """Request records with their fields as arrays and their rows grouped by tenant.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> rs = [R(tenant="b", index=0, arrival_s=0.0, start_s=0.0, finish_s=3.0),
    ...       R(tenant="a", index=0, arrival_s=0.0, start_s=1.0, finish_s=2.0),
    ...       R(tenant="b", index=1, arrival_s=3.0, start_s=3.0, finish_s=2.5)]
    >>> ix = RequestIndex(rs)
    >>> ix.tenants, [ix.rows(k).tolist() for k in range(2)], ix.last_finish()
    (('b', 'a'), [[2, 0], [1]], {'b': 3.0, 'a': 2.0})
    """

    __slots__ = ("records", "uniform", "_cols", "_tenants", "_groups", "_memo")

    def __init__(self, records: Sequence[Any]) -> None:
        self.records = records
        self._cols: dict[str, np.ndarray] = {}
        self._tenants: tuple[tuple[Any, ...], np.ndarray] | None = None
        self._groups: tuple[np.ndarray, np.ndarray, bool] | None = None
        self._memo: dict[Any, Any] = {}
        columns = getattr(records, "columns", None)
        #: every request of a tenant is the same work: one standalone time per tenant
        self.uniform = callable(columns)
        if callable(columns):
            tenant, names, *values = columns()
            self._tenants = _present(np.asarray(tenant, np.int64), names)
            self._cols.update(zip(_FIELDS, values))

    # -- columns, read on first use ----------------------------------------------------------
    def _column(self, name: str) -> np.ndarray:
        if name not in self._cols:
            attr = "index" if name == "request" else name
            dtype = np.int64 if name == "request" else np.float64
            self._cols[name] = np.array([getattr(r, attr) for r in self.records], dtype)
        return self._cols[name]

    @property
    def request(self) -> np.ndarray:
        """Each record's request index within its tenant (int64)."""
        return self._column("request")

    @property
    def arrival_s(self) -> np.ndarray:
        return self._column("arrival_s")

    @property
    def start_s(self) -> np.ndarray:
        return self._column("start_s")

    @property
    def finish_s(self) -> np.ndarray:
        return self._column("finish_s")

    def _coded(self) -> tuple[tuple[Any, ...], np.ndarray]:
        if self._tenants is None:
            names = [r.tenant for r in self.records]
            table = {v: i for i, v in enumerate(dict.fromkeys(names))}
            codes = np.fromiter(map(table.__getitem__, names), np.int64, len(names))
            self._tenants = tuple(table), codes
        return self._tenants

    @property
    def tenants(self) -> tuple[Any, ...]:
        """Tenant names in first-seen order (a tenant's code is its position here)."""
        return self._coded()[0]

    @property
    def tenant(self) -> np.ndarray:
        """Each record's tenant code."""
        return self._coded()[1]

    # -- grouping -----------------------------------------------------------------------------
    def _grouped(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """``order`` (rows by tenant code, then finish, ties in record order), ``bounds``
        (tenant ``k``'s rows are ``order[bounds[k]:bounds[k + 1]]``) and whether some finish
        is NaN."""
        if self._groups is None:
            tenant, finish = self.tenant, self.finish_s
            nan = bool(np.isnan(finish).any())
            if nan:  # Python's sort, as group_by_tenant makes it
                rows = [[] for _ in self.tenants]  # type: list[list[int]]
                for i, k in enumerate(tenant.tolist()):
                    rows[k].append(i)
                f = finish.tolist()
                order = np.array([i for per in rows for i in sorted(per, key=f.__getitem__)],
                                 np.int64)
                grouped = tenant[order]
            elif _in_order(tenant, finish):  # a closed loop's records, by tenant and request
                order, grouped = np.arange(tenant.size), tenant
            else:
                order = np.lexsort((finish, tenant))  # stable: ties keep record order
                grouped = tenant[order]
            bounds = np.searchsorted(grouped, np.arange(len(self.tenants) + 1))
            self._groups = order, bounds, nan
        return self._groups

    def rows(self, k: int) -> np.ndarray:
        """Tenant ``k``'s rows in finishing order."""
        order, bounds, _ = self._grouped()
        return order[bounds[k]:bounds[k + 1]]

    def last_finish(self) -> dict[Any, float]:
        """Each tenant's latest finish (NaN finishes skipped; tenants with none left out)."""
        order, bounds, nan = self._grouped()
        if nan:
            finish = np.where(np.isnan(self.finish_s), -np.inf, self.finish_s)
            top = [float(finish[self.rows(k)].max()) for k in range(len(self.tenants))]
        else:  # each tenant's rows by finish: its last row finishes last
            top = self.finish_s[order[bounds[1:] - 1]].tolist()
        return {name: last for name, last in zip(self.tenants, top) if last > -np.inf}

    def singles(self, single: Callable[[Any], float], rows: np.ndarray | slice) -> np.ndarray:
        """``single(record)`` of the records at ``rows``: once per tenant where every
        request of a tenant is the same work (``uniform``), else once per record."""
        if not self.uniform:
            at = range(len(self))[rows] if isinstance(rows, slice) else rows.tolist()
            return np.array([single(self.records[i]) for i in at], np.float64)
        return np.array(self.first_singles(single), np.float64)[self.tenant[rows]]

    def first_singles(self, single: Callable[[Any], float]) -> list[Any]:
        """``single`` of each tenant's first record in finishing order, as it returns them,
        looked up once per function for this index."""
        def make() -> list[Any]:
            return [single(self.records[int(self.rows(k)[0])])
                    for k in range(len(self.tenants))]

        return self.memo(("first_singles", single), make)

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``, computed once per ``key`` for this index (shared by the metrics)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # -- the records --------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        return self.records[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.records)


def _present(codes: np.ndarray, names: Sequence[Any]) -> tuple[tuple[Any, ...], np.ndarray]:
    """The tenants that have records, in first-seen order, and each record's code among
    them (a column source names every tenant of the run, some maybe without a record)."""
    order = first_seen(codes)
    if order == list(range(len(names))):  # every tenant, in code order: the codes as given
        return tuple(names), codes
    remap = np.empty(len(names), np.int64)
    remap[order] = np.arange(len(order))
    return tuple(names[c] for c in order), remap[codes]


def first_seen(codes: np.ndarray) -> list[int]:
    """The distinct non-negative ``codes`` in the order they first appear (ascending when
    the codes never decrease, as a run's records by tenant; counted, not sorted, then).

    Examples
    --------
    >>> first_seen(np.array([2, 0, 2, 1])), first_seen(np.array([0, 0, 3]))
    ([2, 0, 1], [0, 3])
    """
    if not codes.size:
        return []
    if (codes[1:] >= codes[:-1]).all():
        return np.bincount(codes).nonzero()[0].tolist()
    present, first = np.unique(codes, return_index=True)
    return present[np.argsort(first)].tolist()


def _in_order(tenant: np.ndarray, finish: np.ndarray) -> bool:
    """Whether rows are already by tenant code, then finish (a stable sort keeps them)."""
    same = tenant[1:] == tenant[:-1]
    return bool(((tenant[1:] > tenant[:-1]) | (same & (finish[1:] >= finish[:-1]))).all())


def as_requests(requests: Any) -> RequestIndex:
    """``requests`` itself when already indexed, else a new index of them (a sequence is
    indexed as given; other iterables are read into a tuple first)."""
    if isinstance(requests, RequestIndex):
        return requests
    return RequestIndex(requests if isinstance(requests, Sequence) else tuple(requests))
