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


def _figure(n: int, cols: int = 3, sharey: bool = False) -> tuple[Any, list[Any]]:
    """``n`` panels on a grid no wider than ``n`` (one panel: one column, no blank canvas)."""
    from npuweave.report.figure import new_figure  # no pyplot: shows inline in Jupyter

    cols = max(1, min(cols, n))
    rows = max(1, -(-n // cols))
    fig = new_figure(figsize=(4.4 * cols, 3.4 * rows))
    axes = fig.subplots(rows, cols, squeeze=False, sharey=sharey)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat


def _norm(r: dict[str, Any], key: str, base: float | None) -> float:
    v = r.get(key)
    if not base or v is None or not np.isfinite(float(v)):
        return np.nan
    return float(v) / base


def plot_fig5(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """``fig5_figure`` written to ``path``."""
    save_figure(fig5_figure(rows), path, dpi=110)


def fig5_figure(rows: Sequence[dict[str, Any]]) -> Any:
    """Normalized maximum sustainable STP vs vision:NLP ratio, one panel per pair, on one
    y-scale. Error bars: the 95% bracket of each capacity (``qps_sure`` to ``qps_fail_sure``);
    open triangles: the first failing load where it lies below the capacity (a valley)."""
    rows = [r for r in rows if r.get("figure") == "V.5"]
    pairs = list(dict.fromkeys(r["pair"] for r in rows))
    fig, axes = _figure(len(pairs), sharey=True)
    for ax, pair in zip(axes, pairs):
        sub = [r for r in rows if r["pair"] == pair]
        labels = list(dict.fromkeys(r["ratio"] for r in sub))
        base = {r["ratio"]: r.get("qps") for r in sub if r["scheduler"] == "baseline"}
        for k, s in enumerate(dict.fromkeys(r["scheduler"] for r in sub)):
            _fig5_line(ax, [next((r for r in sub if r["scheduler"] == s and r["ratio"] == lab),
                                 {}) for lab in labels], base, labels, s, k)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_title(pair)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
        v, n = pair.split("+")
        ax.set_xlabel(f"arrival ratio {v}:{n} (vision:NLP)", fontsize=8)
        ax.set_ylabel("max sustainable STP / baseline", fontsize=8)
        ax.grid(alpha=0.3)
    if pairs:
        axes[0].plot([], [], "v", mfc="none", color="gray", label="first failing load (valley)")
        axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def _fig5_line(ax: Any, pts: list[dict[str, Any]], base: dict[str, Any], labels: list[str],
               s: str, k: int) -> None:
    colour, ls = STYLE.get(s, ("gray", "-"))
    xs = np.arange(len(labels)) + (k - 1.5) * 0.06  # a small dodge keeps the bars apart
    bs = [base.get(lab) for lab in labels]
    y = np.array([_norm(r, "qps", b) for r, b in zip(pts, bs)])
    lo = np.array([_norm(r, "qps_sure", b) for r, b in zip(pts, bs)])
    hi = np.array([_norm(r, "qps_fail_sure", b) for r, b in zip(pts, bs)])
    err = np.vstack([np.where(np.isnan(lo), 0, np.clip(y - lo, 0, None)),
                     np.where(np.isnan(hi), 0, np.clip(hi - y, 0, None))])
    ax.errorbar(xs, y, yerr=err, fmt="o" + ls, color=colour, ms=3, lw=1, elinewidth=0.7,
                capsize=1.5, label=s)
    ff = np.array([_norm(r, "first_failed_qps", b) for r, b in zip(pts, bs)])
    valley = ff < y
    if valley.any():
        ax.plot(xs[valley], ff[valley], "v", mfc="none", color=colour, ms=5)


def plot_fig6(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Latency CDFs per model and scheduler, with the deadline as a vertical line."""
    rows = [r for r in rows if r.get("figure") in ("V.6", "V.6-ours")]
    panels = []
    for fig_name, pair in dict.fromkeys((r["figure"], r["pair"]) for r in rows):
        sub = [r for r in rows if (r["figure"], r["pair"]) == (fig_name, pair)]
        keys = [k for k in sub[0] if k.startswith("latency_")]
        dls = [float(x[:-2]) * 1e-3 for x in sub[0]["deadlines"].split("/")]
        where = "thesis load" if fig_name == "V.6" else \
            f"ours, {sub[0].get('load_ratio', 0):.2f}x the thesis load"
        for key, dl in zip(keys, dls):
            panels.append((f"{pair} {sub[0]['qps']} QPS ({where}): {key[8:]}", sub, key, dl))
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
    fig, axes = _figure(len(cases), sharey=True)
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
