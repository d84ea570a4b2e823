"""Energy columns on screen: kept out of the main tables, shown as one short table of their own.

CSV, JSON and Parquet outputs keep every energy column in the rows themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from npuweave.metrics.energy import ENERGY_COLUMNS


def without_energy(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows less their energy columns (for the main table on screen)."""
    return [{k: v for k, v in r.items() if k not in ENERGY_COLUMNS} for r in rows]


def energy_rows(rows: Sequence[Mapping[str, Any]], label: str) -> list[dict[str, Any]]:
    """One short row per input row: mJ per inference, its split, average and peak power, EDP.

    ``label`` names the key (or a function of the row) that heads each line.
    """
    out = []
    for r in rows:
        total = r.get("energy_j") or 0.0
        share = {k: (r[f"{k}_energy_j"] / total if total else 0.0)
                 for k in ("compute", "sram", "dram", "static")}
        out.append({"row": r[label], "mJ/inf": r["energy_per_inference_j"] * 1e3,
                    "total mJ": total * 1e3,
                    **{f"{k} %": f"{v:.0%}" for k, v in share.items()},
                    "avg W": r["avg_power_w"], "peak W": r["peak_power_w"],
                    "EDP J*s": f"{r['edp_js']:.3e}"})
    return out
