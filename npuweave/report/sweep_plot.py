"""A metric against one sweep axis: one line per combination of the other varying settings.

Seeds are averaged (the line is the mean; the bar spans min..max over seeds), so a sweep over
seeds reads as one curve with its spread.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from npuweave.errors import ConfigError

_NOT_SETTINGS = {"point_id", "status", "error", "elapsed_s"}


def _num(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _varying(rows: Sequence[Mapping[str, Any]], settings: Sequence[str]) -> list[str]:
    return [s for s in settings if len({str(r.get(s)) for r in rows}) > 1]


def sweep_series(rows: Sequence[Mapping[str, Any]], metric: str, axis: str,
                 settings: Sequence[str]) -> dict[str, list[tuple[Any, float, float, float]]]:
    """``label -> [(x, mean, min, max), ...]`` over the ok rows, seeds averaged.

    Examples
    --------
    >>> rows = [{"status": "ok", "b": 1, "seed": s, "m": 1.0 + s} for s in (0, 2)]
    >>> sweep_series(rows, "m", "b", ["b", "seed"])
    {'all': [(1, 2.0, 1.0, 3.0)]}
    """
    ok = [r for r in rows if r.get("status") == "ok" and _num(r.get(metric)) is not None]
    if not ok:
        raise ConfigError(f"no successful point has a number for {metric!r}; nothing to plot")
    groups = [s for s in _varying(ok, settings) if s not in (axis, "seed")]
    acc: dict[str, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in ok:
        label = ", ".join(f"{g}={r.get(g)}" for g in groups) or "all"
        acc[label][r.get(axis)].append(float(r[metric]))
    out = {}
    for label, by_x in acc.items():
        xs = sorted(by_x, key=lambda x: (_num(x) is None, _num(x) or 0.0, str(x)))
        out[label] = [(x, sum(v) / len(v), min(v), max(v)) for x, v in
                      ((x, by_x[x]) for x in xs)]
    return out


def plot_sweep(rows: Sequence[Mapping[str, Any]], metric: str, axis: str,
               path: str | os.PathLike[str] | None = None, ax: Any = None,
               title: str | None = None, settings: Sequence[str] | None = None) -> Any:
    """Draw ``metric`` against ``axis``; save to ``path`` if given; return the Figure.

    ``settings`` are the row keys that are settings (not metrics); lines are drawn per
    combination of the settings that vary, other than ``axis`` and ``seed``.
    """
    if settings is None:
        settings = [k for k in (rows[0] if rows else {}) if k not in _NOT_SETTINGS]
    if axis not in settings:
        raise ConfigError(f"--plot: {axis!r} is not a setting of this sweep (settings: "
                          f"{', '.join(settings)})")
    series = sweep_series(rows, metric, axis, settings)
    from npuweave.report.figure import new_figure

    fig = ax.figure if ax is not None else new_figure(figsize=(7, 4.2))
    ax = ax if ax is not None else fig.subplots()
    all_x = sorted({x for pts in series.values() for x, *_ in pts},
                   key=lambda x: (_num(x) is None, _num(x) or 0.0, str(x)))
    numeric = all(_num(x) is not None for x in all_x)
    pos = {x: (_num(x) if numeric else i) for i, x in enumerate(all_x)}
    for i, (label, pts) in enumerate(series.items()):
        xs = [pos[p[0]] for p in pts]
        means = [p[1] for p in pts]
        err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
        # lines that coincide (a policy equal to its baseline) must stay visible: each
        # series has its own marker and dash, drawn thinner and smaller than the one below
        ax.errorbar(xs, means, yerr=err, capsize=3, label=label, **_style(i, len(series)))
    if not numeric:
        ax.set_xticks(range(len(all_x)), [str(x) for x in all_x], rotation=20)
    else:
        ticks = sorted(float(v) for v in pos.values() if v is not None)
        if all(t.is_integer() for t in ticks):
            ax.set_xticks(ticks)  # batch 1 and 4, not 1.5, 2.5
    ax.set_xlabel(axis)
    ax.set_ylabel(metric)
    ax.set_title(title or f"{metric} vs {axis}")
    ax.grid(alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=8)
    if path is not None:
        from npuweave.fileio import save_figure

        save_figure(fig, path)
    return fig


_MARKERS = "osD^vP*X"
_DASHES = ("-", "--", "-.", ":")


def _style(i: int, n: int) -> dict[str, Any]:
    """Series ``i`` of ``n``: marker, dash, and a size shrinking with ``i`` so a later series
    drawn on top of an earlier, equal one leaves the earlier one's edge showing."""
    shrink = i / max(n - 1, 1)
    return {"marker": _MARKERS[i % len(_MARKERS)], "linestyle": _DASHES[i % len(_DASHES)],
            "markersize": 9 - 4 * shrink, "linewidth": 2.6 - 1.4 * shrink, "alpha": 0.9}
