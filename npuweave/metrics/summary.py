"""Named metrics over one run, so callers (CLI, reports, notebooks) can ask for them by name.

A metric here is a function ``(run, standalone, window) -> value`` where ``run`` has
``intervals`` and ``requests`` (a ``SimResult`` or anything shaped like one). ``summarize``
accepts registered names and such functions side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from npuweave.errors import unknown_name
from npuweave.metrics.common import Standalone, Window, resolve_window
from npuweave.metrics.index import IntervalIndex, as_index
from npuweave.metrics.latency import tail_latency
from npuweave.metrics.multitask import antt, fairness, stp, throughput
from npuweave.metrics.occupancy import makespan, makespan_ratio, utilization
from npuweave.metrics.request_index import as_requests

Metric = Callable[[Any, Standalone, Window], Any]


def _util(resource: str) -> Metric:
    def metric(run: Any, standalone: Standalone, window: Window) -> float:
        return utilization(run.intervals, resource, window, run.requests)

    metric.__name__ = f"{resource.lower()}_utilization"
    return metric


METRICS: dict[str, Metric] = {
    "stp": lambda run, sa, w: stp(run.requests, sa, w, run.intervals),
    "antt": lambda run, sa, w: antt(run.requests, sa, w),
    "fairness": lambda run, sa, w: fairness(run.requests, sa, window=w, intervals=run.intervals),
    "pe_utilization": _util("PE"),
    "dram_utilization": _util("DRAM"),
    "throughput": lambda run, sa, w: throughput(run.requests, w, intervals=run.intervals),
    "makespan_s": lambda run, sa, w: makespan(run.intervals),
    "makespan_ratio": lambda run, sa, w: makespan_ratio(run.intervals),
    "latency": lambda run, sa, w: tail_latency(run.requests),
}

#: What the ``schedule`` comparison table shows.
DEFAULT_METRICS = (
    "stp", "antt", "pe_utilization", "dram_utilization", "throughput", "makespan_ratio",
)


def metric_names() -> list[str]:
    """Names accepted by ``summarize``."""
    return list(METRICS)


def summarize(
    run: Any,
    standalone: Standalone,
    metrics: Sequence[str | Metric] = DEFAULT_METRICS,
    window: Window = "common",
) -> dict[str, Any]:
    """Evaluate metrics (registered names or functions) on one run.

    The window is resolved once so every metric measures the same stretch of time, and the
    intervals are indexed once (``IntervalIndex``) for all registered metrics; functions passed
    in ``metrics`` get ``run`` itself.

    Examples
    --------
    >>> summarize(result, {"resnet50": 2e-3, "bert-base": 4e-3}, ["stp", "antt"])  # doctest: +SKIP
    {'stp': 1.58, 'antt': 1.27}
    """
    # built once for every metric
    indexed = _Indexed(as_requests(run.requests), as_index(run.intervals))
    span = resolve_window(window, indexed.requests, indexed.intervals)
    out: dict[str, Any] = {}
    for m in metrics:
        if callable(m):
            out[getattr(m, "__name__", repr(m))] = m(run, standalone, span)
            continue
        if m not in METRICS:
            raise unknown_name("metric", m, list(METRICS))
        out[m] = METRICS[m](indexed, standalone, span)
    return out


@dataclass(frozen=True, slots=True)
class _Indexed:
    """A run whose intervals are indexed; what the registered metrics are handed."""

    requests: Any
    intervals: IntervalIndex
