"""Resource utilization: busy time over a window, with overlapping intervals merged.

A resource is busy at time t if any interval on it covers t; two overlapping intervals (a
DMA fetch in parts, or several tenants' records on one lane) count once. Utilization is busy
time divided by the window length (the makespan by default), so it always lies in [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from npuweave.errors import ConfigError

from .common import IntervalLike, RequestLike, Window, resolve_window

Resource = str | Callable[[Any], bool]


def _select(intervals: Iterable[IntervalLike], resource: Resource) -> list[IntervalLike]:
    if callable(resource):
        return [iv for iv in intervals if resource(iv)]
    if not isinstance(resource, str):
        raise ConfigError(f"resource must be a name such as 'PE' or a predicate, got {resource!r}")
    return [iv for iv in intervals if iv.resource == resource]


def merge_intervals(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of ``(start, end)`` spans as sorted, disjoint spans.

    Examples
    --------
    >>> merge_intervals([(0, 2), (1, 3), (5, 6), (6, 7)])
    [(0, 3), (5, 7)]
    """
    merged: list[list[float]] = []
    for start, end in sorted(spans):
        if end < start:
            raise ConfigError(f"interval ({start}, {end}) ends before it starts")
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def busy_time(
    intervals: Iterable[IntervalLike],
    resource: Resource = "PE",
    window: tuple[float, float] | None = None,
) -> float:
    """Seconds during which ``resource`` (a name or a predicate on intervals) is busy.

    Examples
    --------
    >>> from types import SimpleNamespace as I
    >>> ivs = [I(resource="PE", start_s=0.0, end_s=2.0), I(resource="PE", start_s=1.0, end_s=3.0)]
    >>> busy_time(ivs, "PE")
    3.0
    """
    spans = [(iv.start_s, iv.end_s) for iv in _select(intervals, resource)]
    lo, hi = window if window is not None else (float("-inf"), float("inf"))
    return float(sum(max(0.0, min(b, hi) - max(a, lo)) for a, b in merge_intervals(spans)))


def utilization(
    intervals: Sequence[IntervalLike],
    resource: Resource = "PE",
    window: Window = None,
    requests: Sequence[RequestLike] = (),
) -> float:
    """Busy time of ``resource`` divided by the window length (default: 0 to the makespan).

    ``window="common"`` needs ``requests`` (it ends when the first tenant runs out of them).

    Examples
    --------
    >>> from types import SimpleNamespace as I
    >>> ivs = [I(resource="PE", start_s=0.0, end_s=1.0), I(resource="DRAM", start_s=0.0, end_s=4.0)]
    >>> utilization(ivs, "PE")
    0.25
    """
    t0, t1 = resolve_window(window, requests, intervals)
    return busy_time(intervals, resource, (t0, t1)) / (t1 - t0)


def makespan(intervals: Iterable[IntervalLike]) -> float:
    """End of the last interval (runs start at time 0)."""
    return max((iv.end_s for iv in intervals), default=0.0)


def lower_bound(intervals: Sequence[IntervalLike]) -> float:
    """No schedule of this work ends before ``max(total PE time, total DRAM time)``."""
    return max(busy_time(intervals, "PE"), busy_time(intervals, "DRAM"))


def makespan_ratio(intervals: Sequence[IntervalLike]) -> float:
    """Makespan over its lower bound (1.0 = both resources never wait on each other)."""
    bound = lower_bound(intervals)
    if bound <= 0:
        raise ConfigError("no PE or DRAM work in these intervals; nothing to compare against")
    return makespan(intervals) / bound
