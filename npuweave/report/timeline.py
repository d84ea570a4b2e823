"""Timeline plots: for each run, a PE lane above a DRAM lane, busy spans coloured by model.

This is the picture of thesis Figure IV.13: where one lane idles while the other works, the
scheduler left a resource unused. Several runs (schedulers) stack into one figure on a shared
time axis so they compare at a glance. Other resources (``core 0``, ``mesh 1``, ...) get their
own lanes, and a caller may add a panel below (the Gemini replay's L2 occupancy). The figure is
built without pyplot (``matplotlib.figure.Figure`` renders with Agg when saved, so no backend
is switched) and the PNG is written atomically.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
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


def _draw_run(ax: Any, intervals: list[Any], colour_key: Callable[[Any], str],
              colours: dict[str, Any], scale: float, lanes: tuple[str, ...] = LANES) -> None:
    for row, lane in enumerate(lanes):
        spans: dict[str, list[tuple[float, float]]] = {}
        for iv in intervals:
            if iv.resource == lane:
                spans.setdefault(colour_key(iv), []).append(
                    (iv.start_s * scale, (iv.end_s - iv.start_s) * scale)
                )
        for key, bars in spans.items():
            ax.broken_barh(bars, (len(lanes) - 1 - row + 0.1, 0.8), facecolors=colours[key],
                           linewidth=0)
    ax.set_yticks([len(lanes) - 1 - i + 0.5 for i in range(len(lanes))], lanes)
    ax.set_ylim(0, len(lanes))


def plot_timeline(
    runs: Mapping[str, Iterable[Any]] | Iterable[Any],
    path: str | os.PathLike[str],
    title: str | None = None,
    color_by: str | Callable[[Any], str] = "tenant",
    until_s: float | None = None,
    panel: Callable[[Any], None] | None = None,
) -> Path:
    """Draw PE/DRAM lanes for one run (a list of intervals) or several (name -> intervals).

    ``color_by`` is an interval attribute name or a function of an interval; ``until_s`` cuts
    the time axis (for long runs); ``panel`` draws an extra axes below the lanes. Returns the
    path written.

    Examples
    --------
    >>> plot_timeline({"layerweaver": result.intervals}, "timeline.png")  # doctest: +SKIP
    PosixPath('timeline.png')
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    source: Mapping[str, Iterable[Any]] = runs if isinstance(runs, Mapping) else {"": runs}
    named: dict[str, list[Any]] = {k: list(v) for k, v in source.items()}
    key = attribute_or_call(color_by)
    keys = sorted({str(key(iv)) for ivs in named.values() for iv in ivs})
    colours = _palette(keys)
    lanes = lanes_of(named.values())
    end = until_s or max((iv.end_s for ivs in named.values() for iv in ivs), default=1e-3)
    scale, unit = (1e3, "ms") if end >= 1e-3 else (1e6, "us")

    rows = len(named) + (panel is not None)
    per_run = 0.3 + 0.3 * len(lanes)
    fig = Figure(figsize=(10, 0.9 + per_run * len(named) + (2.5 if panel else 0)))
    axes = fig.subplots(rows, 1, squeeze=False,
                        height_ratios=[per_run] * len(named) + ([2.5] if panel else []))
    for ax, (name, ivs) in zip(axes[:, 0], named.items()):
        _draw_run(ax, ivs, lambda iv: str(key(iv)), colours, scale, lanes)
        ax.set_ylabel(name, rotation=0, ha="right", va="center")
        ax.set_xlim(0, end * scale)
    axes[len(named) - 1, 0].set_xlabel(f"time ({unit})")
    if panel is not None:
        panel(axes[-1, 0])
    handles = [Rectangle((0, 0), 1, 1, color=colours[k]) for k in keys]
    fig.legend(handles, keys, loc="upper right", ncol=max(1, min(len(keys), 8)), frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    save_figure(fig, path, dpi=120)
    return Path(path)
