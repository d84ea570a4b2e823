"""Run a whole sweep: shared standalone times once, points on an executor, rows to disk."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError
from npuweave.experiments.sweep import executors
from npuweave.experiments.sweep.kinds import KINDS, StandaloneKey, standalone_seconds
from npuweave.experiments.sweep.spec import Point, SweepSpec
from npuweave.experiments.sweep.store import (
    CsvStore,
    ParquetStore,
    check_fingerprint,
    columns,
    flat_row,
    lock_store,
    open_store,
    unlock_store,
)

#: Rows are flushed to disk at least this often (seconds) and every this many rows
#: (``NPUWEAVE_SWEEP_FLUSH_ROWS`` overrides the count: 1 writes every row as it finishes).
FLUSH_S = 2.0
FLUSH_ROWS = max(1, int(os.environ.get("NPUWEAVE_SWEEP_FLUSH_ROWS", "64") or 64))


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What a sweep did: points in the spec, skipped (resumed), run, failed, and the rows."""

    total: int
    skipped: int
    ran: int
    failed: int
    wall_s: float
    rows: tuple[dict[str, Any], ...]


def standalone_table(points: Sequence[Point]) -> dict[StandaloneKey, float]:
    """Standalone seconds for every distinct (model, NPU, batch, cost model) the points use,
    computed once here and shared with every worker."""
    table: dict[StandaloneKey, float] = {}
    for p in points:
        kind = KINDS[p.kind]
        params = kind.normalize(p.as_dict())
        try:
            keys = kind.standalone_keys(params)
        except Exception:  # a point that cannot even name its keys fails later, as a row
            continue
        for key in keys:
            if key not in table:
                try:
                    table[key] = standalone_seconds(key, params)
                except Exception:  # the point's own run reports the error
                    continue
    return table


def check_output(spec: SweepSpec, out: str | Path | None, resume: bool = False,
                 overwrite: bool = False) -> CsvStore | ParquetStore | None:
    """The store for ``out``, or a one-line error before any work (bad suffix, not a regular
    file, exists without ``resume``/``overwrite``)."""
    if out is None:
        return None
    store = open_store(out, columns(spec))
    if not resume and not overwrite and Path(out).exists():
        raise ConfigError(f"--out {out}: already exists; add --resume to continue that sweep "
                          "or --overwrite to replace it")
    if resume and Path(out).exists():
        check_fingerprint(out, spec)
    lock_store(out, spec)  # before reading or writing it: one writer per store
    if resume and Path(out).exists():
        store.existing_ids()  # a damaged store is refused here, before any work
    return store


def run_sweep(spec: SweepSpec, out: str | Path | None = None, *, jobs: int = 1,
              dask: str | None = None, resume: bool = False, overwrite: bool = False,
              on_row: Callable[[int, int, dict[str, Any]], None] | None = None) -> SweepReport:
    """Run every point of ``spec`` (skipping those already in ``out`` with ``resume``).

    ``on_row(done, todo, row)`` is called as each point finishes (progress bars). Rows are
    returned flat (settings and metrics as stored), in the spec's point order.

    Examples
    --------
    >>> from npuweave.experiments.sweep import sweep_from_dict
    >>> spec = sweep_from_dict({"kind": "profile", "axes": {"models": ["ncf", "alexnet"]}})
    >>> [r["status"] for r in run_sweep(spec).rows]
    ['ok', 'ok']
    """
    cols = columns(spec)
    store = check_output(spec, out, resume, overwrite)
    try:
        return _run(spec, cols, store, jobs, dask, resume, on_row)
    finally:
        if out is not None:
            unlock_store(out)


def _run(spec: SweepSpec, cols: list[Any], store: CsvStore | ParquetStore | None, jobs: int,
         dask: str | None, resume: bool,
         on_row: Callable[[int, int, dict[str, Any]], None] | None) -> SweepReport:
    existing = store.existing_ids() if store is not None and resume else set()
    todo = [p for p in spec.points if p.point_id not in existing]
    if store is not None:
        store.start(fresh=not resume)
    start = time.perf_counter()
    table = standalone_table(todo)
    kind = KINDS[spec.kind]
    rows: dict[int, dict[str, Any]] = {}
    pending: list[dict[str, Any]] = []
    last_flush, failed = time.monotonic(), 0
    try:
        for done, (i, row) in enumerate(executors.execute(todo, table, jobs, dask), 1):
            flat = flat_row(row, kind.normalize(todo[i].as_dict()), cols)
            rows[i] = flat
            pending.append(flat)
            failed += flat["status"] != "ok"
            if store is not None and (len(pending) >= FLUSH_ROWS
                                      or time.monotonic() - last_flush > FLUSH_S):
                store.write(pending)
                pending, last_flush = [], time.monotonic()
            if on_row is not None:
                on_row(done, len(todo), flat)
    finally:
        if store is not None and pending:
            store.write(pending)
    return SweepReport(len(spec.points), len(spec.points) - len(todo), len(rows), failed,
                       time.perf_counter() - start, tuple(rows[i] for i in sorted(rows)))
