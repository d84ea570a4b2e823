"""Timeline plots: for each run, a PE lane above a DRAM lane, busy spans coloured by model.

This is the picture of thesis Figure IV.13: where one lane idles while the other works, the
scheduler left a resource unused. Several runs (schedulers) stack into one figure on a shared
time axis so they compare at a glance.

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


def _draw_run(ax: Any, intervals: list[Any], colour_key: Callable[[Any], str],
              colours: dict[str, Any], scale: float) -> None:
    for row, lane in enumerate(LANES):
        spans: dict[str, list[tuple[float, float]]] = {}
        for iv in intervals:
            if iv.resource == lane:
                spans.setdefault(colour_key(iv), []).append(
                    (iv.start_s * scale, (iv.end_s - iv.start_s) * scale)
                )
        for key, bars in spans.items():
            ax.broken_barh(bars, (len(LANES) - 1 - row + 0.1, 0.8), facecolors=colours[key],
                           linewidth=0)
    ax.set_yticks([len(LANES) - 1 - i + 0.5 for i in range(len(LANES))], LANES)
    ax.set_ylim(0, len(LANES))


def plot_timeline(
    runs: Mapping[str, Iterable[Any]] | Iterable[Any],
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
    color_by: str | Callable[[Any], str] = "tenant",
    until_s: float | None = None,
    ax: Any = None,
) -> Any:
    """Draw PE/DRAM lanes for one run (a list of intervals) or several (name -> intervals).

    ``color_by`` is an interval attribute name or a function of an interval; ``until_s`` cuts
    the time axis (for long runs). With ``ax`` (a matplotlib Axes) every run's lanes go into
    that Axes, stacked; without it a new Figure gets one Axes per run. ``path`` also saves
    the figure (format from the suffix). Returns the ``matplotlib.figure.Figure``.

    Examples
    --------
    >>> fig = plot_timeline({"layerweaver": result.intervals})         # doctest: +SKIP
    >>> plot_timeline(result.intervals, path="timeline.png")           # doctest: +SKIP
    >>> fig, ax = plt.subplots(); plot_timeline(result.intervals, ax=ax)  # doctest: +SKIP
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    pairs = runs.items() if isinstance(runs, Mapping) else [("", runs)]
    named: dict[str, list[Any]] = {str(k): list(v) for k, v in pairs}
    key = attribute_or_call(color_by)
    keys = sorted({str(key(iv)) for ivs in named.values() for iv in ivs})
    colours = _palette(keys)
    end = until_s or max((iv.end_s for ivs in named.values() for iv in ivs), default=1e-3)
    scale, unit = (1e3, "ms") if end >= 1e-3 else (1e6, "us")

    def colour_of(iv: Any) -> str:
        return str(key(iv))

    if ax is None:
        fig = Figure(figsize=(10, 0.9 + 1.1 * len(named)))
        axes = fig.subplots(len(named), 1, squeeze=False, sharex=True)[:, 0]
        for one, (name, ivs) in zip(axes, named.items(), strict=True):
            _draw_run(one, ivs, colour_of, colours, scale)
            one.set_ylabel(name, rotation=0, ha="right", va="center")
            one.set_xlim(0, end * scale)
        axes[-1].set_xlabel(f"time ({unit})")
    else:
        fig = ax.figure
        _draw_stacked(ax, named, colour_of, colours, scale)
        ax.set_xlim(0, end * scale)
        ax.set_xlabel(f"time ({unit})")
    handles = [Rectangle((0, 0), 1, 1, color=colours[k]) for k in keys]
    fig.legend(handles, keys, loc="upper right", ncol=max(1, len(keys)), frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left")
    if ax is None:
        fig.tight_layout(rect=(0, 0, 1, 0.93))
    if path is not None:
        save_figure(fig, path, dpi=120)
    return fig


def _draw_stacked(ax: Any, named: dict[str, list[Any]], colour_key: Callable[[Any], str],
                  colours: dict[str, Any], scale: float) -> None:
    """Every run's PE and DRAM lanes in one Axes, first run on top."""
    ticks, labels = [], []
    rows = len(named) * len(LANES)
    for r, (name, ivs) in enumerate(named.items()):
        for li, lane in enumerate(LANES):
            y = rows - 1 - (r * len(LANES) + li)
            spans: dict[str, list[tuple[float, float]]] = {}
            for iv in ivs:
                if iv.resource == lane:
                    spans.setdefault(colour_key(iv), []).append(
                        (iv.start_s * scale, (iv.end_s - iv.start_s) * scale))
            for k, bars in spans.items():
                ax.broken_barh(bars, (y + 0.1, 0.8), facecolors=colours[k], linewidth=0)
            ticks.append(y + 0.5)
            labels.append(f"{name} {lane}".strip())
    ax.set_yticks(ticks, labels)
    ax.set_ylim(0, rows)
