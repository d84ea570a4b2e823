"""Perfetto / chrome://tracing export of a run: one process per run, one thread per resource.

The output follows the Trace Event Format (JSON object form): ``{"traceEvents": [...],
"displayTimeUnit": "ms"}``. Each busy interval is a complete event (``"ph": "X"``) whose
``ts`` and ``dur`` are microseconds; lanes get their names from metadata events (``"ph": "M"``,
``process_name`` / ``thread_name``) and keep the PE-above-DRAM order through
``thread_sort_index``. Events are named after the scheduling unit and categorized by tenant,
so Perfetto's search and colouring group a model's layers together.

Two more views explain why the PE waited. A counter track (``"ph": "C"``, ``buffer``) follows
the weight-buffer occupancy: a unit's bytes are reserved when its first DRAM part starts and
freed when its computation ends; in bytes when the DRAM bandwidth is given (a part moves
``duration x bandwidth`` bytes), else in resident units. Flow arrows (``"ph": "s"`` / ``"f"``)
lead from each unit's last DRAM part to the PE computation that uses those weights. A name
ending in ``.gz`` is written gzip-compressed (Perfetto opens it as is).
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


def _key(iv: Any) -> tuple[str, int, str]:
    return (iv.tenant, iv.request, iv.unit)


def buffer_counter(intervals: Iterable[Any], dram_bw: float | None = None,
                   pid: int = 1) -> list[dict[str, Any]]:
    """Counter events of the weight-buffer occupancy (bytes with ``dram_bw``, else units).

    Each DRAM part adds its bytes when it starts (a part moves into space already free); a
    unit's PE interval frees all of its bytes at its end. Units never computed stay resident.

    Examples
    --------
    >>> from types import SimpleNamespace as I
    >>> ivs = [I(resource="DRAM", tenant="a", request=0, unit="u", start_s=0.0, end_s=1e-6),
    ...        I(resource="PE", tenant="a", request=0, unit="u", start_s=1e-6, end_s=3e-6)]
    >>> [(e["ts"], e["args"]["bytes"]) for e in buffer_counter(ivs, dram_bw=1e9)]
    [(0.0, 1000), (3.0, 0)]
    """
    ivs = list(intervals)
    total: dict[tuple[str, int, str], float] = {}
    changes: list[tuple[float, int, float]] = []  # (time, 0 = frees first, delta)
    for iv in ivs:
        if iv.resource != "DRAM":
            continue
        if dram_bw:  # each part moves its bytes into space free when it starts
            amount = round((iv.end_s - iv.start_s) * dram_bw)
            changes.append((iv.start_s, 1, amount))
            total[_key(iv)] = total.get(_key(iv), 0) + amount
        elif _key(iv) not in total:
            total[_key(iv)] = 1
            first = min(x.start_s for x in ivs if x.resource == "DRAM" and _key(x) == _key(iv))
            changes.append((first, 1, 1))
    for iv in ivs:
        if iv.resource == "PE" and _key(iv) in total:
            changes.append((iv.end_s, 0, -total[_key(iv)]))
    unit = "bytes" if dram_bw else "units"
    events: list[dict[str, Any]] = []
    level = 0.0
    for t, _, delta in sorted(changes):
        level += delta
        event = {"ph": "C", "name": "buffer", "pid": pid, "tid": 0, "ts": t * 1e6,
                 "args": {unit: int(round(level))}}
        if events and events[-1]["ts"] == event["ts"]:
            events[-1] = event  # one sample per instant: the level after every change at it
        else:
            events.append(event)
    return events


def flow_events(intervals: Iterable[Any], tid: Mapping[str, int], pid: int = 1,
                first_id: int = 1) -> list[dict[str, Any]]:
    """Flow arrows from each unit's last DRAM part to the PE interval computing that unit.

    Examples
    --------
    >>> from types import SimpleNamespace as I
    >>> ivs = [I(resource="DRAM", tenant="a", request=0, unit="u", start_s=0.0, end_s=1e-6),
    ...        I(resource="PE", tenant="a", request=0, unit="u", start_s=1e-6, end_s=3e-6)]
    >>> [(e["ph"], e["ts"]) for e in flow_events(ivs, {"PE": 1, "DRAM": 2})]
    [('s', 0.0), ('f', 1.0)]
    """
    last_part: dict[tuple[str, int, str], Any] = {}
    for iv in intervals:
        if iv.resource == "DRAM":
            prev = last_part.get(_key(iv))
            if prev is None or iv.start_s >= prev.start_s:
                last_part[_key(iv)] = iv
    events: list[dict[str, Any]] = []
    flow_id = first_id
    for iv in sorted(intervals, key=lambda iv: iv.start_s):
        fetch = last_part.get(_key(iv)) if iv.resource == "PE" else None
        if fetch is None:
            continue
        common = {"name": "weights", "cat": "fetch", "id": flow_id, "pid": pid}
        events.append({**common, "ph": "s", "tid": tid["DRAM"], "ts": fetch.start_s * 1e6})
        events.append({**common, "ph": "f", "bp": "e", "tid": tid["PE"], "ts": iv.start_s * 1e6})
        flow_id += 1
    return events


def trace_events(intervals: Iterable[Any], run: str = "npu", pid: int = 1,
                 dram_bw: float | None = None, flow_id: int = 1) -> list[dict[str, Any]]:
    """Trace events of one run: lane metadata, one ``"X"`` event per busy interval, the
    buffer counter and the fetch-to-compute flow arrows (ids from ``flow_id`` on)."""
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
    if any(iv.resource == "DRAM" for iv in ivs):
        events.extend(buffer_counter(ivs, dram_bw, pid))
        events.extend(flow_events(ivs, tid, pid, flow_id))
    return events


def chrome_trace(runs: Mapping[str, Iterable[Any]] | Iterable[Any],
                 dram_bw: float | None = None) -> dict[str, Any]:
    """The trace document for one run (a list of intervals) or several (name -> intervals).

    ``dram_bw`` (bytes/s) puts the buffer counter in bytes instead of resident units.

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
        flow_id = 1 + sum(1 for e in events if e["ph"] == "s")  # ids unique across runs
        events.extend(trace_events(ivs, name, pid, dram_bw, flow_id))
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_trace(path: str | os.PathLike[str], runs: Mapping[str, Iterable[Any]] | Iterable[Any],
                dram_bw: float | None = None) -> None:
    """Write ``chrome_trace(runs)`` atomically (gzip when ``path`` ends in ``.gz``); open it at
    ui.perfetto.dev or chrome://tracing.

    Examples
    --------
    >>> write_trace("run.json.gz", {"layerweaver": result.intervals})  # doctest: +SKIP
    """
    write_json(path, chrome_trace(runs, dram_bw), indent=None)
