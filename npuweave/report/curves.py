"""Line plots of a metric against a swept parameter, with published values as reference lines."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from npuweave.fileio import save_figure


def curves_png(path: str | os.PathLike[str], series: Mapping[str, Sequence[tuple[float, float]]],
               refs: Mapping[str, float] | None = None, xlabel: str = "", ylabel: str = "",
               title: str | None = None, logx: bool = True) -> str:
    """Write one line per series (``name -> [(x, y), ...]``) and one dashed line per reference.

    A reference line takes the colour of the series whose name ends its own name (``"thesis
    single-batch, vs AI-MT"`` pairs with ``"single-batch, vs AI-MT"``). Returns the path.

    Examples
    --------
    >>> curves_png("gain.png", {"ours": [(8, 10.0), (32, 40.0)]}, {"thesis ours": 60.1})  # doctest: +SKIP
    'gain.png'
    """
    from npuweave.report.figure import new_figure  # no pyplot: shows inline in Jupyter

    fig = new_figure(figsize=(8, 4.5))
    ax = fig.subplots()
    colours = {}
    for name, pts in series.items():
        xs, ys = zip(*sorted(pts), strict=True)
        (line,) = ax.plot(xs, ys, marker="o", label=name)
        colours[name] = line.get_color()
    for name, value in (refs or {}).items():
        colour = next((c for s, c in colours.items() if name.endswith(s)), "grey")
        ax.axhline(value, linestyle="--", color=colour, linewidth=1, label=name)
    if logx:
        ax.set_xscale("log", base=2)
        ticks = sorted({x for pts in series.values() for x, _ in pts})
        ax.set_xticks(ticks, [str(int(t)) if float(t).is_integer() else str(t) for t in ticks])
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    return str(path)
