"""``SimResult``: everything one simulation run leaves behind, frozen.

The engine (``npuweave.sim.engine``) fills it; ``npuweave.metrics`` and ``npuweave.report``
read it. Times are seconds from the start of the run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, overload

import numpy as np

from npuweave.errors import ConfigError, optional_module
from npuweave.sim.records import Interval, RequestRecord


@dataclass(frozen=True, slots=True)
class SimResult:
    """One run of a scenario on the NPU engine.

    Attributes
    ----------
    intervals : busy intervals, one per unit on ``"PE"`` (zero-length ones included, so every
        scheduled unit appears exactly once) and one per transferred part on ``"DRAM"``; a
        tuple, or for closed-loop runs an ``IntervalColumns`` (the same records, stored as
        arrays and built on first use).
    requests : one record per finished request, ordered by tenant, then request index; a
        tuple, or for the closed-loop fast path a ``RequestColumns`` (the same records,
        stored as arrays and built on first use).
    makespan_s : time the last unit finished (0 when nothing ran).
    pe_busy_s, dram_busy_s : total busy time of the PE array and of the DRAM interface.
    notes : remarks a reader must see (e.g. the Layerweaver failsafe applied).
    scheduler : the registered name of the policy that produced the order.
    tenants : tenant labels in input order (a model given twice gets ``"name#2"``).
    path : which simulation path produced the result and why (``"engine: ..."`` or
        ``"closed-loop fast path: ..."``); not part of equality, since every path must give
        the same result.
    """

    intervals: Sequence[Interval]
    requests: Sequence[RequestRecord]
    makespan_s: float
    pe_busy_s: float
    dram_busy_s: float
    notes: tuple[str, ...] = ()
    scheduler: str = ""
    tenants: tuple[str, ...] = ()
    path: str = field(default="", compare=False)

    @property
    def pe_utilization(self) -> float:
        """PE busy time over the makespan (0 for an empty run)."""
        return self.pe_busy_s / self.makespan_s if self.makespan_s > 0 else 0.0

    @property
    def dram_utilization(self) -> float:
        """DRAM busy time over the makespan (0 for an empty run)."""
        return self.dram_busy_s / self.makespan_s if self.makespan_s > 0 else 0.0

    def to_dataframe(self, what: str = "requests") -> Any:
        """``"requests"`` (one row per request, with its latency) or ``"intervals"`` (one row
        per busy interval, with its duration) as a ``pandas.DataFrame`` (``pandas`` extra).

        Examples
        --------
        >>> result.to_dataframe("intervals").groupby("resource").duration_s.sum()  # doctest: +SKIP
        """
        pd = optional_module("pandas", "pandas")
        if what == "requests":
            rows = [{**asdict(r), "latency_s": r.latency_s} for r in self.requests]
            cols = [*RequestRecord.__dataclass_fields__, "latency_s"]
        elif what == "intervals":
            rows = [{**asdict(iv), "duration_s": iv.duration_s} for iv in self.intervals]
            cols = [*Interval.__dataclass_fields__, "duration_s"]
        else:
            raise ConfigError(f'to_dataframe: what must be "requests" or "intervals", got {what!r}')
        return _floats_with_nan(pd.DataFrame(rows, columns=cols))


def _floats_with_nan(frame: Any) -> Any:
    """Columns of numbers with gaps (``deadline_s`` is None without a deadline) as float64
    with NaN, not pandas' ``object`` dtype, so ``.mean()``, comparisons and Parquet work."""
    for col in frame.columns[frame.dtypes == "object"]:
        values = frame[col].dropna()
        if len(values) < len(frame) and all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            frame[col] = frame[col].astype("float64")
    return frame


@dataclass(frozen=True, slots=True, eq=False)
class RequestColumns(Sequence[RequestRecord]):
    """A closed loop's request records as arrays, read as ``RequestRecord``s.

    Each tenant runs one model at one batch size (``models``, ``batches``: per tenant code).
    ``npuweave.metrics`` reads the arrays (``columns``); everything else sees the records,
    built on first use. Equal to a tuple of the same records.

    Examples
    --------
    >>> cols = RequestColumns(("a",), ("m",), (2,), np.array([0, 0]), np.array([0, 1]),
    ...                       np.array([0.0, 3.0]), np.array([1.0, 3.0]), np.array([3.0, 5.0]))
    >>> len(cols), cols[1].finish_s, cols[1].batch, cols == tuple(cols)
    (2, 5.0, 2, True)
    """

    tenants: tuple[str, ...]
    models: tuple[str, ...]
    batches: tuple[int, ...]
    tenant: np.ndarray
    request: np.ndarray
    arrival_s: np.ndarray
    start_s: np.ndarray
    finish_s: np.ndarray
    _rows: list[tuple[RequestRecord, ...]] = field(default_factory=list, init=False,
                                                    repr=False)

    def columns(self) -> tuple[np.ndarray, tuple[str, ...], np.ndarray, np.ndarray,
                               np.ndarray, np.ndarray]:
        """``(tenant codes, tenant names, request index, arrival_s, start_s, finish_s)``:
        what ``npuweave.metrics.RequestIndex`` reads without building records."""
        return (self.tenant, self.tenants, self.request, self.arrival_s, self.start_s,
                self.finish_s)

    def rows(self) -> tuple[RequestRecord, ...]:
        """Every request as a ``RequestRecord`` (built once, then kept)."""
        if not self._rows:
            self._rows.append(tuple(self._record(*row) for row in zip(
                self.tenant.tolist(), self.request.tolist(), self.arrival_s.tolist(),
                self.start_s.tolist(), self.finish_s.tolist())))
        return self._rows[0]

    def _record(self, t: int, k: int, a: float, s: float, f: float) -> RequestRecord:
        return RequestRecord(self.tenants[t], self.models[t], k, a, s, f, self.batches[t])

    def __len__(self) -> int:
        return int(self.tenant.shape[0])

    @overload
    def __getitem__(self, i: int) -> RequestRecord: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[RequestRecord, ...]: ...

    def __getitem__(self, i: int | slice) -> RequestRecord | tuple[RequestRecord, ...]:
        if isinstance(i, slice) or self._rows:
            return self.rows()[i]
        j = range(len(self))[i]  # one record, without building the others
        return self._record(int(self.tenant[j]), int(self.request[j]), float(self.arrival_s[j]),
                            float(self.start_s[j]), float(self.finish_s[j]))

    def __iter__(self) -> Iterator[RequestRecord]:
        return iter(self.rows())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RequestColumns, tuple)):
            return self.rows() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.rows())

    def __repr__(self) -> str:
        return f"RequestColumns({len(self)} requests)"
