"""Shared plumbing for the metrics: the request record, the interval protocol, measurement
windows, standalone times.

Metrics depend on nothing else in npuweave. A request is a ``RequestRecord``, defined here,
in the lowest layer that reads it (``npuweave.sim`` re-exports it); an interval is anything
shaped like ``npuweave.sim.Interval`` (the protocol ``IntervalLike``). At run time the metrics
read attributes only (duck typing), so they work on hand-built records as well as on
simulator output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from npuweave.errors import ConfigError
from npuweave.metrics.index import IntervalIndex
from npuweave.metrics.request_index import RequestIndex


class IntervalLike(Protocol):
    resource: str
    tenant: str
    request: int
    start_s: float
    end_s: float


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request's life: issued at ``arrival_s``, first work at ``start_s``, done at ``finish_s``.

    ``deadline_s`` is absolute (None when the request has no deadline); ``batch`` is the number
    of inputs served by this request. The engine writes these (``npuweave.sim.records``
    re-exports the class); the metrics read them.
    """

    tenant: str
    model: str
    index: int
    arrival_s: float
    start_s: float
    finish_s: float
    batch: int = 1
    deadline_s: float | None = None

    @property
    def latency_s(self) -> float:
        return self.finish_s - self.arrival_s


#: A request as the metrics read it. Annotations name the engine's record; at run time any
#: object with its attributes works (hand-built records, ``RequestIndex`` rows).
RequestLike = RequestRecord


#: ``None`` (the whole run), ``(t0, t1)``, a function ``requests -> (t0, t1)`` (closed-loop
#: callers pass ``npuweave.sim.arrival_processes.ClosedLoop.common_window``), or ``"common"``.
Window = None | str | tuple[float, float] | Callable[[Sequence[Any]], tuple[float, float]]
#: Standalone seconds per request: a mapping keyed by tenant (or model) name, or a function.
Standalone = Mapping[str, float] | Callable[[Any], float]


def attribute_or_call(key: str | Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Turn an attribute name or a function into a function of one record."""
    if callable(key):
        return key
    if not isinstance(key, str):
        raise ConfigError(f"key must be an attribute name or a function, got {key!r}")

    def get(record: Any) -> Any:
        try:
            return getattr(record, key)
        except AttributeError:
            raise ConfigError(f"records have no attribute {key!r}") from None

    return get


def standalone_of(standalone: Standalone) -> Callable[[Any], float]:
    """Return ``record -> standalone seconds`` from a mapping (tenant, then model) or a function."""
    if callable(standalone):
        return standalone

    def lookup(record: Any) -> float:
        for name in (record.tenant, record.model):
            if name in standalone:
                value = float(standalone[name])
                if value <= 0:
                    raise ConfigError(f"standalone time of {name!r} must be > 0, got {value}")
                return value
        raise ConfigError(
            f"no standalone time for tenant {record.tenant!r} (model {record.model!r}); "
            f"known: {', '.join(sorted(standalone)) or 'none'}"
        )

    return lookup


def group_by_tenant(requests: Iterable[RequestLike]) -> dict[str, list[RequestLike]]:
    """Requests per tenant, each list in finishing order; tenants in first-seen order."""
    groups: dict[str, list[RequestLike]] = {}
    for r in requests:
        groups.setdefault(r.tenant, []).append(r)
    for rs in groups.values():
        rs.sort(key=lambda r: r.finish_s)
    return groups


def _last_end(window: Window, requests: Sequence[RequestLike],
              intervals: Sequence[IntervalLike] | IntervalIndex) -> float:
    if window == "common" and requests:
        return 0.0  # replaced by the common end; skip a pass over every interval
    finishes = (requests.finish_s.tolist() if isinstance(requests, RequestIndex)
                else [r.finish_s for r in requests])
    if isinstance(intervals, IntervalIndex):  # it knows its last end without a pass
        ends = [max(finishes)] if requests else []
        return max(ends + [intervals.max_end] if len(intervals) else ends, default=0.0)
    return max(finishes + [iv.end_s for iv in intervals], default=0.0)


def resolve_window(
    window: Window,
    requests: Sequence[RequestLike] = (),
    intervals: Sequence[IntervalLike] | IntervalIndex = (),
) -> tuple[float, float]:
    """Turn a window spec into ``(t0, t1)`` seconds.

    ``None`` spans the whole run: from 0 to the last request finish or interval end. A
    function is called with ``requests`` and returns the window: the closed loop defines its
    own (``ClosedLoop.common_window``, which ``experiments.compare`` passes). ``"common"`` is
    the records-only form kept for callers without the closed loop at hand: 0 to the earliest
    of the tenants' last finish times (metrics may not import ``schedule``).
    """
    if isinstance(window, tuple):
        t0, t1 = float(window[0]), float(window[1])
    elif callable(window):
        t0, t1 = (float(x) for x in window(requests))
    elif window is None or window == "common":
        t0, t1 = 0.0, _last_end(window, requests, intervals)
        if window == "common" and isinstance(requests, RequestIndex) and requests:
            t1 = min(float(requests.finish_s[requests.rows(k)[-1]])
                     for k in range(len(requests.tenants)))
        elif window == "common" and requests:
            t1 = min(rs[-1].finish_s for rs in group_by_tenant(requests).values())
    else:
        raise ConfigError(f"window must be None, 'common', (t0, t1) or a function of the "
                          f"requests, got {window!r}")
    if not t1 > t0:
        raise ConfigError(f"measurement window ({t0}, {t1}) is empty; run more requests")
    return t0, t1
