"""PNG plots of the PREMA reproduction (Figs 11-15 analogs) from its plain-dict result.

Examples
--------
>>> plot_prema(result, "plots")  # doctest: +SKIP
['plots/prema_fig11.png', ...]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from npuweave.fileio import save_figure

METRICS = (("antt_x", "ANTT improvement"), ("fairness_x", "fairness improvement"),
           ("stp_x", "STP improvement"))


def _figure(figsize: tuple[float, float]) -> Any:
    from npuweave.report.figure import new_figure  # no pyplot: shows inline in Jupyter

    return new_figure(figsize=figsize)


def _save(fig: Any, path: str) -> str:
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


def _finish(fig: Any, ax: Any, title: str, path: str) -> str:
    """A one-panel figure: its title and legend, then saved."""
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    return _save(fig, path)


def _bars(imp: dict[str, dict[str, float]], labels: Sequence[str], title: str, path: str
          ) -> str:
    fig = _figure((13, 3.8))
    axes = fig.subplots(1, 3)
    for ax, (key, name) in zip(axes, METRICS):
        vals = [imp[k][key] for k in labels]
        ax.bar(range(len(labels)), vals, color="tab:blue")
        ax.set_xticks(range(len(labels)), list(labels), fontsize=7, rotation=40, ha="right")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("x over NP-FCFS", fontsize=8)
    fig.suptitle(title, fontsize=10)
    return _save(fig, path)


def _sla(curves: dict[str, list[float]], path: str) -> str:
    fig = _figure((7, 4))
    ax = fig.subplots()
    mults = list(range(2, 2 + len(next(iter(curves.values())))))
    for label in ("NP-FCFS", "NP-SJF", "NP-PREMA", "P-HPF dynamic", "P-SJF dynamic",
                  "P-PREMA dynamic"):
        if label in curves:
            ax.plot(mults, [100 * v for v in curves[label]], marker="o", ms=3, label=label)
    ax.set_xlabel("SLA target (x isolated time)")
    ax.set_ylabel("SLA violation rate (%)")
    return _finish(fig, ax, "SLA violations, all tasks (Fig. 13 analog)", path)


def _tails(tails: dict[str, dict[str, float]], path: str) -> str:
    models = sorted({m for v in tails.values() for m in v})
    fig = _figure((9, 4))
    ax = fig.subplots()
    width = 0.8 / max(1, len(tails))
    for j, (label, vals) in enumerate(tails.items()):
        xs = [i + j * width for i in range(len(models))]
        ax.bar(xs, [vals.get(m, 0.0) for m in models], width, label=label)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(models))], models, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("p95 NTT, high priority")
    return _finish(fig, ax, "High-priority tail latency, batch 1 (Fig. 14 analog)", path)


def plot_prema(result: dict[str, Any], out_dir: str) -> list[str]:
    """Write the five figure analogs as PNG files into ``out_dir``; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    imp = result["improvements"]
    p = lambda name: os.path.join(out_dir, f"prema_{name}.png")  # noqa: E731
    np_labels = [k for k in imp if k.startswith("NP-")]
    paths = [_bars(imp, np_labels, "Non-preemptive policies (Fig. 11 analog)", p("fig11"))]
    fig12 = [k for k in imp if k.endswith(("static-checkpoint", " dynamic"))]
    paths.append(_bars(imp, fig12, "Static CHECKPOINT vs dynamic (Fig. 12 analog)", p("fig12")))
    paths.append(_sla(result["sla_curves"], p("fig13")))
    paths.append(_tails(result["tails"], p("fig14")))
    fig15 = [k for k in imp if "kill" in k]
    if fig15:
        paths.append(_bars(imp, fig15, "KILL instead of CHECKPOINT (Fig. 15 analog)",
                           p("fig15")))
    return paths
