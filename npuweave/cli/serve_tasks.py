"""``serve`` helpers for task sets (trace rows with ``layer_latencies_s``) and per-request output.

Checked before any work: ``--preempt-at``, the ``--per-request`` suffix, and the options a task
set makes meaningless (it names its own models, priorities and deadlines).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError

PREEMPT_AT = ("layer",)
PER_REQUEST = (".csv", ".parquet")


def check_task_options(preempt_at: str, per_request: str | None) -> None:
    """Refuse a preemption granularity or a per-request file type serve does not have."""
    if preempt_at not in PREEMPT_AT:
        raise ConfigError(f"--preempt-at {preempt_at!r}: serve preempts at the engine's units "
                          "(layers, or weight tiles of large layers); use --preempt-at layer "
                          "('npuweave reproduce prema' models GEMM-tile points)")
    if per_request is not None and Path(per_request).suffix.lower() not in PER_REQUEST:
        raise ConfigError(f"--per-request {per_request}: name a .csv or .parquet file")


def task_set(arrival_spec: str, models: str | None, qps: str | None, deadline: str | None,
             priority: str | None, batching: str) -> Any:
    """The task set of ``--arrivals trace:FILE`` when its rows carry ``layer_latencies_s``,
    else None (a plain trace of zoo models)."""
    if not arrival_spec.startswith("trace:"):
        return None
    from npuweave.sim.tasksets import read_task_set

    ts = read_task_set(arrival_spec[len("trace:"):])
    if ts is None:
        return None
    given = [f for f, v in (("--models", models), ("--qps", qps), ("--deadline", deadline),
                            ("--priority", priority)) if v]
    if batching != "none":
        given.append("--batching")
    if given:
        raise ConfigError(f"{', '.join(given)}: the task set {arrival_spec[6:]} gives every "
                          "request's layers, priority and deadline; leave these options out")
    return ts


def write_per_request(path: str, records: Sequence[dict[str, Any]]) -> None:
    """One row per request as CSV or Parquet (``--per-request``). Records kept as columns
    (``npuweave.metrics.records``) are written from their columns, the CSV a chunk at a time;
    records whose ids are containers are flattened as rows."""
    from npuweave import fileio, report
    from npuweave.metrics.records import RowSource

    parquet = Path(path).suffix.lower() == ".parquet"
    if not (len(records) and isinstance(records, RowSource) and records.flat()):
        (report.write_parquet if parquet else report.write_csv)(path, list(records))
    elif parquet:
        fileio.write_parquet(path, records)
    else:
        fileio.write_csv(path, records, records.fields)
