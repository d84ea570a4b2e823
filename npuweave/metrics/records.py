"""One record per request and per PE segment: the data users want after a serving run.

Built from a ``RequestTable`` (``npuweave.metrics.requests``) and the simulator's segments
(maximal runs of one request on the PE, ``[request, start_s, end_s]`` in time order);
``serve --json`` writes both lists and ``serve --per-request`` the first as a table.
A request's ``preemptions`` here is what the PE shows: the number of times another request
ran between two of its computations (its segments minus one), the count PREMA-style task
sets compare. ``met`` is None for a request without a deadline, False for one never finished.

``RequestRecords`` and ``SegmentRecords`` keep the columns and make the dicts on demand, a
chunk of rows at a time (``row_chunks``, what the JSON and CSV writers stream): a
million-request run never holds a million dicts. ``request_records`` and
``segment_records`` are the same rows as plain lists.

Examples
--------
>>> from npuweave.metrics.requests import request_table
>>> t = request_table(("a",), [0, 0], [0.0, 1.0], [3.0, 2.0], [1.0], start_s=[0.0, 1.0],
...                   deadline_s=[2.5, float("inf")])
>>> segs = [[0, 0.0, 1.0], [1, 1.0, 2.0], [0, 2.0, 3.0]]
>>> recs = request_records(t, preemptions=switches(segs, 2))
>>> [(r["id"], r["met"], r["preemptions"]) for r in recs]
[(0, False, 1), (1, None, 0)]
>>> segment_records(segs, ["x", "y"])[1]
{'id': 'y', 'start_s': 1.0, 'end_s': 2.0}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from npuweave.metrics.requests import Outcome, RequestTable

FIELDS = ("id", "model", "priority", "arrival_s", "start_s", "finish_s", "deadline_s", "met",
          "preemptions", "batch")
SEGMENT_FIELDS = ("id", "start_s", "end_s")
#: Rows turned into dicts at a time when records are streamed (a writer holds one chunk).
CHUNK_ROWS = 8192

Record = dict[str, Any]
Columns = tuple[np.ndarray, np.ndarray, np.ndarray]


def segment_columns(segments: Sequence[Sequence[Any]] | Columns) -> Columns:
    """``(request, start_s, end_s)`` arrays (int64, float64, float64) of segments given as
    ``[request, start_s, end_s]`` rows or already as those three columns."""
    if isinstance(segments, tuple) and len(segments) == 3 and all(
            isinstance(c, np.ndarray) for c in segments):
        rid, start, end = (np.asarray(c) for c in segments)
        return (rid.astype(np.int64, copy=False), start.astype(np.float64, copy=False),
                end.astype(np.float64, copy=False))
    n = len(segments)
    rid = np.fromiter((s[0] for s in segments), np.int64, n)
    start = np.fromiter((s[1] for s in segments), np.float64, n)
    end = np.fromiter((s[2] for s in segments), np.float64, n)
    return rid, start, end


def switches(segments: Sequence[Sequence[Any]] | Columns, n: int) -> np.ndarray:
    """Per request (``0..n-1``): its PE segments minus one (0 for one never run)."""
    rid = segment_columns(segments)[0]
    return np.maximum(np.bincount(rid, minlength=n)[:n] - 1, 0).astype(np.int64)


def _nullable(values: np.ndarray, keep: np.ndarray) -> list[Any]:
    """``values`` as Python numbers, None where ``keep`` is False."""
    if not keep.any():
        return [None] * len(keep)
    out: list[Any] = values.tolist()
    for i in np.flatnonzero(~keep).tolist():
        out[i] = None
    return out


class RowSource(Sequence[Record]):
    """Rows made from columns on demand: indexing, slicing, iteration and ``row_chunks`` (what
    the JSON, CSV and Parquet writers of ``npuweave.fileio`` take without a list)."""

    __slots__ = ()
    fields: tuple[str, ...] = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def columns(self, lo: int, hi: int) -> dict[str, list[Any]]:
        """Rows ``lo`` to ``hi - 1`` as one Python list per field (keys ``fields``)."""
        raise NotImplementedError

    def rows(self, lo: int, hi: int) -> list[Record]:
        """The dicts of rows ``lo`` to ``hi - 1``."""
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> Record: ...

    @overload
    def __getitem__(self, i: slice) -> list[Record]: ...

    def __getitem__(self, i: int | slice) -> Record | list[Record]:
        n = len(self)
        if isinstance(i, slice):
            lo, hi, step = i.indices(n)
            return self.rows(lo, hi)[::step] if step > 0 else [self[j] for j in range(lo, hi,
                                                                                           step)]
        j = int(i) + n if int(i) < 0 else int(i)
        if not 0 <= j < n:
            raise IndexError(f"record {i} out of range for {n} rows")
        return self.rows(j, j + 1)[0]

    def row_chunks(self, size: int | None = None) -> Iterator[list[Record]]:
        """The rows in order, ``size`` (default ``CHUNK_ROWS``) dicts at a time."""
        size = size or CHUNK_ROWS
        for lo in range(0, len(self), size):
            yield self.rows(lo, min(lo + size, len(self)))

    def column_chunks(self, size: int | None = None) -> Iterator[dict[str, list[Any]]]:
        """The rows in order as ``columns``, ``size`` (default ``CHUNK_ROWS``) at a time."""
        size = size or CHUNK_ROWS
        for lo in range(0, len(self), size):
            yield self.columns(lo, min(lo + size, len(self)))

    def __iter__(self) -> Iterator[Record]:
        for chunk in self.row_chunks():
            yield from chunk

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def flat(self) -> bool:
        """Whether every value is a scalar (so a CSV's columns are ``fields``)."""
        ids = getattr(self, "ids", None)
        return ids is None or not any(isinstance(v, (Mapping, list, tuple)) for v in ids)

    def json_plain(self) -> bool:
        """Whether every value is a str, int, bool, None or finite float (no id is given:
        the rows hold only numbers from the columns, non-finite ones as None, and names)."""
        return getattr(self, "ids", None) is None

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self)} rows>"


class RequestRecords(RowSource):
    """One record per row of a ``RequestTable`` (keys ``FIELDS``), made on demand."""

    __slots__ = ("table", "ids", "batch", "preemptions")
    fields = FIELDS

    def __init__(self, table: RequestTable, ids: Sequence[Any] | None = None,
                 batch: Sequence[int] | np.ndarray | None = None,
                 preemptions: Sequence[int] | np.ndarray | None = None) -> None:
        n = len(table)
        self.table, self.ids = table, ids
        self.batch = np.ones(n, np.int64) if batch is None else np.asarray(batch, np.int64)
        self.preemptions = np.asarray(table.preemptions if preemptions is None else preemptions,
                                      np.int64)

    def __len__(self) -> int:
        return len(self.table)

    def columns(self, lo: int, hi: int) -> dict[str, list[Any]]:
        """Rows ``lo`` to ``hi - 1`` as one Python list per field."""
        t, s = self.table, slice(lo, hi)
        done = t.state[s] == Outcome.DONE
        ddl, fin, start = t.deadline_s[s], t.finish_s[s], t.start_s[s]
        has_ddl = np.isfinite(ddl)
        return {"id": list(self.ids[lo:hi]) if self.ids is not None else list(range(lo, hi)),
                "model": [t.models[k] for k in t.model[s].tolist()],
                "priority": t.priority[s].tolist(), "arrival_s": t.arrival_s[s].tolist(),
                "start_s": _nullable(start, np.isfinite(start)),
                "finish_s": _nullable(fin, done & np.isfinite(fin)),
                "deadline_s": _nullable(ddl, has_ddl), "met": _nullable(done & (fin <= ddl),
                                                                         has_ddl),
                "preemptions": self.preemptions[s].tolist(), "batch": self.batch[s].tolist()}

    def rows(self, lo: int, hi: int) -> list[Record]:
        c = self.columns(lo, hi)
        return [{"id": i, "model": m, "priority": p, "arrival_s": a, "start_s": st,
                 "finish_s": f, "deadline_s": d, "met": ok, "preemptions": k, "batch": b}
                for i, m, p, a, st, f, d, ok, k, b in zip(*c.values(), strict=True)]


class SegmentRecords(RowSource):
    """``{"id", "start_s", "end_s"}`` per PE segment (``row`` is each segment's table row,
    named by ``ids`` when given), made on demand."""

    __slots__ = ("row", "start", "end", "ids")
    fields = SEGMENT_FIELDS

    def __init__(self, row: np.ndarray, start: np.ndarray, end: np.ndarray,
                 ids: Sequence[Any] | None = None) -> None:
        self.row, self.start, self.end, self.ids = row, start, end, ids

    def __len__(self) -> int:
        return int(self.row.shape[0])

    def columns(self, lo: int, hi: int) -> dict[str, list[Any]]:
        """Segments ``lo`` to ``hi - 1`` as one Python list per field."""
        rows = self.row[lo:hi].tolist()
        return {"id": rows if self.ids is None else [self.ids[r] for r in rows],
                "start_s": self.start[lo:hi].tolist(), "end_s": self.end[lo:hi].tolist()}

    def rows(self, lo: int, hi: int) -> list[Record]:
        return [{"id": i, "start_s": s, "end_s": e}
                for i, s, e in zip(*self.columns(lo, hi).values(), strict=True)]


def request_records(table: RequestTable, ids: Sequence[Any] | None = None,
                    batch: Sequence[int] | np.ndarray | None = None,
                    preemptions: Sequence[int] | np.ndarray | None = None
                    ) -> list[Record]:
    """One dict per row of ``table`` with the keys of ``FIELDS`` (times in seconds, None for
    a time that never came). ``preemptions`` (e.g. ``switches`` of the run's segments)
    defaults to the table's count of preemption decisions."""
    return list(RequestRecords(table, ids, batch, preemptions))


def segment_records(segments: Sequence[Sequence[Any]] | Columns,
                    ids: Sequence[Any] | None = None) -> list[Record]:
    """``{"id", "start_s", "end_s"}`` per segment, in time order (``ids`` names the rows)."""
    return list(SegmentRecords(*segment_columns(segments), ids=ids))
