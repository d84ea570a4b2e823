"""Shared timing helper for the benchmark scripts (run as ``python benchmarks/bench_*.py``)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeats: int, warmup: bool = False,
                   clock: Callable[[], float] = time.perf_counter) -> float:
    """Median time of ``repeats`` calls of ``fn`` (after one untimed call if ``warmup``) on
    ``clock``: wall time by default, ``time.process_time`` for this process's CPU time."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)
