"""Read request traces (CSV or JSON) into ``Arrivals``.

One request per row: arrival time, model, optional priority and deadline. Times take a unit
(``12ms``; bare numbers are seconds). A CSV has a header naming its columns (``time``, ``model``,
``priority``, ``deadline``; ``time_s``/``arrival_s`` and ``deadline_s`` are accepted too); a
JSON file is a list of objects with the same keys, or ``{"requests": [...]}``. Rows must be in
arrival order. Every problem is reported on one line naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError
from npuweave.sim.arrivals import Arrivals, make_arrivals
from npuweave.sim.options import parse_seconds

_KEYS = {"time": "time", "time_s": "time", "arrival": "time", "arrival_s": "time",
         "model": "model", "priority": "priority", "deadline": "deadline",
         "deadline_s": "deadline"}
#: Rows read from one trace before the reader asks for a shorter file.
MAX_TRACE_ROWS = 20_000_000
#: Largest trace file read (bytes); bigger ones are refused before reading.
MAX_TRACE_BYTES = 2**31


def _read_rows(path: Path) -> list[tuple[str, Mapping[str, Any]]]:
    try:
        if path.stat().st_size > MAX_TRACE_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_TRACE_BYTES >> 20} MiB; split the trace")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the trace ({exc}); give a CSV or JSON file") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        if isinstance(data, dict) and "requests" in data:
            data = data["requests"]
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ConfigError(f"{path}: a JSON trace is a list of request objects "
                              '(or {"requests": [...]})')
        return [(f"request {i}", r) for i, r in enumerate(data)]
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames:
        raise ConfigError(f"{path}: empty trace; the first line must name the columns "
                          "(time,model[,priority][,deadline])")
    rows: list[tuple[str, Mapping[str, Any]]] = []
    for r in reader:
        if None in r:
            raise ConfigError(f"{path}: row {reader.line_num}: more fields than the header has")
        rows.append((f"row {reader.line_num}", r))
    return rows


def _normalize(path: Path, where: str, row: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        canon = _KEYS.get(str(key).strip().lower())
        if canon is None:
            raise ConfigError(f"{path}: {where}: unknown field {key!r}; use time, model, "
                              "priority, deadline")
        out[canon] = value
    for need in ("time", "model"):
        if out.get(need) in (None, ""):
            raise ConfigError(f"{path}: {where}: field {need!r} is missing")
    return out


def _row_values(path: Path, where: str, row: dict[str, Any]) -> tuple[float, str, int, float]:
    try:
        t = parse_seconds(str(row["time"]), "time")
    except ConfigError as exc:
        raise ConfigError(f"{path}: {where}: field 'time': {exc}") from None
    if not (math.isfinite(t) and t >= 0):
        raise ConfigError(f"{path}: {where}: field 'time' = {row['time']!r}; times must be "
                          "finite and >= 0")
    pri = row.get("priority")
    if pri in (None, ""):
        p = 1
    elif (isinstance(pri, int) and not isinstance(pri, bool)) or (
            isinstance(pri, str) and pri.strip().isdigit()):
        p = int(pri)
    else:
        p = 0
    if p < 1:
        raise ConfigError(f"{path}: {where}: field 'priority' = {pri!r}; give a whole number >= 1")
    ddl = row.get("deadline")
    if ddl in (None, "") or str(ddl).strip().lower() in ("none", "inf"):
        d = math.inf
    else:
        try:
            d = parse_seconds(str(ddl), "deadline")
        except ConfigError as exc:
            raise ConfigError(f"{path}: {where}: field 'deadline': {exc}") from None
        if not d > 0:
            raise ConfigError(f"{path}: {where}: field 'deadline' = {ddl!r}; must be > 0 "
                              "(leave empty for none)")
    return t, str(row["model"]).strip(), p, d


def from_trace(path: str | os.PathLike[str], models: Sequence[str] | None = None) -> Arrivals:
    """Read a CSV or JSON request trace; ``models`` fixes the model order (default: as first seen).

    Examples
    --------
    >>> a = from_trace("requests.csv", ("resnet50", "bert-base"))  # doctest: +SKIP
    >>> a.time_s[:3], a.model[:3]                                   # doctest: +SKIP
    """
    p = Path(path)
    rows = _read_rows(p)
    if not rows:
        raise ConfigError(f"{p}: the trace has no requests")
    if len(rows) > MAX_TRACE_ROWS:
        raise ConfigError(f"{p}: {len(rows)} requests; more than {MAX_TRACE_ROWS}, split the trace")
    names = list(models) if models is not None else []
    index = {m: i for i, m in enumerate(names)}
    times: list[float] = []
    idx: list[int] = []
    pris: list[int] = []
    ddls: list[float] = []
    for where, raw in rows:
        t, model, pri, ddl = _row_values(p, where, _normalize(p, where, raw))
        if model not in index:
            if models is not None:
                raise ConfigError(f"{p}: {where}: field 'model' = {model!r} is not one of the "
                                  f"models being served ({', '.join(names)})")
            index[model] = len(names)
            names.append(model)
        if times and t < times[-1]:
            raise ConfigError(f"{p}: {where}: field 'time' = {raw_time(raw)!r} is earlier than "
                              "the row before; sort the trace by arrival time")
        times.append(t)
        idx.append(index[model])
        pris.append(pri)
        ddls.append(ddl)
    return make_arrivals(times, idx, names, pris, ddls)


def raw_time(row: Mapping[str, Any]) -> Any:
    """The time field of a raw row, whatever its header spelling (for error messages)."""
    for key, value in row.items():
        if _KEYS.get(str(key).strip().lower()) == "time":
            return value
    return None
