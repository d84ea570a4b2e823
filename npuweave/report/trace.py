"""Perfetto / chrome://tracing export of a run: one process per run, one thread per resource.

The output follows the Trace Event Format (JSON object form): ``{"traceEvents": [...],
"displayTimeUnit": "ms"}``. Each busy interval is a complete event (``"ph": "X"``) whose
``ts`` and ``dur`` are microseconds; lanes get their names from metadata events (``"ph": "M"``,
``process_name`` / ``thread_name``) and keep the PE-above-DRAM order through
``thread_sort_index``. Events are named after the scheduling unit and categorized by tenant,
so Perfetto's search and colouring group a model's layers together.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from npuweave.fileio import write_json

#: Lanes always shown, in this order; other resources (``core<i>``...) follow, sorted.
LANE_ORDER = ("PE", "DRAM")


def _lanes(intervals: Sequence[Any]) -> list[str]:
    found = {iv.resource for iv in intervals}
    if "PE" not in found and found - set(LANE_ORDER):  # e.g. "core 0", "DRAM", "mesh 1"
        return sorted(found)
    return list(LANE_ORDER) + sorted(found - set(LANE_ORDER))


def _metadata(pid: int, run: str, lanes: list[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": run}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}},
    ]
    for tid, lane in enumerate(lanes, start=1):
        events.append(
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": lane}}
        )
        events.append(
            {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
             "args": {"sort_index": tid}}
        )
    return events


def trace_events(intervals: Iterable[Any], run: str = "npu", pid: int = 1) -> list[dict[str, Any]]:
    """Trace events of one run: lane metadata, then one ``"X"`` event per busy interval."""
    ivs = list(intervals)
    lanes = _lanes(ivs)
    tid = {lane: i for i, lane in enumerate(lanes, start=1)}
    events = _metadata(pid, run, lanes)
    for iv in sorted(ivs, key=lambda iv: (iv.start_s, iv.resource)):
        events.append({
            "name": f"{iv.tenant}:{iv.unit}",
            "cat": iv.tenant,
            "ph": "X",
            "pid": pid,
            "tid": tid[iv.resource],
            "ts": iv.start_s * 1e6,
            "dur": (iv.end_s - iv.start_s) * 1e6,
            "args": {"tenant": iv.tenant, "request": iv.request, "unit": iv.unit},
        })
    return events


def chrome_trace(runs: Mapping[str, Iterable[Any]] | Iterable[Any]) -> dict[str, Any]:
    """The trace document for one run (a list of intervals) or several (name -> intervals).

    Examples
    --------
    >>> from types import SimpleNamespace as I
    >>> iv = I(resource="PE", tenant="resnet50", request=0, unit="conv1", start_s=0.0, end_s=2e-6)
    >>> doc = chrome_trace([iv])
    >>> [e["dur"] for e in doc["traceEvents"] if e["ph"] == "X"]
    [2.0]
    """
    if not isinstance(runs, Mapping):
        runs = {"npu": runs}
    events: list[dict[str, Any]] = []
    for pid, (name, ivs) in enumerate(runs.items(), start=1):
        events.extend(trace_events(ivs, name, pid))
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_trace(path: str | os.PathLike[str], runs: Mapping[str, Iterable[Any]] | Iterable[Any]) -> None:
    """Write ``chrome_trace(runs)`` atomically; open it at ui.perfetto.dev or chrome://tracing."""
    write_json(path, chrome_trace(runs), indent=None)
