"""Run sweep points: ``run_point`` (one point, errors become rows) and ``execute`` (all of
them, serially, on a process pool or on Dask, through ``npuweave.experiments.executor``).

Every executor calls the same pure function with the same inputs, so the rows are identical
whichever runs them. ``execute`` yields ``(index, row)`` as points finish (completion order)
so results stream to disk; closing it (Ctrl-C, an error) cancels the points not yet started.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from npuweave.errors import NpuweaveError
from npuweave.experiments.sweep.kinds import KINDS, StandaloneKey
from npuweave.experiments.sweep.spec import Point

Row = dict[str, Any]


def run_point(point: Point, standalone: Mapping[StandaloneKey, float] | None = None) -> Row:
    """Run one point; a user error or a crash becomes a row with ``status='error'``.

    Examples
    --------
    >>> from npuweave.experiments.sweep.spec import sweep_from_dict
    >>> spec = sweep_from_dict({"kind": "profile", "fixed": {"models": "ncf"}})
    >>> run_point(spec.points[0])["status"]
    'ok'
    """
    kind = KINDS[point.kind]
    params = kind.normalize(point.as_dict())
    row: Row = {"point_id": point.point_id, "status": "ok", "error": None}
    start = time.perf_counter()
    try:
        row.update(kind.run(params, standalone or {}))
    except NpuweaveError as exc:
        row.update(status="error", error=str(exc))
    except Exception as exc:  # a bug: keep the sweep going, keep the evidence
        last = traceback.extract_tb(exc.__traceback__)[-1]
        row.update(status="error",
                   error=f"{type(exc).__name__}: {exc} ({last.filename}:{last.lineno})")
    row["elapsed_s"] = time.perf_counter() - start
    return row


def execute(points: Sequence[Point], table: Mapping[StandaloneKey, float], jobs: int = 1,
            dask: str | None = None) -> Iterator[tuple[int, Row]]:
    """``(index, row)`` of every point as it finishes, on the package's one executor
    (``npuweave.experiments.executor``). The standalone table travels with each task
    (it is small: one float per model, NPU, batch and cost model)."""
    from functools import partial

    from npuweave.experiments.executor import run_iter

    yield from run_iter(partial(run_point, standalone=dict(table)), points, jobs, dask)
