"""Energy of a run from its timeline: static power over the span, gating of idle gaps, EDP.

Pure functions of numbers and intervals (seconds, joules, watts); the dynamic energy of each
request comes from the cost side (``npuweave.cost.energy``), the busy intervals from the
simulator.

Static energy of a run that spans ``span_s`` seconds with static power ``static_w`` of which
``gated_w`` can be gated: the ungated part burns for the whole span; a gated component burns
while the NPU is busy (the union of the PE and DRAM intervals) and, in each idle gap (the one
before the first interval included), for ``min(gap, wake_up_s)``: it powers down when the NPU
goes idle and wakes ``wake_up_s`` ahead of the next work, or stays on through a gap shorter
than its wake-up. A gated run therefore never costs more than an ungated one.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def busy_union(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """Merge ``(start, end)`` intervals into disjoint busy periods, in time order.

    Examples
    --------
    >>> busy_union([(0, 2), (1, 3), (5, 6)])
    [(0, 3), (5, 6)]
    """
    merged: list[tuple[float, float]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def idle_gaps(busy: list[tuple[float, float]], span_s: float) -> np.ndarray:
    """Idle gaps of ``[0, span_s]`` outside the merged ``busy`` periods (leading one included,
    trailing one included when the span ends after the last busy period)."""
    if not busy:
        return np.array([span_s]) if span_s > 0 else np.zeros(0)
    starts = np.array([s for s, _ in busy])
    ends = np.array([e for _, e in busy])
    gaps = np.concatenate(([starts[0]], starts[1:] - ends[:-1], [max(0.0, span_s - ends[-1])]))
    return gaps[gaps > 0]


def static_energy(busy: list[tuple[float, float]], span_s: float, static_w: float,
                  gated_w: float = 0.0, wake_up_s: float = 0.0) -> float:
    """Static joules of a run (see the module docstring).

    Examples
    --------
    >>> static_energy([(1.0, 2.0)], 4.0, static_w=2.0)
    8.0
    >>> static_energy([(1.0, 2.0)], 4.0, static_w=2.0, gated_w=1.0, wake_up_s=0.5)
    6.0
    """
    always = (static_w - gated_w) * span_s
    if gated_w <= 0:
        return always
    on = sum(e - s for s, e in busy) + float(np.minimum(idle_gaps(busy, span_s), wake_up_s).sum())
    return always + gated_w * min(on, span_s)


def energy_row(dynamic: dict[str, float], static_j: float, span_s: float, inferences: int,
               mean_latency_s: float, peak_power_w: float) -> dict[str, float]:
    """One table row: joules by kind, per inference, average and peak power, EDP.

    ``dynamic`` holds ``compute_j``, ``sram_j`` and ``dram_j``; the energy-delay product is
    per inference: energy per inference times the mean latency (J*s).

    Examples
    --------
    >>> row = energy_row({"compute_j": 1.0, "sram_j": 0.5, "dram_j": 0.5}, 2.0, 4.0, 2, 0.5, 3.0)
    >>> row["energy_j"], row["avg_power_w"], row["edp_js"]
    (4.0, 1.0, 1.0)
    """
    total = sum(dynamic.values()) + static_j
    per = total / inferences if inferences else 0.0
    return {"energy_j": total, "energy_per_inference_j": per,
            "compute_energy_j": dynamic.get("compute_j", 0.0),
            "sram_energy_j": dynamic.get("sram_j", 0.0),
            "dram_energy_j": dynamic.get("dram_j", 0.0), "static_energy_j": static_j,
            "avg_power_w": total / span_s if span_s > 0 else 0.0,
            "peak_power_w": peak_power_w, "edp_js": per * mean_latency_s}


#: Columns ``energy_row`` adds to a run's table, in order.
ENERGY_COLUMNS = ("energy_j", "energy_per_inference_j", "compute_energy_j", "sram_energy_j",
                  "dram_energy_j", "static_energy_j", "avg_power_w", "peak_power_w", "edp_js")
