"""Atomic file output: write to a temporary file beside the target, then rename.

Every file npuweave writes (CSV, JSON, PNG, ONNX, config files) goes through here, so an
interrupted run never leaves a half-written output behind.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from npuweave.errors import ConfigError, optional_module

#: The path that means "standard output" for every table and JSON writer.
STDOUT = "-"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success rename it over ``path``.

    Examples
    --------
    >>> with atomic_open("out.csv") as fh:  # doctest: +SKIP
    ...     fh.write("a,b\\n")
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _unwritable(target, exc) from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.replace(tmp, target)
        except OSError as exc:
            raise _unwritable(target, exc) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _unwritable(target: Path, exc: OSError) -> ConfigError:
    # the temporary file's name means nothing to the user: name the file they asked for
    return ConfigError(f"{target}: cannot write ({exc.strerror or exc}); choose a writable path")


def write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_open(path, "wb") as fh:
        fh.write(data)




def save_figure(fig: Any, path: str | os.PathLike[str], **kwargs: Any) -> None:
    """Save a matplotlib figure atomically (format from the suffix)."""
    fmt = Path(path).suffix.lstrip(".") or "png"
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format=fmt, **kwargs)


# -- formats: the one JSON writer and the one CSV writer ------------------------------------------

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


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """CSV text of flat rows: a header, one line per row, LF line ends, ``None`` as empty.

    ``columns`` fixes the column order (default: first appearance over all rows).

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
