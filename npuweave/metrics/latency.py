"""Request latency: percentiles (tail latency) and SLA violation rate.

Percentiles interpolate linearly between order statistics (numpy's default): the p-th
percentile of n sorted values sits at rank ``p/100 * (n - 1)``. The SLA follows PREMA
section VI: a request violates its SLA when its latency exceeds ``N x`` its isolated time,
or, with no ``N`` given, when it finishes after its own absolute deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from npuweave.errors import ConfigError
from npuweave.metrics import core
from npuweave.metrics.common import (
    RequestLike,
    Standalone,
    attribute_or_call,
    group_by_tenant,
    standalone_of,
)


def percentile(
    requests: Iterable[Any], q: float, key: str | Callable[[Any], float] = "latency_s"
) -> float:
    """The ``q``-th percentile (0..100) of ``key`` (an attribute name or a function) over records.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> percentile([R(latency_s=v) for v in (1.0, 2.0, 3.0, 4.0, 5.0)], 95)
    4.8
    """
    if not 0 <= q <= 100:
        raise ConfigError(f"percentile q must be within [0, 100], got {q}")
    get = attribute_or_call(key)
    values = [float(get(r)) for r in requests]
    if not values:
        raise ConfigError("percentile of no requests; run at least one request")
    return float(np.percentile(values, q))


def tail_latency(
    requests: Sequence[Any],
    qs: Sequence[float] = (50, 95, 99),
    key: str | Callable[[Any], float] = "latency_s",
    per_tenant: bool = False,
) -> dict[str, Any]:
    """``{"p50": ..., "p95": ..., "p99": ...}``, or one such dict per tenant."""
    if per_tenant:
        return {
            t: tail_latency(rs, qs, key) for t, rs in group_by_tenant(requests).items()
        }
    return {f"p{q:g}": percentile(requests, q, key) for q in qs}


def sla_violation_rate(
    requests: Sequence[RequestLike],
    slack: float | None = None,
    standalone: Standalone | None = None,
) -> float:
    """Fraction of requests that miss their SLA.

    With ``slack=N`` and ``standalone`` times, the target is ``N x T_single`` of latency
    (PREMA sweeps N from 2 to 20). Without ``slack`` each request's ``deadline_s`` is used
    and requests without a deadline are left out.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> rs = [R(tenant="a", model="a", arrival_s=0.0, finish_s=f, deadline_s=None) for f in (1, 3)]
    >>> sla_violation_rate(rs, slack=2, standalone={"a": 1.0})
    0.5
    """
    if slack is not None:
        if standalone is None or slack <= 0:
            raise ConfigError("slack needs standalone times and must be > 0")
        single = standalone_of(standalone)
        rs = list(requests)
        ntts = core.ntt([r.finish_s - r.arrival_s for r in rs], [single(r) for r in rs])
        if not rs:
            raise ConfigError("no request has an SLA target; give slack= or set deadlines")
        return float(core.sla_violation(ntts, [slack])[0])
    pairs = [(r.finish_s, d) for r in requests if (d := getattr(r, "deadline_s", None)) is not None]
    if not pairs:
        raise ConfigError("no request has an SLA target; give slack= or set deadlines")
    finish, deadline = np.array(pairs, dtype=float).T
    return core.violation_rate(~(finish <= deadline))
