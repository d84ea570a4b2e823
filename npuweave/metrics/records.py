"""One record per request and per PE segment: the data users want after a serving run.

Built once from a ``RequestTable`` (``npuweave.metrics.requests``) and the simulator's
segments (maximal runs of one request on the PE, ``[request, start_s, end_s]`` in time
order); ``serve --json`` writes both lists and ``serve --per-request`` the first as a table.
A request's ``preemptions`` here is what the PE shows: the number of times another request
ran between two of its computations (its segments minus one), the count PREMA-style task
sets compare. ``met`` is None for a request without a deadline, False for one never finished.

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

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from npuweave.metrics.requests import Outcome, RequestTable

FIELDS = ("id", "model", "priority", "arrival_s", "start_s", "finish_s", "deadline_s", "met",
          "preemptions", "batch")


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def switches(segments: Sequence[Sequence[Any]], n: int) -> np.ndarray:
    """Per request (``0..n-1``): its PE segments minus one (0 for one never run)."""
    count = np.zeros(n, np.int64)
    for seg in segments:
        count[int(seg[0])] += 1
    return np.maximum(count - 1, 0)


def request_records(table: RequestTable, ids: Sequence[Any] | None = None,
                    batch: Sequence[int] | np.ndarray | None = None,
                    preemptions: Sequence[int] | np.ndarray | None = None
                    ) -> list[dict[str, Any]]:
    """One dict per row of ``table`` with the keys of ``FIELDS`` (times in seconds, None for
    a time that never came). ``preemptions`` (e.g. ``switches`` of the run's segments)
    defaults to the table's count of preemption decisions."""
    n = len(table)
    pre = table.preemptions if preemptions is None else preemptions
    out = []
    for i in range(n):
        done = table.state[i] == Outcome.DONE
        ddl, fin = float(table.deadline_s[i]), float(table.finish_s[i])
        met = None if not math.isfinite(ddl) else bool(done and fin <= ddl)
        out.append({"id": ids[i] if ids is not None else i,
                    "model": table.models[int(table.model[i])],
                    "priority": int(table.priority[i]),
                    "arrival_s": float(table.arrival_s[i]),
                    "start_s": _num(float(table.start_s[i])),
                    "finish_s": _num(fin) if done else None,
                    "deadline_s": _num(ddl), "met": met,
                    "preemptions": int(pre[i]),
                    "batch": int(batch[i]) if batch is not None else 1})
    return out


def segment_records(segments: Sequence[Sequence[Any]],
                    ids: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    """``{"id", "start_s", "end_s"}`` per segment, in time order (``ids`` names the rows)."""
    return [{"id": ids[int(r)] if ids is not None else int(r), "start_s": float(s),
             "end_s": float(e)} for r, s, e in segments]
