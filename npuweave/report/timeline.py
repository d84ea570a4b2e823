"""Timeline plots: for each run, a PE lane above a DRAM lane, busy spans coloured by model.

This is the picture of thesis Figure IV.13: where one lane idles while the other works, the
scheduler left a resource unused. Several runs (schedulers) stack into one figure on a shared
time axis so they compare at a glance. Other resources (``core 0``, ``mesh 1``, ...) get their
own lanes, and a caller may add a panel below (the Gemini replay's L2 occupancy).

No backend is selected here: the figure is built with ``matplotlib.figure.Figure`` (not
pyplot), so a notebook keeps its inline backend and shows the returned Figure, a script saves
it with ``path=`` (atomically) without any display, and nothing is left open in pyplot.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from npuweave.fileio import save_figure
from npuweave.metrics.common import attribute_or_call

LANES = ("PE", "DRAM")


def _palette(keys: list[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return {k: cmap(i % 10) for i, k in enumerate(keys)}


def lanes_of(runs: Iterable[Iterable[Any]]) -> tuple[str, ...]:
    """PE and DRAM first (when present or when nothing else is), then the other resources."""
    found = {iv.resource for ivs in runs for iv in ivs}
    others = sorted(found - set(LANES), key=lambda r: (r.split()[0], _num(r)))
    if not others:
        return LANES
    return tuple(r for r in LANES if r in found) + tuple(others)


def _num(resource: str) -> int:
    tail = resource.rsplit(" ", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def _draw_lanes(ax: Any, lanes: list[tuple[str, str, list[Any]]],
                colour_key: Callable[[Any], str], colours: dict[str, Any],
                scale: float) -> None:
    """``lanes``: (label, resource, intervals) from the top down, one bar row each."""
    n = len(lanes)
    for row, (_label, resource, intervals) in enumerate(lanes):
        spans: dict[str, list[tuple[float, float]]] = {}
        for iv in intervals:
            if iv.resource == resource:
                spans.setdefault(colour_key(iv), []).append(
                    (iv.start_s * scale, (iv.end_s - iv.start_s) * scale))
        for key, bars in spans.items():
            ax.broken_barh(bars, (n - 1 - row + 0.1, 0.8), facecolors=colours[key], linewidth=0,
                           antialiased=False)  # thousands of bars: ~25% less to render
        if not spans:  # an empty lane is a finding, not a drawing error
            ax.text(0.5, n - 1 - row + 0.5, "nothing ran", transform=ax.get_yaxis_transform(),
                    ha="center", va="center", fontsize=8, color="0.4", style="italic")
    ax.set_yticks([n - 1 - i + 0.5 for i in range(n)], [lab for lab, _, _ in lanes])
    ax.set_ylim(0, n)


def plot_timeline(
    runs: Mapping[str, Iterable[Any]] | Iterable[Any],
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
    color_by: str | Callable[[Any], str] = "tenant",
    until_s: float | None = None,
    ax: Any = None,
    panel: Callable[[Any], None] | None = None,
    marks: Mapping[str, Iterable[tuple[float, str]]] | None = None,
) -> Any:
    """Draw PE/DRAM lanes for one run (a list of intervals) or several (name -> intervals).

    ``color_by`` is an interval attribute name or a function of an interval; ``until_s`` cuts
    the time axis (for long runs). With ``ax`` (a matplotlib Axes) every run's lanes go into
    that Axes, stacked; without it a new Figure gets one Axes per run, and ``panel`` (a
    function of an Axes) draws an extra Axes below them. ``path`` also saves the figure
    (format from the suffix). ``marks`` maps a run's name to ``(time_s, kind)`` events drawn
    above its lanes (``serve_marks`` gives deadline misses and preemptions), one marker per
    kind in the legend. Returns the ``matplotlib.figure.Figure``.

    Examples
    --------
    >>> fig = plot_timeline({"layerweaver": result.intervals})         # doctest: +SKIP
    >>> plot_timeline(result.intervals, path="timeline.png")           # doctest: +SKIP
    >>> fig, ax = plt.subplots(); plot_timeline(result.intervals, ax=ax)  # doctest: +SKIP
    """
    from matplotlib.patches import Rectangle

    from npuweave.report.figure import new_figure

    source: Mapping[str, Iterable[Any]] = runs if isinstance(runs, Mapping) else {"": runs}
    named: dict[str, list[Any]] = {str(k): list(v) for k, v in source.items()}
    key = attribute_or_call(color_by)
    keys = sorted({str(key(iv)) for ivs in named.values() for iv in ivs})
    colours = _palette(keys)
    lanes = lanes_of(named.values())
    end = until_s or max((iv.end_s for ivs in named.values() for iv in ivs), default=1e-3)
    scale, unit = (1e3, "ms") if end >= 1e-3 else (1e6, "us")

    def colour_of(iv: Any) -> str:
        return str(key(iv))

    if ax is None:
        rows = len(named) + (panel is not None)
        per_run = 0.3 + 0.3 * len(lanes)
        fig = new_figure(figsize=(10, 0.9 + per_run * len(named) + (2.5 if panel else 0)))
        axes = fig.subplots(rows, 1, squeeze=False,
                            height_ratios=[per_run] * len(named) + ([2.5] if panel else []))
        for one, (name, ivs) in zip(axes[:, 0], named.items()):
            _draw_lanes(one, [(lane, lane, ivs) for lane in lanes], colour_of, colours, scale)
            _draw_marks(one, list((marks or {}).get(name, ())), len(lanes), scale)
            one.set_ylabel(name, rotation=0, ha="right", va="center")
            one.set_xlim(0, end * scale)
        axes[len(named) - 1, 0].set_xlabel(f"time ({unit})")
        if panel is not None:
            panel(axes[-1, 0])
    else:
        fig = ax.figure
        stacked = [(f"{name} {lane}".strip(), lane, ivs) for name, ivs in named.items()
                   for lane in lanes]
        _draw_lanes(ax, stacked, colour_of, colours, scale)
        ax.set_xlim(0, end * scale)
        ax.set_xlabel(f"time ({unit})")
    handles: list[Any] = [Rectangle((0, 0), 1, 1, color=colours[k]) for k in keys]
    labels = list(keys)
    kinds = sorted({k for evs in (marks or {}).values() for _, k in evs})
    for kind in kinds:
        handles.append(_mark_handle(kind))
        labels.append(kind)
    fig.legend(handles, labels, loc="upper right", ncol=max(1, min(len(labels), 8)),
               frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left")
    if ax is None:
        _margins(fig, named, lanes, panel is not None)
    if path is not None:
        save_figure(fig, path, dpi=120)
    return fig


# what a serving run's events look like on its lanes: (marker, colour)
MARK_STYLE = {"deadline miss": ("x", "crimson"), "preemption": ("v", "black")}


def _mark_handle(kind: str) -> Any:
    from matplotlib.lines import Line2D

    marker, colour = MARK_STYLE.get(kind, ("o", "0.3"))
    return Line2D([], [], marker=marker, color=colour, linestyle="none")


def _draw_marks(ax: Any, events: list[tuple[float, str]], n_lanes: int, scale: float) -> None:
    """Markers on the top edge of a run's lanes at each event's time."""
    by_kind: dict[str, list[float]] = {}
    for t, kind in events:
        by_kind.setdefault(kind, []).append(t * scale)
    for kind, xs in by_kind.items():
        marker, colour = MARK_STYLE.get(kind, ("o", "0.3"))
        ax.plot(xs, [n_lanes - 0.02] * len(xs), linestyle="none", marker=marker,
                color=colour, markersize=6, clip_on=False, zorder=5)


def serve_marks(table: Any, intervals: Iterable[Any]) -> list[tuple[float, str]]:
    """A serving run's events for ``plot_timeline(marks=...)``: a ``deadline miss`` where a
    request finished after its deadline (at its deadline when it was killed), a
    ``preemption`` where a checkpoint of a preempted request starts.

    ``table`` is the run's ``RequestTable`` (``finish_s``, ``deadline_s`` arrays).
    """
    import math

    out: list[tuple[float, str]] = []
    for finish, deadline in zip(table.finish_s.tolist(), table.deadline_s.tolist()):
        if math.isfinite(deadline) and not finish <= deadline:  # NaN finish: killed
            out.append((finish if math.isfinite(finish) else deadline, "deadline miss"))
    # a preempted request's checkpoint transfers alternate: save (at the preemption), then
    # restore (when it resumes); the saves are the preemptions
    moves: dict[tuple[str, int], list[float]] = {}
    for iv in sorted(intervals, key=lambda iv: iv.start_s):
        if iv.unit == "checkpoint":
            moves.setdefault((iv.tenant, iv.request), []).append(iv.start_s)
    out += sorted((t, "preemption") for ts in moves.values() for t in ts[::2])
    return out


def _margins(fig: Any, named: Mapping[str, Any], lanes: tuple[str, ...], panel: bool) -> None:
    """Fixed margins in inches (room for the run and lane labels, the title and legend row,
    the time axis), instead of ``tight_layout``, which renders the whole figure once more
    just to measure it (half the cost of drawing a long run's timeline)."""
    width, height = fig.get_size_inches()
    label = max([len(n) for n in named] + [0]) + max(len(la) for la in lanes)
    left = min(0.45, (0.35 + 0.075 * label) / width)
    right = (1.5 if panel else 0.15) / width  # the L2 panel's legend sits right of it
    fig.subplots_adjust(left=left, right=1 - right, top=1 - 0.6 / height,
                        bottom=0.5 / height, hspace=(0.55 if panel else 0.35))
