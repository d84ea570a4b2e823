"""Read request traces (CSV or JSON) into ``Arrivals``.

One request per row: arrival time, model, optional priority and deadline. Times take a unit
(``12ms``; bare numbers are seconds). A CSV has a header naming its columns (``time``, ``model``,
``priority``, ``deadline``; ``time_s``/``arrival_s`` and ``deadline_s`` are accepted too); a
JSON file is a list of objects with the same keys, or ``{"requests": [...]}``. Rows must be in
arrival order. Every problem is reported on one line naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import math
import os
import stat
from array import array
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError
from npuweave.fileio import file_kind, load_json
from npuweave.fileio.values import MAX_TIME_S, parse_priority, parse_time
from npuweave.sim.arrivals import Arrivals, check_request_budget, make_arrivals

_KEYS = {"time": "time", "time_s": "time", "arrival": "time", "arrival_s": "time",
         "model": "model", "priority": "priority", "deadline": "deadline",
         "deadline_s": "deadline"}
#: Rows read from one trace before the reader asks for a shorter file (counted while reading).
MAX_TRACE_ROWS = 20_000_000
#: Largest trace file read (bytes); bigger ones are refused before reading.
MAX_TRACE_BYTES = 2**31
#: Largest JSON trace: ``json`` holds the whole document in memory (about 10x the file).
MAX_JSON_TRACE_BYTES = 64 * 2**20
#: Longest CSV field (a model name or a number is short; 200k characters is not a trace).
MAX_FIELD_CHARS = 4096

Rows = Iterator[tuple[str, Mapping[str, Any]]]


def _open_checked(path: Path) -> int:
    """The size of ``path`` if it is a regular file (a FIFO or a device would block or never
    end), else a one-line error."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the trace ({exc.strerror or exc}); give a CSV "
                          "or JSON file") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path}: cannot read the trace, it is {file_kind(st)}; give a "
                          "regular CSV or JSON file")
    if st.st_size > MAX_TRACE_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_TRACE_BYTES >> 20} MiB; split the trace")
    return st.st_size


def _json_rows(path: Path, size: int) -> Rows:
    if size > MAX_JSON_TRACE_BYTES:
        raise ConfigError(f"{path}: a {size >> 20} MiB JSON trace; JSON traces are read whole "
                          f"(limit {MAX_JSON_TRACE_BYTES >> 20} MiB): write it as CSV, which is "
                          "streamed")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the trace ({exc}); give a CSV or JSON file") from None
    data = load_json(text, str(path))
    if isinstance(data, dict) and "requests" in data:
        data = data["requests"]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ConfigError(f"{path}: a JSON trace is a list of request objects "
                          '(or {"requests": [...]})')
    for i, r in enumerate(data):
        yield f"request {i}", r


def _header(path: Path, fields: list[str]) -> list[str]:
    canon = [_KEYS.get(f.strip().lower()) for f in fields]
    for f, c in zip(fields, canon, strict=True):
        if c is None:
            raise ConfigError(f"{path}: header: unknown column {f!r}; use time, model, "
                              "priority, deadline")
    for c in dict.fromkeys(canon):  # in column order: the same message every run
        same = [f for f, k in zip(fields, canon, strict=True) if k == c]
        if len(same) > 1:
            raise ConfigError(f"{path}: header: columns {', '.join(map(repr, same))} all give "
                              f"the {c}; keep one")
    return fields


def _csv_rows(path: Path) -> Rows:
    try:
        fh = path.open(encoding="utf-8-sig", newline="")  # utf-8-sig: spreadsheets write a BOM
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the trace ({exc.strerror or exc})") from None
    with fh:
        reader = csv.reader(fh)
        try:
            fields = next(reader, None)
            if not fields:
                raise ConfigError(f"{path}: empty trace; the first line must name the columns "
                                  "(time,model[,priority][,deadline])")
            fields = _header(path, fields)
            for cells in reader:
                if not cells:
                    continue
                where = f"row {reader.line_num}"
                if len(cells) > len(fields):
                    raise ConfigError(f"{path}: {where}: more fields than the header has")
                yield where, dict(zip(fields, cells))
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: not a text file (not UTF-8); give a CSV or JSON "
                              "file") from None
        except csv.Error as exc:
            raise ConfigError(f"{path}: row {reader.line_num}: not valid CSV ({exc}); fields "
                              f"are at most {MAX_FIELD_CHARS} characters") from None


def _read_rows(path: Path) -> Rows:
    size = _open_checked(path)
    if path.suffix.lower() == ".json":
        return _json_rows(path, size)
    return _csv_rows(path)


def _normalize(path: Path, where: str, row: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        canon = _KEYS.get(str(key).strip().lower())
        if canon is None:
            raise ConfigError(f"{path}: {where}: unknown field {str(key)[:40]!r}; use time, "
                              "model, priority, deadline")
        if canon in out:
            raise ConfigError(f"{path}: {where}: two fields give the {canon}; keep one")
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            raise ConfigError(f"{path}: {where}: field {canon!r} is {len(value)} characters; "
                              f"fields are at most {MAX_FIELD_CHARS}")
        out[canon] = (value, str(key).strip().lower())
    for need in ("time", "model"):
        if out.get(need, ("",))[0] in (None, ""):
            raise ConfigError(f"{path}: {where}: field {need!r} is missing")
    return out


def _row_values(path: Path, where: str, row: dict[str, Any],
                bare: list[str]) -> tuple[float, str, int, float]:
    """Time, model, priority, deadline of one row. A bare time is read as seconds (the common
    practice of traces); the header ``time``/``arrival`` does not say so, so ``bare`` collects
    the columns where that happened, for one printed note."""
    raw_t, key_t = row["time"]
    t = parse_time(raw_t, f"{path}: {where}: field 'time'", bare="s", low=0.0, low_open=False,
                   high=MAX_TIME_S)
    if not key_t.endswith("_s") and _is_bare(raw_t):
        bare.append(key_t)
    raw_p = row.get("priority", (None, ""))[0]
    p = 1 if raw_p in (None, "") else parse_priority(raw_p, f"{path}: {where}: field 'priority'")
    raw_d, key_d = row.get("deadline", (None, ""))
    if raw_d in (None, "") or str(raw_d).strip().lower() in ("none", "inf"):
        d = math.inf
    else:
        d = parse_time(raw_d, f"{path}: {where}: field 'deadline'", bare="s", high=MAX_TIME_S)
        if not key_d.endswith("_s") and _is_bare(raw_d):
            bare.append(key_d)
    model = row["model"][0]
    if not isinstance(model, str):
        raise ConfigError(f"{path}: {where}: field 'model' = {model!r}; give a model name")
    return t, model.strip(), p, d


def _is_bare(value: Any) -> bool:
    return not isinstance(value, str) or value.strip()[-1:].isdigit()


def from_trace(path: str | os.PathLike[str], models: Sequence[str] | None = None,
               notes: list[str] | None = None) -> Arrivals:
    """Read a CSV or JSON request trace; ``models`` fixes the model order (default: as first
    seen). CSV is streamed and its row bound checked while reading; ``notes`` gets a line
    when bare numbers were read as seconds.

    Examples
    --------
    >>> a = from_trace("requests.csv", ("resnet50", "bert-base"))  # doctest: +SKIP
    >>> a.time_s[:3], a.model[:3]                                   # doctest: +SKIP
    """
    p = Path(path)
    names = list(models) if models is not None else []
    index = {m: i for i, m in enumerate(names)}
    times, ddls = array("d"), array("d")
    idx, pris = array("q"), array("q")
    bare: list[str] = []
    for where, raw in _read_rows(p):
        if len(times) >= MAX_TRACE_ROWS:
            raise ConfigError(f"{p}: more than {MAX_TRACE_ROWS} requests; split the trace")
        t, model, pri, ddl = _row_values(p, where, _normalize(p, where, raw), bare)
        if model not in index:
            if models is not None:
                raise ConfigError(f"{p}: {where}: field 'model' = {model[:60]!r} is not one of "
                                  f"the models being served ({', '.join(names)})")
            index[model] = len(names)
            names.append(model)
        if times and t < times[-1]:
            raise ConfigError(f"{p}: {where}: field 'time' = {raw_time(raw)!r} is earlier than "
                              "the row before; sort the trace by arrival time")
        times.append(t)
        idx.append(index[model])
        pris.append(pri)
        ddls.append(ddl)
    if not times:
        raise ConfigError(f"{p}: the trace has no requests")
    check_request_budget(len(times), f"{p}: {len(times)} requests")
    if bare and notes is not None:
        cols = ", ".join(sorted(set(bare)))
        notes.append(f"{p.name}: bare numbers in column(s) {cols} were read as seconds (write "
                     "a unit, e.g. 12ms, or name the column time_s/deadline_s)")
    return make_arrivals(times, idx, names, pris, ddls)


def raw_time(row: Mapping[str, Any]) -> Any:
    """The time field of a raw row, whatever its header spelling (for error messages)."""
    for key, value in row.items():
        if _KEYS.get(str(key).strip().lower()) == "time":
            return value
    return None
