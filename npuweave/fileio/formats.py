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
import struct
import sys
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from npuweave.errors import ConfigError, optional_module
from npuweave.fileio.atomic import STDOUT, atomic_open, write_bytes, write_text
from npuweave.fileio.jsoncolumns import rows_text

_PLAIN = frozenset((str, int, bool, type(None)))


def _plain(v: Any) -> bool:
    """Whether ``json_safe(v) is v`` for sure: a str, int, bool, None or finite float (of
    exactly those types; ``inf - inf`` and ``nan - nan`` are NaN, so ``v - v == 0`` is a
    finiteness test)."""
    t = type(v)
    return t in _PLAIN or (t is float and v - v == 0)


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
    if hasattr(obj, "row_chunks"):  # made safe a chunk at a time, as it is written
        return obj
    if isinstance(obj, Mapping):
        return {str(k) if not isinstance(k, str) else k: v if _plain(v) else json_safe(v)
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [v if _plain(v) else json_safe(v) for v in obj]
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
    out: list[str] = []
    write_json_text(out.append, obj, indent, sort_keys)
    return "".join(out)


def write_json_text(emit: Callable[[str], Any], obj: Any, indent: int | None = 2,
                    sort_keys: bool = False) -> None:
    """Hand ``json_text(obj)`` to ``emit`` in pieces. A value with a ``row_chunks()`` method
    (``npuweave.metrics.records``: rows kept as columns) is written as the list of its rows,
    one chunk of dicts at a time, so its rows are never all in memory as dicts or text."""
    safe = json_safe(obj)
    if indent is None:
        emit(json.dumps(_whole(safe), allow_nan=False, sort_keys=sort_keys) + "\n")
        return
    _indented(safe, 0, emit, _Encoders(indent, sort_keys))
    emit("\n")


def _whole(obj: Any) -> Any:
    """``obj`` with every row source made into its list of (safe) rows."""
    if hasattr(obj, "row_chunks"):
        return [json_safe(r) for chunk in obj.row_chunks() for r in chunk]
    if isinstance(obj, dict):
        return {k: _whole(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_whole(v) for v in obj]
    return obj


class _Encoders:
    """``json.dumps(obj, indent=...)`` runs Python's pure encoder (CPython's C encoder does
    not indent). ``_indented`` writes the same bytes faster: a container of plain values
    (every row of a table) goes through the C encoder in one call, its item separator
    carrying the newline and the indentation; only containers of containers are walked."""

    def __init__(self, indent: int, sort_keys: bool) -> None:
        self.indent, self.sort_keys = indent, sort_keys
        self._by_depth: dict[int, json.JSONEncoder] = {}

    def pad(self, depth: int) -> str:
        return " " * (self.indent * depth)

    def at(self, depth: int) -> json.JSONEncoder:
        """The C encoder whose item separator starts a new line at ``depth``."""
        enc = self._by_depth.get(depth)
        if enc is None:
            enc = json.JSONEncoder(allow_nan=False, sort_keys=self.sort_keys,
                                   separators=(",\n" + self.pad(depth), ": "))
            self._by_depth[depth] = enc
        return enc


def _flat_dict(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj) and not any(
        isinstance(v, (dict, list)) for v in obj.values())


def _table_items(rows: list[Any], depth: int, enc: _Encoders) -> str:
    """The indented items of a list of non-empty dicts of plain values (between the list's
    brackets), in one C-encoder call: its separator indents the dicts' items; the list's own
    separators, the only ``},`` + newline + ``{`` in the text (a string's newline is
    escaped), are then re-indented."""
    p1, p2 = enc.pad(depth + 1), enc.pad(depth + 2)
    body = enc.at(depth + 2).encode(rows)[2:-2]
    body = body.replace("},\n" + p2 + "{", "\n" + p1 + "},\n" + p1 + "{\n" + p2)
    return "{\n" + p2 + body + "\n" + p1 + "}"


def _items(rows: list[Any], depth: int, enc: _Encoders) -> str:
    """The items of the non-empty list ``rows`` at ``depth``, between its brackets."""
    if all(_flat_dict(v) for v in rows):
        return _table_items(rows, depth, enc)
    texts = []
    for item in rows:
        out: list[str] = []
        _indented(item, depth + 1, out.append, enc)
        texts.append("".join(out))
    return (",\n" + enc.pad(depth + 1)).join(texts)


def _stream(rows: Any, depth: int, emit: Callable[[str], Any], enc: _Encoders) -> None:
    """The list of a row source's rows, a chunk at a time (each chunk made safe, unless the
    source's ``json_plain()`` says every row is a non-empty dict of str, int, bool, None or
    finite float values already; the encoder refuses a non-finite float if it was wrong)."""
    sep = "[\n" + enc.pad(depth + 1)
    plain = bool(getattr(rows, "json_plain", lambda: False)())
    fields: Sequence[str] = getattr(rows, "fields", ())
    if plain and fields and hasattr(rows, "column_chunks"):
        keys = sorted(fields) if enc.sort_keys else list(fields)
        for cols in rows.column_chunks():  # no dict per row (``fileio.jsoncolumns``)
            if cols[keys[0]]:
                emit(sep + rows_text(cols, keys, enc.pad(depth + 1), enc.pad(depth + 2),
                                     enc.at(0).encode))
                sep = ",\n" + enc.pad(depth + 1)
    else:
        for chunk in rows.row_chunks():
            if chunk:
                emit(sep + (_table_items(chunk, depth, enc) if plain else
                            _items([json_safe(r) for r in chunk], depth, enc)))
                sep = ",\n" + enc.pad(depth + 1)
    emit("[]" if sep[0] == "[" else "\n" + enc.pad(depth) + "]")


def _indented(obj: Any, depth: int, emit: Callable[[str], Any], enc: _Encoders) -> None:
    """Emit ``json.dumps(obj, indent=enc.indent)``'s text of ``obj`` at ``depth``."""
    if hasattr(obj, "row_chunks"):
        _stream(obj, depth, emit, enc)
        return
    is_dict = isinstance(obj, dict)
    if not (is_dict or isinstance(obj, list)) or not obj:
        emit(enc.at(0).encode(obj))
        return
    if not is_dict and all(_flat_dict(v) for v in obj):
        emit("[\n" + enc.pad(depth + 1) + _table_items(obj, depth, enc) + "\n"
             + enc.pad(depth) + "]")
        return
    values = obj.values() if is_dict else obj
    inner, close = enc.pad(depth + 1), "\n" + enc.pad(depth) + ("}" if is_dict else "]")
    if not any(isinstance(v, (dict, list)) or hasattr(v, "row_chunks") for v in values):
        text = enc.at(depth + 1).encode(obj)
        emit(text[0] + "\n" + inner + text[1:-1] + close)
        return
    items = (sorted(obj.items()) if enc.sort_keys else obj.items()) if is_dict else obj
    emit("{" if is_dict else "[")
    sep = "\n"
    for item in items:
        emit(sep + inner)
        sep = ",\n"
        if is_dict:
            emit(enc.at(0).encode(item[0]) + ": ")
            item = item[1]
        _indented(item, depth + 1, emit, enc)
    emit(close)


def _is_stdout(path: str | os.PathLike[str]) -> bool:
    return str(path) == STDOUT


def write_json(path: str | os.PathLike[str], obj: Any, indent: int | None = 2) -> None:
    """Write ``json_text(obj)``: to stdout for ``-``, gzip-compressed for a ``.gz`` name,
    else as UTF-8 text, always atomically.

    Examples
    --------
    >>> write_json("run.json.gz", {"ok": True})  # doctest: +SKIP
    """
    if _is_stdout(path):
        write_json_text(sys.stdout.write, obj, indent)
        sys.stdout.flush()
    elif str(path).endswith(".gz"):
        with atomic_open(path, "wb") as fh:
            gz = _Gzip(fh)
            write_json_text(gz.write, obj, indent)
            gz.close()
    else:
        with atomic_open(path, "w", encoding="utf-8") as fh:
            write_json_text(fh.write, obj, indent)


class _Gzip:
    """The bytes of ``gzip.compress(text, mtime=0)``, written as the text comes: its
    10-byte header (mtime 0 keeps the bytes reproducible: the same run gives the same file),
    the raw deflate stream at the same level (deflate's output does not depend on how its
    input is cut), then the CRC-32 and the length."""

    def __init__(self, fh: Any) -> None:
        self.fh, self.crc, self.size = fh, 0, 0
        self.deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        fh.write(gzip.compress(b"", mtime=0)[:10])

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.crc, self.size = zlib.crc32(data, self.crc), self.size + len(data)
        self.fh.write(self.deflate.compress(data))

    def close(self) -> None:
        self.fh.write(self.deflate.flush())
        self.fh.write(struct.pack("<LL", self.crc, self.size & 0xFFFFFFFF))


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

    ``rows`` may be a row source (a ``row_chunks()`` method, ``npuweave.metrics.records``)
    when ``columns`` is given: it is written a chunk of rows at a time.

    Examples
    --------
    >>> write_csv("-", [{"a": 1}])
    a
    1
    """
    if columns is not None and hasattr(rows, "row_chunks"):  # rows kept as columns
        with atomic_open(path, "w", encoding="utf-8") as fh:
            for i, chunk in enumerate(rows.row_chunks()):
                fh.write(csv_text(chunk, columns, header=i == 0))
        return
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
    if hasattr(rows, "columns") and hasattr(rows, "row_chunks") and len(rows):
        # a row source (``npuweave.metrics.records``): its columns, not a dict per row
        frame = pd.DataFrame(rows.columns(0, len(rows)))
    else:
        frame = pd.DataFrame(list(rows))
    frame.to_parquet(buf, index=False)
    write_bytes(path, buf.getvalue())

