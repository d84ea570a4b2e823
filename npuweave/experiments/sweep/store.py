"""Sweep results on disk, streamed as points finish: CSV, or a Parquet dataset.

Rows are appended in chunks; a crash or Ctrl-C loses at most the points in flight. CSV rows are
appended with one ``write`` per chunk and fsynced (a torn last line, from a kill mid-write, is
cut off on ``--resume``); a Parquet "file" is a directory of part files, each written to a
temporary name and renamed, which ``pandas.read_parquet(path)`` reads as one table. ``--resume``
reads the ``point_id`` column back and skips those points.

Column types are fixed by the spec (not by the first row), so every chunk has one schema:
settings are strings (model lists comma-joined, mappings as JSON), integers or floats;
metrics have the types their kind declares.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError
from npuweave.experiments.sweep.kinds import KINDS
from npuweave.experiments.sweep.spec import SweepSpec
from npuweave.fileio import json_text

Column = tuple[str, str]  # name, "string" | "int64" | "float64" | "bool"
_LEAD: tuple[Column, ...] = (("point_id", "string"), ("status", "string"),
                             ("error", "string"), ("elapsed_s", "float64"))


def _value_type(values: Iterable[Any]) -> str:
    vals = [v for v in values if v is not None]
    if vals and all(isinstance(v, bool) for v in vals):
        return "bool"
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return "int64"
    if vals and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
        return "float64"
    return "string"


def columns(spec: SweepSpec) -> list[Column]:
    """Every column of the spec's rows, with its type, in a stable order."""
    kind = KINDS[spec.kind]
    params = [(name, _value_type(dict(p.params).get(name) for p in spec.points))
              for name in spec.param_names]
    return [*_LEAD, *params, *kind.metric_types()]


def encode(value: Any, typ: str) -> Any:
    """A setting or metric as stored: tuples of names comma-joined, mappings as JSON."""
    if value is None:
        return None
    if typ == "string":
        if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
            return ",".join(value)
        if isinstance(value, tuple):
            return json_text(dict(value) if value and isinstance(value[0], tuple)
                             else list(value), indent=None).rstrip("\n")
        return str(value)
    if typ == "float64":
        return float(value)
    if typ == "int64":
        return int(value)
    return bool(value)


def flat_row(row: Mapping[str, Any], params: Mapping[str, Any], cols: Sequence[Column]
             ) -> dict[str, Any]:
    merged = {**params, **row}
    return {name: encode(merged.get(name), typ) for name, typ in cols}


class CsvStore:
    """Append rows to a CSV file (LF line ends, header first)."""

    def __init__(self, path: Path, cols: Sequence[Column]) -> None:
        self.path, self.cols = path, list(cols)

    def existing_ids(self) -> set[str]:
        if not self.path.exists():
            return set()
        data = self.path.read_bytes()
        torn = bool(data) and not data.endswith(b"\n")  # a kill mid-write: drop the tail
        keep = data[:data.rfind(b"\n") + 1] if torn else data
        try:  # read it all before touching it: a damaged store is refused, never truncated
            reader = csv.reader(io.StringIO(keep.decode("utf-8")))
            header = next(reader, None)
            ids = {r[0] for r in reader if r}
        except (UnicodeDecodeError, csv.Error) as exc:
            raise ConfigError(f"{self.path}: not a sweep results CSV ({exc.__class__.__name__}); "
                              "it was left untouched: write to a new --out") from None
        if header is None:
            return set()
        if header != [c for c, _ in self.cols]:
            raise ConfigError(f"{self.path}: its columns differ from this sweep's; resume only "
                              "the sweep that wrote it, or write to a new --out")
        if torn:
            with open(self.path, "r+b") as fh:
                fh.truncate(len(keep))
        return ids

    def start(self, fresh: bool) -> None:
        if fresh or not self.path.exists() or self.path.stat().st_size == 0:
            self._append(self._csv([], header=True), truncate=True)

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self._append(self._csv(rows, header=False))

    def _csv(self, rows: Sequence[Mapping[str, Any]], header: bool) -> bytes:
        from npuweave.fileio import csv_text

        return csv_text(rows, [c for c, _ in self.cols], header).encode("utf-8")

    def _append(self, data: bytes, truncate: bool = False) -> None:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if truncate else os.O_APPEND)
        fd = os.open(self.path, flags, 0o666)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)


class ParquetStore:
    """A directory of Parquet part files, one per chunk, each written atomically."""

    def __init__(self, path: Path, cols: Sequence[Column]) -> None:
        try:
            import pyarrow as pa
        except ImportError:
            raise ConfigError("Parquet output needs pyarrow: pip install 'npuweave[parquet]' "
                              "(or write --out results.csv)") from None
        self.pa, self.path, self.cols = pa, path, list(cols)
        types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(),
                 "bool": pa.bool_()}
        self.schema = pa.schema([(c, types[t]) for c, t in self.cols])

    def existing_ids(self) -> set[str]:
        import pyarrow.parquet as pq

        if not self.path.is_dir():
            return set()
        ids: set[str] = set()
        for part in sorted(self.path.glob("part-*.parquet")):
            try:
                table = pq.read_table(part)
            except Exception as exc:  # pyarrow raises its own error types for junk
                raise ConfigError(f"{part}: not a readable Parquet part ({type(exc).__name__}); "
                                  "the store is damaged: write to a new --out") from None
            if table.schema.names != self.schema.names:
                raise ConfigError(f"{part}: its columns differ from this sweep's; resume only "
                                  "the sweep that wrote it, or write to a new --out")
            ids.update(table.column("point_id").to_pylist())
        return ids

    def start(self, fresh: bool) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        for stale in self.path.glob(".part-*.tmp"):
            stale.unlink()
        if fresh:
            for old in self.path.glob("part-*.parquet"):
                old.unlink()

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        import pyarrow.parquet as pq

        table = self.pa.Table.from_pylist([dict(r) for r in rows], schema=self.schema)
        name = f"part-{uuid.uuid4().hex[:12]}.parquet"
        tmp = self.path / f".{name}.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, self.path / name)


def sidecar(path: str | os.PathLike[str]) -> Path:
    """The file beside a store that holds its spec's fingerprint and the writer's lock."""
    p = Path(path)
    return p.with_name(f".{p.name}.sweep.json")


def fingerprint(spec: SweepSpec) -> str:
    """A hash of what decides a store's rows: kind, settings and every point's id."""
    data = json_text({"kind": spec.kind, "params": list(spec.param_names),
                      "points": [pt.point_id for pt in spec.points]})
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def check_fingerprint(path: str | os.PathLike[str], spec: SweepSpec) -> None:
    """Refuse, in one line and before touching it, a store another sweep (or tool) wrote."""
    side = sidecar(path)
    try:
        mark = json.loads(side.read_text(encoding="utf-8")).get("fingerprint")
    except FileNotFoundError:
        raise ConfigError(f"--out {path}: has no sweep fingerprint ({side.name}), so it was "
                          "not written by this sweep; write to a new --out") from None
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        raise ConfigError(f"--out {path}: its fingerprint file {side.name} is damaged; "
                          "write to a new --out") from None
    if mark != fingerprint(spec):
        raise ConfigError(f"--out {path}: written by a different sweep (its spec's "
                          "fingerprint differs); resume only the sweep that wrote it, or "
                          "write to a new --out")


_HELD: dict[str, int] = {}  # locks this process holds, by fingerprint-file path


def lock_store(path: str | os.PathLike[str], spec: SweepSpec) -> None:
    """Take (once per process) the one-writer lock of the store at ``path``: an exclusive
    lock on its fingerprint file, held until ``unlock_store`` or the process ends, so a second
    sweep on the same ``--out`` is refused before any work instead of interleaving rows."""
    import fcntl

    side = sidecar(path)
    key = os.path.realpath(side)
    if key in _HELD:
        return
    fd = os.open(side, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise ConfigError(f"--out {path}: another npuweave sweep is writing it now; wait "
                          "for it to finish or choose another --out") from None
    _HELD[key] = fd
    text = json_text({"fingerprint": fingerprint(spec), "kind": spec.kind,
                      "name": spec.name[:200]}).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, text, 0)


def unlock_store(path: str | os.PathLike[str]) -> None:
    fd = _HELD.pop(os.path.realpath(sidecar(path)), None)
    if fd is not None:
        os.close(fd)  # closing the descriptor drops the lock


def open_store(path: str | os.PathLike[str], cols: Sequence[Column]) -> CsvStore | ParquetStore:
    """A store for ``path`` by its suffix: ``.csv`` or ``.parquet`` (a directory)."""
    p = Path(path)
    if p.suffix == ".parquet":
        if p.exists() and not p.is_dir():
            raise ConfigError(f"--out {p}: exists and is not a Parquet dataset directory; "
                              "choose another path")
        return ParquetStore(p, cols)
    if p.suffix == ".csv":
        if p.exists() and not p.is_file():
            raise ConfigError(f"--out {p}: exists and is not a regular file; choose another path")
        return CsvStore(p, cols)
    raise ConfigError(f"--out {p}: unknown format {p.suffix or '(no suffix)'!r}; "
                      "write results.csv or results.parquet")


def read_results(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a results file (CSV or Parquet dataset) as dicts (CSV values as strings)."""
    p = Path(path)
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows: list[dict[str, Any]] = []
        for part in sorted(p.glob("part-*.parquet")):
            rows.extend(pq.read_table(part).to_pylist())
        return rows
    with open(p, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))
