"""Run sweep points serially, on a local process pool, or on a Dask cluster.

Every executor calls the same pure function (``run_point``) with the same inputs, so the rows
are identical whichever runs them. Each yields ``(index, row)`` as points finish (in
completion order, not submission order) so results stream to disk; closing the generator
(Ctrl-C, an error) cancels the points not yet started.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from npuweave.errors import ConfigError, NpuweaveError
from npuweave.experiments.sweep.kinds import KINDS, StandaloneKey
from npuweave.experiments.sweep.spec import Point

Row = dict[str, Any]
_SHARED: dict[StandaloneKey, float] = {}


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
        row.update(kind.run(params, _SHARED if standalone is None else standalone))
    except NpuweaveError as exc:
        row.update(status="error", error=str(exc))
    except Exception as exc:  # a bug: keep the sweep going, keep the evidence
        last = traceback.extract_tb(exc.__traceback__)[-1]
        row.update(status="error",
                   error=f"{type(exc).__name__}: {exc} ({last.filename}:{last.lineno})")
    row["elapsed_s"] = time.perf_counter() - start
    return row


def _init_worker(table: Mapping[StandaloneKey, float]) -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _SHARED.clear()
    _SHARED.update(table)


def _run_shared(point: Point) -> Row:
    return run_point(point, None)


def serial(points: Sequence[Point], table: Mapping[StandaloneKey, float]) -> Iterator[
        tuple[int, Row]]:
    """Run in this process, in order."""
    for i, p in enumerate(points):
        yield i, run_point(p, table)


def pool(points: Sequence[Point], table: Mapping[StandaloneKey, float],
         jobs: int) -> Iterator[tuple[int, Row]]:
    """A local process pool of ``jobs`` workers (spawned: no fork of a threaded parent)."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    ctx = mp.get_context("spawn")
    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                             initargs=(dict(table),))
    try:
        # Keep a bounded window in flight so Ctrl-C loses little and memory stays flat.
        window, it, live = 4 * jobs, iter(enumerate(points)), {}
        for i, p in it:
            live[ex.submit(_run_shared, p)] = i
            if len(live) >= window:
                break
        while live:
            done, _ = wait(live, return_when=FIRST_COMPLETED)
            for fut in done:
                yield live.pop(fut), fut.result()
                nxt = next(it, None)
                if nxt is not None:
                    live[ex.submit(_run_shared, nxt[1])] = nxt[0]
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def dask(points: Sequence[Point], table: Mapping[StandaloneKey, float],
         address: str) -> Iterator[tuple[int, Row]]:
    """A Dask cluster: ``tcp://host:port`` of a running scheduler, or ``local:N``."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError("--dask needs Dask: pip install 'npuweave[dask]'") from None
    cluster = None
    if address.startswith("local:"):
        n = local_workers(address)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        try:
            client = Client(address, timeout="10s")
        except OSError as exc:
            raise ConfigError(f"--dask: cannot reach the Dask scheduler at {address!r} ({exc}); "
                              "start one with 'dask scheduler' or use local:N") from None
    try:
        shared = client.scatter(dict(table), broadcast=True)
        futs = {client.submit(run_point, p, shared, key=f"npuweave-{p.point_id}", pure=False): i
                for i, p in enumerate(points)}
        for fut in as_completed(futs):
            yield futs[fut], fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def local_workers(address: str) -> int:
    try:
        n = int(address.split(":", 1)[1])
    except ValueError:
        n = 0
    if not 1 <= n <= 256:
        raise ConfigError(f"--dask {address!r}: write local:N with N workers in 1..256")
    return n
