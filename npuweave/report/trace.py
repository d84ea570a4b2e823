"""Perfetto / chrome://tracing export of a run: one process per run, one thread per resource.

The output follows the Trace Event Format (JSON object form): ``{"traceEvents": [...],
"displayTimeUnit": "ms"}``. Each busy interval is a complete event (``"ph": "X"``) whose
``ts`` and ``dur`` are microseconds; lanes get their names from metadata events (``"ph": "M"``,
``process_name`` / ``thread_name``) and keep the PE-above-DRAM order through
``thread_sort_index``. Events are named after the scheduling unit and categorized by tenant,
so Perfetto's search and colouring group a model's layers together.

Two more views explain why the PE waited. A counter track (``"ph": "C"``, ``buffer``) follows
the weight-buffer occupancy: each DRAM part adds its bytes when it starts and a unit's bytes are
freed when its computation ends; in bytes when the DRAM bandwidth is given (a part moves
``duration x bandwidth`` bytes), else in resident units. Flow arrows lead from each unit's last
DRAM part to the PE computation that uses those weights (flow v2: ``bind_id`` with
``flow_out``/``flow_in`` on the two ``"X"`` events, so each arrow binds to exactly its slices). A name
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
    first: dict[tuple[str, int, str], float] = {}  # without a bandwidth: first part's start
    for iv in ivs:
        if iv.resource != "DRAM":
            continue
        if dram_bw:  # each part moves its bytes into space free when it starts
            amount = round((iv.end_s - iv.start_s) * dram_bw)
            changes.append((iv.start_s, 1, amount))
            total[_key(iv)] = total.get(_key(iv), 0) + amount
        else:  # a unit is resident from its first part's start (one pass, not one per unit)
            total[_key(iv)] = 1
            first[_key(iv)] = min(first.get(_key(iv), iv.start_s), iv.start_s)
    changes += [(t, 1, 1) for t in first.values()]
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


def flow_bindings(intervals: Sequence[Any], first_id: int = 1) -> dict[int, dict[str, Any]]:
    """Flow arrows from each unit's last DRAM part to the PE interval computing that unit.

    Returns, by position in ``intervals``, the fields to add to that interval's ``"X"`` event:
    ``{"bind_id": n, "flow_out": true}`` on the fetch and ``{"bind_id": n, "flow_in": true}``
    on the computation (Trace Event Format flow v2: the arrow is bound to these two slices,
    whatever else happens at the same instant). Ids count up from ``first_id``.

    Examples
    --------
    >>> from types import SimpleNamespace as I
    >>> ivs = [I(resource="DRAM", tenant="a", request=0, unit="u", start_s=0.0, end_s=1e-6),
    ...        I(resource="PE", tenant="a", request=0, unit="u", start_s=1e-6, end_s=3e-6)]
    >>> flow_bindings(ivs)
    {0: {'bind_id': 1, 'flow_out': True}, 1: {'bind_id': 1, 'flow_in': True}}
    """
    last_part: dict[tuple[str, int, str], int] = {}
    for i, iv in enumerate(intervals):
        if iv.resource == "DRAM":
            prev = last_part.get(_key(iv))
            if prev is None or iv.start_s >= intervals[prev].start_s:
                last_part[_key(iv)] = i
    out: dict[int, dict[str, Any]] = {}
    flow_id = first_id
    for i, iv in sorted(enumerate(intervals), key=lambda p: (p[1].start_s, p[0])):
        fetch = last_part.get(_key(iv)) if iv.resource == "PE" else None
        if fetch is None:
            continue
        out[fetch] = {"bind_id": flow_id, "flow_out": True}
        out[i] = {"bind_id": flow_id, "flow_in": True}
        flow_id += 1
    return out


def trace_events(intervals: Iterable[Any], run: str = "npu", pid: int = 1,
                 dram_bw: float | None = None, flow_id: int = 1,
                 buffer: bool = True) -> list[dict[str, Any]]:
    """Trace events of one run: lane metadata, one ``"X"`` event per busy interval (with the
    fetch-to-compute flow bindings, ids from ``flow_id`` on) and, with ``buffer``, the
    weight-buffer counter (the single-NPU engine's buffer; a multi-core replay has its own)."""
    ivs = list(intervals)
    lanes = _lanes(ivs)
    tid = {lane: i for i, lane in enumerate(lanes, start=1)}
    events = _metadata(pid, run, lanes)
    flows = flow_bindings(ivs, flow_id)
    order = sorted(range(len(ivs)), key=lambda i: (ivs[i].start_s, ivs[i].resource))
    for i in order:
        iv = ivs[i]
        events.append({
            "name": f"{iv.tenant}:{iv.unit}",
            "cat": iv.tenant,
            "ph": "X",
            "pid": pid,
            "tid": tid[iv.resource],
            "ts": iv.start_s * 1e6,
            "dur": (iv.end_s - iv.start_s) * 1e6,
            "args": {"tenant": iv.tenant, "request": iv.request, "unit": iv.unit},
            **flows.get(i, {}),
        })
    if buffer and any(iv.resource == "DRAM" for iv in ivs):
        events.extend(buffer_counter(ivs, dram_bw, pid))
    return events


def chrome_trace(runs: Mapping[str, Iterable[Any]] | Iterable[Any],
                 dram_bw: float | None = None, buffer: bool = True) -> dict[str, Any]:
    """The trace document for one run (a list of intervals) or several (name -> intervals).

    ``dram_bw`` (bytes/s) puts the buffer counter in bytes instead of resident units;
    ``buffer=False`` leaves the counter out.

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
        flow_id = 1 + sum(1 for e in events if e.get("flow_in"))  # ids unique across runs
        events.extend(trace_events(ivs, name, pid, dram_bw, flow_id, buffer))
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_trace(path: str | os.PathLike[str], runs: Mapping[str, Iterable[Any]] | Iterable[Any],
                dram_bw: float | None = None, extra: Iterable[dict[str, Any]] = ()) -> None:
    """Write ``chrome_trace(runs)`` atomically (gzip when ``path`` ends in ``.gz``); open it at
    ui.perfetto.dev or chrome://tracing. ``extra`` events (another counter track, such as
    ``npuweave.report.power.power_counter``) are appended as they are.

    Examples
    --------
    >>> write_trace("run.json.gz", {"layerweaver": result.intervals})  # doctest: +SKIP
    """
    doc = chrome_trace(runs, dram_bw)
    doc["traceEvents"].extend(extra)  # more tracks, e.g. the power counter
    write_json(path, doc, indent=None)
