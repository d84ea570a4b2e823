"""Strict JSON and CSV text, and the writers of JSON, CSV and Parquet files (``-`` is stdout,
``.gz`` is gzip), all through ``atomic_open``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from npuweave.errors import ConfigError, optional_module
from npuweave.fileio.atomic import STDOUT, write_bytes, write_text


def json_safe(obj: Any) -> Any:
    """``obj`` with every non-finite float (inf, -inf, NaN) replaced by ``None``.

    JSON has no infinity or NaN; Python's ``json`` writes the non-standard ``Infinity`` and
    ``NaN`` that strict readers (JavaScript's ``JSON.parse``, jq, Go, Rust) reject. npuweave
    writes ``null`` instead: a null number in our JSON means "infinite or undefined" (for
    example the arithmetic intensity of a layer without DRAM traffic). Tuples become lists
    and NumPy scalars and arrays become plain numbers and lists.

    Examples
    --------
    >>> json_safe({"a": float("inf"), "b": [1.5, float("nan")], "c": (1, 2)})
    {'a': None, 'b': [1.5, None], 'c': [1, 2]}
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k) if not isinstance(k, str) else k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "tolist") and callable(obj.tolist):  # NumPy scalars and arrays
        return json_safe(obj.tolist())
    return obj


def json_text(obj: Any, indent: int | None = 2, sort_keys: bool = False) -> str:
    """Strict JSON text of ``obj`` (non-finite floats as ``null``), newline-terminated.

    Examples
    --------
    >>> json_text({"x": float("inf")}, indent=None)
    '{"x": null}\\n'
    """
    return json.dumps(json_safe(obj), indent=indent, allow_nan=False, sort_keys=sort_keys) + "\n"


def _is_stdout(path: str | os.PathLike[str]) -> bool:
    return str(path) == STDOUT


def write_json(path: str | os.PathLike[str], obj: Any, indent: int | None = 2) -> None:
    """Write ``json_text(obj)``: to stdout for ``-``, gzip-compressed for a ``.gz`` name,
    else as UTF-8 text, always atomically.

    Examples
    --------
    >>> write_json("run.json.gz", {"ok": True})  # doctest: +SKIP
    """
    text = json_text(obj, indent)
    if _is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
    elif str(path).endswith(".gz"):
        # mtime=0 keeps the bytes reproducible: the same run gives the same file
        write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        write_text(path, text)


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # full precision; inf and nan as Python spells them
    return value


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
             header: bool = True) -> str:
    """CSV text of flat rows: a header, one line per row, LF line ends, ``None`` as empty.

    ``columns`` fixes the column order (default: first appearance over all rows);
    ``header=False`` leaves the header out (rows appended to an existing file).

    Examples
    --------
    >>> csv_text([{"a": 1, "b": 0.5}, {"a": 2, "b": None}])
    'a,b\\n1,0.5\\n2,\\n'
    """
    cols = list(columns) if columns is not None else []
    if columns is None:
        for row in rows:
            cols.extend(k for k in row if k not in cols)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if header:
        writer.writerow(cols)
    for row in rows:
        writer.writerow([_csv_cell(row.get(c)) for c in cols])
    return buf.getvalue()


def write_csv(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]],
              columns: Sequence[str] | None = None) -> None:
    """Write ``csv_text(rows)`` to ``path`` atomically, or to stdout when ``path`` is ``-``.

    Examples
    --------
    >>> write_csv("-", [{"a": 1}])
    a
    1
    """
    text = csv_text(rows, columns)
    if _is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_text(path, text)


def check_parquet(path: str | os.PathLike[str] | None) -> None:
    """Fail early (before any work) when Parquet output is asked for but cannot be written."""
    if path is None:
        return
    if _is_stdout(path):
        raise ConfigError("Parquet is binary and cannot go to stdout ('-'); give a file name")
    optional_module("pandas", "parquet")
    optional_module("pyarrow", "parquet")


def write_parquet(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """Write flat rows as an Apache Parquet file (needs the ``parquet`` extra).

    Examples
    --------
    >>> write_parquet("rows.parquet", [{"a": 1}])  # doctest: +SKIP
    """
    check_parquet(path)
    pd = optional_module("pandas", "parquet")
    buf = io.BytesIO()
    pd.DataFrame(list(rows)).to_parquet(buf, index=False)
    write_bytes(path, buf.getvalue())

