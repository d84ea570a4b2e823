"""Pictures of an IR replay through the package's one timeline and trace writer (``report``).

The replay's spans become report intervals (``resource`` = ``core <i>``, ``DRAM`` or
``mesh <i>``; coloured by kind: ``pe``/``vp`` workloads, ``weight``/``fmap`` loads, ``store``,
``mesh``). The PNG adds the L2 occupancy per snapshot below the lanes; the trace adds an
``L2 bytes`` counter per core.
"""

from __future__ import annotations

import os
from typing import Any

from npuweave.compile.gemini.model import IR
from npuweave.compile.gemini.replay import ReplayResult, Span
from npuweave.fileio import write_json
from npuweave.report.timeline import plot_timeline as _plot_lanes
from npuweave.report.trace import chrome_trace
from npuweave.sim.records import Interval

_TYPES = ("ifmap", "weight", "ofmap")


def intervals(result: ReplayResult) -> list[Interval]:
    """Every span of the replay (workloads, DRAM and mesh transfers) as the package's one
    ``Interval``: resource = lane, tenant = kind (the colour), unit = name, request = the
    workload id (-1 for none)."""
    spans: list[Span] = [*result.workloads, *result.transfers, *result.mesh]
    return [Interval(s.lane, s.kind, s.workload_id if s.workload_id is not None else -1,
                     s.name, s.start, s.end) for s in spans]


def occupancy(ir: IR, core: int) -> list[dict[str, int]]:
    """Bytes per tensor type in each L2 snapshot of ``core`` (one dict per workload)."""
    rows = []
    for w in ir.workloads(core):
        row = dict.fromkeys(_TYPES, 0)
        for b in w.buffer:
            row[b.type] = row.get(b.type, 0) + b.size
        rows.append(row)
    return rows


def plot_timeline(ir: IR, result: ReplayResult, path: str | os.PathLike[str],
                  title: str = "") -> None:
    """Save a PNG: per-core, DRAM and mesh lanes above the L2 occupancy per core."""
    head = (f"{title}: " if title else "") + (f"makespan {result.makespan * 1e3:.3f} ms, sum of "
                                              f"time fields {result.sum_time * 1e3:.3f} ms")
    _plot_lanes({"replay": intervals(result)}, path, title=head,
                panel=lambda ax: _draw_occupancy(ax, ir))


def _draw_occupancy(ax: Any, ir: IR) -> None:
    """Stacked L2 bytes per tensor type; one colour per type on every core (the cores occupy
    separate workload-id ranges, each named above its range), so the legend never repeats a
    colour for two meanings."""
    from matplotlib import colormaps

    # tab10 colours the lanes above by kind in sorted order (fmap, pe, store, weight: 0-3):
    # weight keeps its red here, ifmap and ofmap take colours no lane uses
    tab = colormaps["tab10"]
    colours = [tab({"ifmap": 4, "weight": 3, "ofmap": 5}[t]) for t in _TYPES]
    labelled = False
    for core in ir.core_ids:
        rows = occupancy(ir, core)
        xs = [w.workload_id for w in ir.workloads(core)]
        if not xs:
            continue
        stacks = [[r[t] / 2**20 for r in rows] for t in _TYPES]
        ax.stackplot(xs, *stacks, labels=list(_TYPES) if not labelled else [None] * len(_TYPES),
                     colors=colours, step="post", alpha=0.8)
        labelled = True
        if len(ir.core_ids) > 1:
            ax.text((xs[0] + xs[-1]) / 2, ir.buffersize / 2**20, f"core {core}", ha="center",
                    va="bottom", fontsize=7)
    ax.axhline(ir.buffersize / 2**20, color="black", linestyle="--", label="buffersize")
    ax.set_xlabel("workload id")
    ax.set_ylabel("L2 use (MiB)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1), fontsize=7)


def trace_events(ir: IR, result: ReplayResult) -> dict[str, Any]:
    """The replay as a Trace Event Format document (open it in ui.perfetto.dev)."""
    doc = chrome_trace({"replay": intervals(result)}, buffer=False)  # L2 counters below
    starts = {(s.core, s.workload_id): s.start for s in result.workloads}
    lane_tid = {e["args"]["name"]: e["tid"] for e in doc["traceEvents"]
                if e["ph"] == "M" and e["name"] == "thread_name"}
    for core in ir.core_ids:
        for w, row in zip(ir.workloads(core), occupancy(ir, core)):
            doc["traceEvents"].append({"ph": "C", "name": f"L2 bytes core {core}", "pid": 1,
                                       "tid": lane_tid.get(f"core {core}", 0),
                                       "ts": starts[(core, w.workload_id)] * 1e6, "args": row})
    return doc


def write_trace(ir: IR, result: ReplayResult, path: str | os.PathLike[str]) -> None:
    """Write :func:`trace_events` to ``path`` atomically."""
    write_json(path, trace_events(ir, result), indent=None)
