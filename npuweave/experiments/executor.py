"""Run independent tasks serially or on a local process pool, with identical results.

``run_map(fn, items, jobs)`` is ``[fn(x) for x in items]``: the results come back in the order
of ``items`` whatever the number of workers, so a pure ``fn`` gives the same list serially and
in parallel. ``on_result(item, result)`` is called once per finished task, in the parent
process (progress bars). ``fn`` and the items must pickle when ``jobs > 1`` (a module-level
function and plain data). Workers are forked where the platform allows it, so caches already
warm in the parent (cost profiles, zoo models) are shared for free.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, TypeVar

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


def run_map(fn: Callable[[T], R], items: Iterable[T], jobs: int = 1,
            on_result: Callable[[T, R], None] | None = None) -> list[R]:
    """``[fn(x) for x in items]`` on ``jobs`` processes, results in the order of ``items``.

    Examples
    --------
    >>> run_map(abs, [-2, 3, -5], jobs=1)
    [2, 3, 5]
    """
    todo: Sequence[T] = list(items)
    jobs = min(check_jobs(jobs), max(1, len(todo)))
    if jobs == 1:
        out = []
        for x in todo:
            res = fn(x)
            if on_result is not None:
                on_result(x, res)
            out.append(res)
        return out
    return _pool_map(fn, todo, jobs, on_result)


def _pool_map(fn: Callable[[T], R], todo: Sequence[T], jobs: int,
              on_result: Callable[[T, R], None] | None) -> list[R]:
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else methods[0])
    results: dict[int, R] = {}
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        pending: dict[Any, int] = {pool.submit(fn, x): i for i, x in enumerate(todo)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                results[i] = fut.result()
                if on_result is not None:
                    on_result(todo[i], results[i])
    return [results[i] for i in range(len(todo))]
