"""Reading MLPerf LoadGen's logs: its summary's ``key : value`` lines, its verdict's reasons,
values from its detail log, and its latency lines converted to NPU seconds
(``npuweave.experiments.loadgen`` runs LoadGen and reads its logs with these).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from npuweave.errors import ConfigError


def invalid_reasons(path: Path) -> tuple[str, ...]:
    """Why a LoadGen summary says INVALID: its unmet checks and its advice, one line each.

    The ``... satisfied : NO`` lines, then the bullets under ``Recommendations:`` and
    ``Early Stopping Result:`` (which also holds the counts of a run that met it).
    """
    if not path.is_file():
        return ()
    out: list[str] = []
    section = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        text = line.strip()
        key, sep, value = text.partition(":")
        key = key.strip()
        if sep and key.endswith("satisfied") and value.strip().upper() == "NO":
            out.append(f"{key}: NO")
        elif text in ("Recommendations:", "Early Stopping Result:"):
            section = text
        elif text.startswith("* ") and section:
            out.append(text[2:])
        elif not text or text.startswith("="):
            section = ""
    return tuple(out)


def detail_value(path: Path, key: str) -> float | None:
    """A numeric value LoadGen logged under ``key`` in ``mlperf_log_detail.txt``."""
    if not path.is_file():
        return None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if f'"key": "{key}"' in line:
            try:
                value = json.loads(line[line.index("{"):])["value"]
                return float(value)
            except (ValueError, KeyError, TypeError):
                return None
    return None


def parse_summary(path: Path) -> dict[str, str]:
    """``key : value`` lines of LoadGen's ``mlperf_log_summary.txt``."""
    if not path.is_file():
        raise ConfigError(f"{path}: LoadGen wrote no summary; see mlperf_log_detail.txt")
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and value.strip():
            out.setdefault(key.strip(), value.strip())
    return out


_PCT = re.compile(r"^(\d+(?:\.\d+)?) percentile latency \(ns\)$")


def latencies_s(summary: dict[str, str], time_scale: float) -> dict[str, float]:
    """LoadGen's latency lines (ns, real time) as NPU seconds: ``p50``, ``p99``, ``mean``..."""
    out: dict[str, float] = {}
    for key, value in summary.items():
        m = _PCT.match(key)
        name = (f"p{float(m[1]):g}" if m else {"Min latency (ns)": "min",
                "Max latency (ns)": "max", "Mean latency (ns)": "mean"}.get(key))
        if name:
            try:
                out[name] = float(value) / 1e9 / time_scale
            except ValueError:
                continue
    return out
