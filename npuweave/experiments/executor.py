"""Run independent tasks serially, on a local process pool or on a Dask cluster, with
identical results.

``run_iter(fn, items, jobs, dask)`` yields ``(index, fn(items[index]))`` as tasks finish
(completion order); ``run_map`` collects them in the order of ``items``, so a pure ``fn`` gives
the same list whichever runs it. ``fn`` and the items must pickle when they leave this process
(a module-level function or a ``functools.partial`` of one, and plain data). Pool workers are
forked where the platform allows it, so caches already warm in the parent (cost profiles, zoo
models, standalone times) are shared for free. A bounded window of tasks is in flight, so
closing the iterator early (Ctrl-C, an error) cancels the rest and loses only those. Items
travel in chunks that shrink as the work runs out (``chunk_sizes``), so a cheap point does
not pay a task's overhead (pickling, a round trip) on its own, and the last tasks are short, so
no worker idles long at the end.

Dask: ``dask="local:N"`` starts a ``LocalCluster`` of N single-threaded worker processes for
the call; ``dask="tcp://host:8786"`` uses a running scheduler. Dask is the optional ``dask``
extra.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import TypeVar

from npuweave.errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")


def check_jobs(jobs: object) -> int:
    """Validate a worker count: an integer >= 1 (``0`` means one per CPU).

    Examples
    --------
    >>> check_jobs(2)
    2
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise ConfigError(f"jobs (--jobs) must be an integer >= 1 (0: one per CPU), got {jobs!r}")
    return jobs or (os.cpu_count() or 1)


def check_dask(address: str | None) -> None:
    """Validate ``--dask`` before work starts: ``local:N`` (1..256) or ``tcp://host:port``,
    and Dask installed."""
    if address is None:
        return
    if address.startswith("local:"):
        local_workers(address)
    elif not re.fullmatch(r"(tcp|tls|ucx)://[A-Za-z0-9._\-\[\]:]+:\d{1,5}|inproc://\S+",
                          address[:300]):
        raise ConfigError(f"--dask {address[:80]!r}: give a scheduler address with its port "
                          "(tcp://host:8786) or "
                          "local:N to start N local workers")
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise ConfigError("--dask needs Dask: pip install 'npuweave[dask]'") from None


def local_workers(address: str) -> int:
    """N of ``local:N``."""
    try:
        n = int(address.split(":", 1)[1])
    except ValueError:
        n = 0
    if not 1 <= n <= 256:
        raise ConfigError(f"--dask {address!r}: write local:N with N workers in 1..256")
    return n


def run_iter(fn: Callable[[T], R], items: Iterable[T], jobs: int = 1,
             dask: str | None = None) -> Iterator[tuple[int, R]]:
    """``(i, fn(items[i]))`` for every item, as the tasks finish.

    Examples
    --------
    >>> sorted(run_iter(abs, [-2, 3]))
    [(0, 2), (1, 3)]
    """
    todo: Sequence[T] = list(items)
    if dask is not None:
        yield from _dask_iter(fn, todo, dask)
        return
    jobs = min(check_jobs(jobs), max(1, len(todo)))
    if jobs == 1:
        for i, x in enumerate(todo):
            yield i, fn(x)
        return
    yield from _pool_iter(fn, todo, jobs)


def run_map(fn: Callable[[T], R], items: Iterable[T], jobs: int = 1,
            on_result: Callable[[T, R], None] | None = None,
            dask: str | None = None) -> list[R]:
    """``[fn(x) for x in items]`` on ``jobs`` processes (or Dask), in the order of ``items``.

    ``on_result(item, result)`` is called once per finished task, in this process.

    Examples
    --------
    >>> run_map(abs, [-2, 3, -5], jobs=1)
    [2, 3, 5]
    """
    todo: Sequence[T] = list(items)
    results: dict[int, R] = {}
    for i, res in run_iter(fn, todo, jobs, dask):
        results[i] = res
        if on_result is not None:
            on_result(todo[i], res)
    return [results[i] for i in range(len(todo))]


def chunk_sizes(items: int, workers: int) -> list[int]:
    """Items per task, in the order the tasks are sent: about eight tasks per worker (1 to 64
    items each; one item each below 16 per worker, where items are likely expensive), and towards
    the end no more than ``1 / (2 x workers)`` of what is left, so the last tasks are short
    and the workers finish close together.

    Examples
    --------
    >>> chunk_sizes(200, 2)  # 13 tasks of 12, then 44 items left: 11, 9, 6, 5, ...
    [12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 11, 9, 6, 5, 4, 3, 2, 1, 1, 1, 1]
    >>> chunk_sizes(5, 2), chunk_sizes(0, 2)
    ([1, 1, 1, 1, 1], [])
    """
    workers = max(1, workers)
    most = max(1, min(64, items // (8 * workers)))
    sizes: list[int] = []
    left = items
    while left > 0:
        sizes.append(min(most, -(-left // (2 * workers))))
        left -= sizes[-1]
    return sizes


def _chunks(todo: Sequence[T], workers: int) -> Iterator[tuple[int, Sequence[T]]]:
    lo = 0
    for size in chunk_sizes(len(todo), workers):
        yield lo, todo[lo:lo + size]
        lo += size


def _run_chunk(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    return [fn(x) for x in items]


def _pool_iter(fn: Callable[[T], R], todo: Sequence[T], jobs: int) -> Iterator[tuple[int, R]]:
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else methods[0])
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_signals)
    restore = _exit_on_sigterm()
    try:
        it = _chunks(todo, jobs)
        live: dict[Future[list[R]], int] = {}
        for lo, part in it:  # a bounded window: Ctrl-C loses little, memory stays flat
            live[pool.submit(_run_chunk, fn, part)] = lo
            if len(live) >= 4 * jobs:
                break
        while live:
            done, _ = wait(live, return_when=FIRST_COMPLETED)
            for fut in done:
                lo = live.pop(fut)
                for j, res in enumerate(fut.result()):
                    yield lo + j, res
                nxt = next(it, None)
                if nxt is not None:
                    live[pool.submit(_run_chunk, fn, nxt[1])] = nxt[0]
    except BaseException:
        # SIGTERM, Ctrl-C or an error: end the workers now (one may be blocked on the call
        # queue's lock, so a polite shutdown could wait forever), then let the caller's
        # ``finally`` blocks flush what finished
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        restore()


def _worker_signals() -> None:
    """Pool workers die on SIGTERM (a forked worker would inherit the parent's handler, whose
    SystemExit the pool catches as the task's result)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _exit_on_sigterm() -> Callable[[], None]:
    """Turn SIGTERM into ``SystemExit(143)`` while a pool runs, so ``finally`` blocks (the
    workers' end, the store's last rows) run instead of the process vanishing; returns the
    function that puts the previous handler back."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    prev = signal.getsignal(signal.SIGTERM)
    if prev is signal.SIG_IGN:
        return lambda: None

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is on_term:
            signal.signal(signal.SIGTERM, prev)
    return restore


def _dask_iter(fn: Callable[[T], R], todo: Sequence[T], address: str) -> Iterator[
        tuple[int, R]]:
    check_dask(address)
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if address.startswith("local:"):
        cluster = LocalCluster(n_workers=local_workers(address), threads_per_worker=1,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        try:
            client = Client(address, timeout="10s")
        except OSError as exc:
            raise ConfigError(f"--dask: cannot reach the Dask scheduler at {address!r} ({exc}); "
                              "start one with 'dask scheduler' or use local:N") from None
    try:
        workers = len(client.scheduler_info().get("workers", {})) or 1
        futs = {client.submit(_run_chunk, fn, part, pure=False): lo
                for lo, part in _chunks(todo, workers)}
        for fut in as_completed(futs):
            for j, res in enumerate(fut.result()):
                yield futs[fut] + j, res
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def describe(jobs: int, dask: str | None) -> str:
    """``"Dask local:2"`` or ``"2 process(es)"`` for headers."""
    return f"Dask {dask}" if dask else f"{check_jobs(jobs)} process(es)"


__all__ = ["check_dask", "check_jobs", "chunk_sizes", "describe", "local_workers", "run_iter", "run_map"]
