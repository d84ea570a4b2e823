"""Pictures of an IR replay: a per-core timeline PNG with L2 occupancy, and a Perfetto trace.

The trace is Chrome/Perfetto Trace Event Format JSON: one process per core (workloads as
complete ``"X"`` events, L2 occupancy as a ``"C"`` counter) and one for the DRAM channel.
Times are microseconds.
"""

from __future__ import annotations

import os
from typing import Any

from npuweave.compile.gemini.model import IR
from npuweave.compile.gemini.simulate import SimResult
from npuweave.fileio import save_figure, write_json

_COLORS = {"pe": "tab:blue", "vp": "tab:orange", "dt": "tab:green", "weight": "tab:purple",
           "fmap": "tab:cyan", "store": "tab:red"}
_TYPES = ("ifmap", "weight", "ofmap")


def occupancy(ir: IR, core: int) -> list[dict[str, int]]:
    """Bytes per tensor type in each L2 snapshot of ``core`` (one dict per workload)."""
    rows = []
    for w in ir.workloads(core):
        row = dict.fromkeys(_TYPES, 0)
        for b in w.buffer:
            row[b.type] = row.get(b.type, 0) + b.size
        rows.append(row)
    return rows


def plot_timeline(ir: IR, result: SimResult, path: str | os.PathLike[str],
                  title: str = "") -> None:
    """Save a PNG: the replay's per-core and DRAM timeline above the L2 occupancy per core."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_m) = plt.subplots(2, 1, figsize=(12, 7), gridspec_kw={"height_ratios": [1, 1]})
    _draw_lanes(ax_t, result)
    _draw_occupancy(ax_m, ir)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)


def _draw_lanes(ax: Any, result: SimResult) -> None:
    lanes = sorted({s.lane for s in result.workloads}) + ["DRAM"]
    for y, lane in enumerate(lanes):
        spans = result.transfers if lane == "DRAM" else [s for s in result.workloads
                                                         if s.lane == lane]
        bars = [(s.start * 1e3, s.duration * 1e3) for s in spans]
        colors = [_COLORS.get(s.kind, "tab:gray") for s in spans]
        ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=colors, edgecolor="black", linewidth=0.2)
    ax.set_yticks(range(len(lanes)), lanes)
    ax.set_xlabel("time (ms)")
    ax.set_title(f"replay: makespan {result.makespan * 1e3:.3f} ms, "
                 f"sum of time fields {result.sum_time * 1e3:.3f} ms")
    handles = [_patch(c, k) for k, c in _COLORS.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1), fontsize=7)


def _patch(color: str, label: str) -> Any:
    from matplotlib.patches import Patch

    return Patch(facecolor=color, label=label)


def _draw_occupancy(ax: Any, ir: IR) -> None:
    for core in ir.core_ids:
        rows = occupancy(ir, core)
        xs = [w.workload_id for w in ir.workloads(core)]
        stacks = [[r[t] / 2**20 for r in rows] for t in _TYPES]
        prefix = f"core {core} " if len(ir.core_ids) > 1 else ""
        ax.stackplot(xs, *stacks, labels=[prefix + t for t in _TYPES], step="post", alpha=0.8)
    ax.axhline(ir.buffersize / 2**20, color="black", linestyle="--", label="buffersize")
    ax.set_xlabel("workload id")
    ax.set_ylabel("L2 use (MiB)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1), fontsize=7)


def trace_events(ir: IR, result: SimResult) -> dict[str, Any]:
    """The replay as a Trace Event Format document (open it in ui.perfetto.dev)."""
    events: list[dict[str, Any]] = []
    dram_pid = max(ir.core_ids, default=0) + 1
    for core in ir.core_ids:
        events.append({"ph": "M", "name": "process_name", "pid": core, "tid": 0,
                       "args": {"name": f"core {core}"}})
    events.append({"ph": "M", "name": "process_name", "pid": dram_pid, "tid": 0,
                   "args": {"name": "DRAM"}})
    for s in result.workloads:
        events.append({"ph": "X", "name": s.name, "cat": s.kind, "pid": s.core, "tid": 0,
                       "ts": s.start * 1e6, "dur": s.duration * 1e6,
                       "args": {"workload_id": s.workload_id}})
    for s in result.transfers:
        events.append({"ph": "X", "name": s.name, "cat": s.kind, "pid": dram_pid, "tid": 0,
                       "ts": s.start * 1e6, "dur": s.duration * 1e6, "args": {"bytes": s.bytes}})
    starts = {(s.core, s.workload_id): s.start for s in result.workloads}
    for core in ir.core_ids:
        for w, row in zip(ir.workloads(core), occupancy(ir, core)):
            events.append({"ph": "C", "name": "L2 bytes", "pid": core, "tid": 0,
                           "ts": starts[(core, w.workload_id)] * 1e6, "args": row})
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def write_trace(ir: IR, result: SimResult, path: str | os.PathLike[str]) -> None:
    """Write :func:`trace_events` to ``path`` atomically."""
    write_json(path, trace_events(ir, result), indent=None)
