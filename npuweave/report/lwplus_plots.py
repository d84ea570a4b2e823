"""Plots of the Layerweaver+ reproduction: STP vs arrival ratio (Figure V.5), latency CDFs with
the deadline lines (Figure V.6), STP vs deadline (Figure V.7). Rows are the plain dicts of
``npuweave.experiments.lwplus_repro``; PNGs are written atomically (no backend is selected).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from npuweave.fileio import save_figure

STYLE = {"baseline": ("k", "--"), "layerweaver": ("tab:blue", "-"),
         "lwplus-approx": ("tab:red", "-"), "lwplus-precise": ("tab:orange", ":")}


def _figure(n: int, cols: int = 3) -> tuple[Any, list[Any]]:
    from npuweave.report.figure import new_figure  # no pyplot: shows inline in Jupyter

    rows = max(1, -(-n // cols))
    fig = new_figure(figsize=(4.2 * cols, 3.2 * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat


def plot_fig5(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Normalized maximum sustainable STP vs NLP:vision ratio, one panel per pair."""
    rows = [r for r in rows if r.get("figure") == "V.5"]
    pairs = list(dict.fromkeys(r["pair"] for r in rows))
    fig, axes = _figure(len(pairs))
    for ax, pair in zip(axes, pairs):
        sub = [r for r in rows if r["pair"] == pair]
        labels = list(dict.fromkeys(r["ratio"] for r in sub))
        for s in dict.fromkeys(r["scheduler"] for r in sub):
            ys = [next((r.get("stp_norm") for r in sub
                        if r["scheduler"] == s and r["ratio"] == lab), None) for lab in labels]
            colour, ls = STYLE.get(s, ("gray", "-"))
            ax.plot(range(len(labels)), [np.nan if y is None else y for y in ys], ls,
                    color=colour, marker="o", ms=3, label=s)
        ax.set_title(pair)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
        ax.set_ylabel("STP / baseline")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def plot_fig6(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Latency CDFs per model and scheduler, with the deadline as a vertical line."""
    rows = [r for r in rows if r.get("figure") == "V.6"]
    panels = []
    for pair in dict.fromkeys(r["pair"] for r in rows):
        sub = [r for r in rows if r["pair"] == pair]
        keys = [k for k in sub[0] if k.startswith("latency_")]
        dls = [float(x[:-2]) * 1e-3 for x in sub[0]["deadlines"].split("/")]
        for key, dl in zip(keys, dls):
            panels.append((f"{pair} ({sub[0]['qps']} QPS): {key[8:]}", sub, key, dl))
    fig, axes = _figure(len(panels), cols=2)
    for ax, (title, sub, key, dl) in zip(axes, panels):
        for r in sub:
            lat = np.sort(np.asarray(r[key])) * 1e3
            if lat.size:
                colour, ls = STYLE.get(r["scheduler"], ("gray", "-"))
                ax.plot(lat, np.arange(1, lat.size + 1) / lat.size, ls, color=colour,
                        label=f"{r['scheduler']} (miss {100 * np.mean(lat > dl * 1e3):.1f}%)")
        ax.axvline(dl * 1e3, color="gray", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("latency (ms)")
        ax.set_ylabel("CDF")
        ax.set_title(title, fontsize=8)
        ax.legend(fontsize=6)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def plot_fig7(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Normalized STP vs one deadline (the other at its default), one panel per case."""
    rows = [r for r in rows if r.get("figure") == "V.7"]
    cases = list(dict.fromkeys((r["pair"], r["ratio"], r["varied"]) for r in rows))
    fig, axes = _figure(len(cases))
    for ax, (pair, ratio, which) in zip(axes, cases):
        sub = [r for r in rows if (r["pair"], r["ratio"], r["varied"]) == (pair, ratio, which)]
        idx = 0 if which == "vision" else 1
        for s in dict.fromkeys(r["scheduler"] for r in sub):
            pts = sorted((float(r["deadlines"].split("/")[idx][:-2]), r.get("stp_norm"))
                         for r in sub if r["scheduler"] == s)
            colour, ls = STYLE.get(s, ("gray", "-"))
            ax.plot([p[0] for p in pts], [np.nan if p[1] is None else p[1] for p in pts], ls,
                    color=colour, marker="o", ms=3, label=s)
        ax.set_title(f"{pair} ({ratio}), {which} deadline", fontsize=8)
        ax.set_xlabel(f"{which} deadline (ms)")
        ax.set_ylabel("STP / baseline at 15/130 ms")
        ax.grid(alpha=0.3)
    if cases:
        axes[0].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
