"""Rows of results as rich tables, CSV and JSON (written atomically).

A row is a flat-ish dict: scalar values, or one level of nested dicts (per-model
throughput), which CSV flattens to ``throughput[resnet50]`` columns and tables spread into
one column per key.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from npuweave import fileio
from npuweave.errors import optional_module

HEADERS = {
    "scheduler": "scheduler",
    "stp": "STP",
    "antt": "ANTT",
    "fairness": "fairness",
    "pe_utilization": "PE util",
    "dram_utilization": "DRAM util",
    "makespan_ratio": "makespan/LB",
    "makespan_s": "makespan",
    "throughput": "req/s",
}


def flatten(row: Mapping[str, Any]) -> dict[str, Any]:
    """One level of nested dicts becomes ``key[sub]`` columns.

    Examples
    --------
    >>> flatten({"stp": 1.5, "throughput": {"rn": 10.0}})
    {'stp': 1.5, 'throughput[rn]': 10.0}
    """
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, Mapping):
            out.update({f"{key}[{sub}]": v for sub, v in value.items()})
        else:
            out[key] = value
    return out


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    cols: list[str] = []
    for row in rows:
        cols.extend(k for k in flatten(row) if k not in cols)
    return cols


def format_value(key: str, value: Any) -> str:
    """Human formatting: utilizations as percent, seconds as ms, other floats to 3 decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if key.endswith("_s") and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)  # a whole number of seconds still prints with its unit
    if not isinstance(value, float):
        return str(value)
    if "utilization" in key:
        return f"{100 * value:.1f}%"
    if key.endswith("_s"):
        return f"{1e3 * value:.3f} ms"
    if key.startswith("throughput["):
        return f"{value:.1f}"
    return f"{value:.3f}"


def _header(col: str) -> str:
    """A column's screen name. A ``_s`` column's cells carry their unit (``1.5 ms``), so its
    header drops the suffix: ``p50_s`` over milliseconds would read as seconds."""
    if "[" in col:
        base, sub = col.split("[", 1)
        return f"{HEADERS.get(base, _unitless(base))} {sub.rstrip(']')}"
    return HEADERS.get(col, _unitless(col))


def _unitless(col: str) -> str:
    return col[:-2] if col.endswith("_s") and len(col) > 2 else col


def rich_table(
    rows: Sequence[Mapping[str, Any]],
    title: str | None = None,
    fmt: Callable[[str, Any], str] = format_value,
) -> Any:
    """A ``rich.table.Table`` with one column per (flattened) key, first column left-aligned."""
    from rich.table import Table

    cols = _columns(rows)
    table = Table(title=title, title_justify="left")
    for i, col in enumerate(cols):
        table.add_column(_header(col), justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in rows:
        flat = flatten(row)
        table.add_row(*(fmt(c, flat.get(c)) for c in cols))
    return table


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text of the rows (flattened; full float precision; LF line ends)."""
    return fileio.csv_text([flatten(r) for r in rows], _columns(rows))


def write_csv(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """Write ``to_csv(rows)`` atomically, or print it when ``path`` is ``-``."""
    fileio.write_csv(path, [flatten(r) for r in rows], _columns(rows))


def write_rows_json(path: str | os.PathLike[str], data: Any) -> None:
    """Write strict JSON atomically (rows, or any document of plain values); ``-`` prints it."""
    fileio.write_json(path, data)


def write_parquet(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """Write the (flattened) rows as Parquet; needs ``pip install 'npuweave[parquet]'``."""
    fileio.write_parquet(path, [flatten(r) for r in rows])


def to_dataframe(rows: Sequence[Mapping[str, Any]]) -> Any:
    """A ``pandas.DataFrame`` of the (flattened) rows; needs the ``pandas`` extra.

    Examples
    --------
    >>> to_dataframe([{"stp": 1.5, "throughput": {"rn": 10.0}}]).columns.tolist()  # doctest: +SKIP
    ['stp', 'throughput[rn]']
    """
    pd = optional_module("pandas", "pandas")
    flat = [flatten(r) for r in rows]
    return pd.DataFrame(flat, columns=_columns(rows))


class Rows(list):
    """A list of result rows (dicts) that also turns into a DataFrame or a file.

    Comparisons and reproductions return ``Rows``; it is a plain ``list`` otherwise.

    Examples
    --------
    >>> rows = Rows([{"scheduler": "fcfs", "stp": 1.0}])
    >>> rows[0]["stp"]
    1.0
    >>> rows.to_dataframe()  # doctest: +SKIP
    """

    def to_dataframe(self) -> Any:
        """The rows as a ``pandas.DataFrame`` (nested dicts become ``key[sub]`` columns)."""
        return to_dataframe(self)

    def to_csv(self, path: str | os.PathLike[str] = "-") -> None:
        """Write the rows as CSV (``-``: stdout)."""
        write_csv(path, self)

    def to_parquet(self, path: str | os.PathLike[str]) -> None:
        """Write the rows as Parquet."""
        write_parquet(path, self)
