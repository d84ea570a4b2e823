"""Picture of each group's LMEM allocation: timesteps on x, address on y, one rectangle per
buffer colored by kind, bank boundaries dashed (like the seed's allocation figures)."""

from __future__ import annotations

import math
import os
from typing import Any

from npuweave.compile.layergroup.model import BufferKind, GroupPlan, GroupStatus, LayerGroup

COLORS = {BufferKind.ACTIVATION: "#4C72B0", BufferKind.WEIGHT: "#DD8452",
          BufferKind.SCRATCH: "#8C8C8C"}
MIB = float(1 << 20)


def draw_group(ax: Any, g: LayerGroup, index: int, lmem_bytes: int, banks: int) -> None:
    """Draw one group's buffers on a matplotlib axis."""
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import MaxNLocator

    for b in g.buffers:
        ax.add_patch(Rectangle((b.start, b.address / MIB), b.end - b.start + 1, b.bytes / MIB,
                               facecolor=COLORS[b.kind], edgecolor="white", linewidth=0.4))
    for k in range(1, banks):
        ax.axhline(k * lmem_bytes / banks / MIB, color="0.7", linestyle="--", linewidth=0.5)
    ax.set_xlim(0, max(g.timesteps, 1))
    ax.set_ylim(0, lmem_bytes / MIB)
    name = g.layers[0] if len(g.layers) == 1 else f"{g.layers[0]} .. {g.layers[-1]}"
    ax.set_title(f"group {index}: {len(g.layers)} layers, N/{g.n_slices} H/{g.h_slices}\n"
                 f"{name}", fontsize=7)
    ax.tick_params(labelsize=6)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def plot_plan(plan: GroupPlan, path: str | os.PathLike[str] | None = None,
              ax: Any = None) -> Any:
    """One panel per grouped group (time x LMEM address); returns the matplotlib Figure.

    ``ax`` is an Axes or a sequence of Axes to draw into (one per grouped group); without it
    a new Figure holds a grid of panels. ``path`` also saves the figure (format from the
    suffix, written atomically). No matplotlib backend is selected here.

    Examples
    --------
    >>> fig = plot_plan(plan)                  # doctest: +SKIP
    >>> plot_plan(plan, path="lmem.png")       # doctest: +SKIP
    """
    from matplotlib.patches import Patch

    from npuweave.errors import ConfigError
    from npuweave.fileio import save_figure
    from npuweave.report.figure import new_figure

    shown = [(k, g) for k, g in enumerate(plan.groups) if g.status is GroupStatus.GROUPED]
    if ax is not None:
        axes = list(ax) if isinstance(ax, (list, tuple)) else [ax]
        if len(axes) < len(shown):
            raise ConfigError(f"plot_plan: {len(shown)} grouped groups need {len(shown)} axes, "
                              f"got {len(axes)}; pass more axes or leave ax out")
        fig = axes[0].figure
        for one, (k, g) in zip(axes, shown, strict=False):
            draw_group(one, g, k, plan.lmem_bytes, plan.lmem_banks)
    else:
        cols = min(4, max(len(shown), 1))
        nrows = max(math.ceil(len(shown) / cols), 1)
        fig = new_figure(figsize=(3.6 * cols, 2.8 * nrows))
        grid = fig.subplots(nrows, cols, squeeze=False)
        for one in grid.flat[len(shown):]:
            one.axis("off")
        for one, (k, g) in zip(grid.flat, shown, strict=False):
            draw_group(one, g, k, plan.lmem_bytes, plan.lmem_banks)
        for one in grid[:, 0]:
            one.set_ylabel("LMEM address (MiB)", fontsize=7)
        for one in grid[-1, :]:
            one.set_xlabel("timestep", fontsize=7)
    fig.legend(handles=[Patch(color=c, label=str(kind)) for kind, c in COLORS.items()],
               loc="upper right", fontsize=7)
    fig.suptitle(f"{plan.model} on {plan.npu}, batch {plan.batch}, {plan.method}", fontsize=9)
    if ax is None:
        fig.tight_layout(rect=(0, 0, 0.93, 0.96))
    if path is not None:
        save_figure(fig, path, dpi=120)
    return fig
