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


def plot_plan(plan: GroupPlan, path: str | os.PathLike[str]) -> int:
    """Write one figure with a panel per grouped group; returns the number of panels."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from npuweave.fileio import save_figure

    shown = [(k, g) for k, g in enumerate(plan.groups) if g.status is GroupStatus.GROUPED]
    cols = min(4, max(len(shown), 1))
    nrows = max(math.ceil(len(shown) / cols), 1)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 2.8 * nrows), squeeze=False)
    for ax in axes.flat[len(shown):]:
        ax.axis("off")
    for ax, (k, g) in zip(axes.flat, shown, strict=False):
        draw_group(ax, g, k, plan.lmem_bytes, plan.lmem_banks)
    for ax in axes[:, 0]:
        ax.set_ylabel("LMEM address (MiB)", fontsize=7)
    for ax in axes[-1, :]:
        ax.set_xlabel("timestep", fontsize=7)
    fig.legend(handles=[Patch(color=c, label=str(kind)) for kind, c in COLORS.items()],
               loc="upper right", fontsize=7)
    fig.suptitle(f"{plan.model} on {plan.npu}, batch {plan.batch}, {plan.method}", fontsize=9)
    fig.tight_layout(rect=(0, 0, 0.93, 0.96))
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return len(shown)
