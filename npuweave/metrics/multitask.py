"""System throughput (STP), normalized turnaround (NTT/ANTT), fairness, per-tenant throughput.

The definitions are PREMA's Equation 1 and 2 (after Eyerman and Eeckhout), for ``n`` tenants
with standalone time ``T_i^single`` and time under sharing ``T_i^multi``::

    NTT_i = T_i^multi / T_i^single      ANTT = mean NTT      STP = sum_i T_i^single / T_i^multi
    PP_i = (T_i^single / T_i^multi) / (priority_i / sum_j priority_j)
    fairness = min_ij PP_i / PP_j = min PP / max PP

For closed-loop streams (Layerweaver, thesis IV.5.B) a tenant runs many requests, so its
``T_i^multi`` is the mean time per request under sharing: the window length divided by the
number of requests it got through in the window. Then ``STP = sum_i n_i * T_i^single / W``,
which is the thesis's "queries weighted by their standalone latency, per second": a model
running alone scores 1 whatever its length, and two models that merely take turns score 1.
A request that straddles a window edge counts by the fraction of its work that lies inside:
the share of its busy time (PE and DRAM intervals) in the window when the intervals are given,
else the share of its ``[start, finish]`` span, so the window need not end on a finish. Pass
the intervals: a request that is started early and then starved would otherwise be credited
for time in which it did nothing.

ANTT averages per-request slowdowns ``latency / T_single`` of the requests issued inside the
window, first within each tenant and then over tenants (thesis IV.5.C: "for each model"); ``by="request"`` averages over all requests
instead, which is PREMA's per-task form when every tenant issues one request.

The formulas (NTT, ANTT, STP as a sum of normalized progress, fairness) are
``npuweave.metrics.core``'s; this module turns a window of records into their inputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from npuweave.errors import ConfigError
from npuweave.metrics import core
from npuweave.metrics.common import (
    IntervalLike,
    RequestLike,
    Standalone,
    Window,
    group_by_tenant,
    resolve_window,
    standalone_of,
)
from npuweave.metrics.index import IntervalIndex, as_index


def progress(
    requests: Iterable[RequestLike],
    t0: float,
    t1: float,
    intervals: Iterable[IntervalLike] | IntervalIndex | None = None,
) -> float:
    """Requests' worth of work done inside ``[t0, t1]``, counting partial requests pro rata.

    With ``intervals``, a request's share inside the window is the share of its busy time
    (PE and DRAM together) that lies inside: a request that waits most of its life and then
    runs fast is not credited for the waiting. Without them, progress is assumed uniform over
    ``[start_s, finish_s]``. ``intervals`` may be an ``IntervalIndex`` built once per run.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> progress([R(start_s=0.0, finish_s=2.0), R(start_s=2.0, finish_s=4.0)], 0.0, 3.0)
    1.5
    """
    rs = requests if isinstance(requests, Sequence) else list(requests)
    if not rs:
        return 0.0
    # per-request shares as arrays, then Python's left-to-right ``sum`` (bit for bit the
    # sequential accumulation); only requests straddling the window read their intervals
    start = np.array([r.start_s for r in rs], np.float64)
    finish = np.array([r.finish_s for r in rs], np.float64)
    span = finish - start
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(span <= 0, ((t0 <= finish) & (finish <= t1)).astype(np.float64),
                         np.maximum(0.0, np.minimum(finish, t1) - np.maximum(start, t0)) / span)
    if intervals is not None:
        index = as_index(intervals)
        keys = [(r.tenant, r.index) for r in rs]
        total = np.array([index.work_total(*k) for k in keys], np.float64)
        # a request whose busy spans all lie inside counts whole (its clipped sum / total is
        # exactly 1), one whose spans all lie outside counts 0 (every clipped term is 0); the
        # index keeps each request's reach (earliest start, latest end) once it is known
        reach = [index._reach.get(k, (math.inf, -math.inf)) for k in keys]
        lo, hi = np.array([a for a, _ in reach]), np.array([b for _, b in reach])
        known = (total > 0) & (lo <= hi)
        whole = known & (t0 <= lo) & (hi <= t1)
        out = known & ((hi <= t0) | (lo >= t1))
        share[whole] = 1.0
        share[out] = 0.0
        for j in np.flatnonzero((total > 0) & ~whole & ~out).tolist():
            tenant, request = keys[j]
            share[j] = index.work_inside(tenant, request, t0, t1) / total[j]
    return sum(share.tolist())


def throughput(
    requests: Sequence[RequestLike],
    window: Window = "common",
    unit: str = "requests",
    intervals: Sequence[IntervalLike] | IntervalIndex | None = None,
) -> dict[str, float]:
    """Per-tenant throughput in requests (or ``unit="inputs"``: requests x batch) per second.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> rs = [R(tenant="a", model="m", start_s=0.0, finish_s=1.0, arrival_s=0.0, batch=4)]
    >>> throughput(rs, unit="inputs")
    {'a': 4.0}
    """
    if unit not in ("requests", "inputs"):
        raise ConfigError(f"unit must be 'requests' or 'inputs', got {unit!r}")
    t0, t1 = resolve_window(window, requests)
    index = as_index(intervals) if intervals is not None else None
    out = {}
    for tenant, rs in group_by_tenant(requests).items():
        scale = rs[0].batch if unit == "inputs" else 1
        out[tenant] = progress(rs, t0, t1, index) * scale / (t1 - t0)
    return out


def stp_per_tenant(
    requests: Sequence[RequestLike],
    standalone: Standalone,
    window: Window = "common",
    intervals: Sequence[IntervalLike] | IntervalIndex | None = None,
) -> dict[str, float]:
    """Each tenant's term ``T_single / T_multi`` of the STP sum (its normalized progress)."""
    t0, t1 = resolve_window(window, requests)
    single = standalone_of(standalone)
    index = as_index(intervals) if intervals is not None else None
    return {
        tenant: progress(rs, t0, t1, index) * single(rs[0]) / (t1 - t0)
        for tenant, rs in group_by_tenant(requests).items()
    }


def stp(
    requests: Sequence[RequestLike],
    standalone: Standalone,
    window: Window = "common",
    intervals: Sequence[IntervalLike] | IntervalIndex | None = None,
) -> float:
    """System throughput, PREMA Eq. 1: ``sum_i T_i^single / T_i^multi`` (see module docstring).

    Examples
    --------
    Model A takes 5 ms alone and B 10 ms; sharing, A finishes 2 requests and B 1 in 20 ms:
    STP = 2 * 5/20 + 1 * 10/20 = 1.0.

    >>> from types import SimpleNamespace as R
    >>> rs = [R(tenant="A", model="A", arrival_s=0, start_s=s, finish_s=f, batch=1)
    ...       for s, f in ((0, 0.01), (0.01, 0.02))]
    >>> rs.append(R(tenant="B", model="B", arrival_s=0, start_s=0.0, finish_s=0.02, batch=1))
    >>> round(stp(rs, {"A": 0.005, "B": 0.010}), 9)
    1.0
    """
    return core.stp(list(stp_per_tenant(requests, standalone, window, intervals).values()))


def ntt(requests: Iterable[RequestLike], standalone: Standalone) -> list[float]:
    """Each request's normalized turnaround time ``(finish - arrival) / T_single``."""
    single = standalone_of(standalone)
    rs = list(requests)
    return core.ntt([r.finish_s - r.arrival_s for r in rs], [single(r) for r in rs]).tolist()


def ntt_per_tenant(
    requests: Sequence[RequestLike], standalone: Standalone, window: Window = "common"
) -> dict[str, float]:
    """Mean NTT of each tenant's requests issued inside the window (see ``antt``)."""
    t0, t1 = resolve_window(window, requests)
    inside = [r for r in requests if t0 <= r.arrival_s < t1]
    return {
        tenant: core.antt(ntt(rs, standalone))
        for tenant, rs in group_by_tenant(inside).items()
    }


def antt(
    requests: Sequence[RequestLike],
    standalone: Standalone,
    window: Window = "common",
    by: str = "tenant",
) -> float:
    """Average normalized turnaround time, PREMA Eq. 1 (lower is better, 1 = no slowdown).

    The requests counted are those issued inside the window, however late they finish: a
    request starved while the other stream ran keeps its whole latency, and requests issued
    after the window (a stream running alone) do not dilute the mean. ``by="tenant"``
    (default) averages each tenant's mean NTT; ``by="request"`` averages all NTTs. Examples: A's requests take 6 and 8 ms against 5 ms alone
    (NTT 1.2, 1.6 -> 1.4) and B's one takes 12 ms against 10 ms (1.2): ANTT = (1.4 + 1.2) / 2.
    """
    t0, t1 = resolve_window(window, requests)
    if by == "tenant":
        values = list(ntt_per_tenant(requests, standalone, (t0, t1)).values())
    elif by == "request":
        values = ntt([r for r in requests if t0 <= r.arrival_s < t1], standalone)
    else:
        raise ConfigError(f"by must be 'tenant' or 'request', got {by!r}")
    if not values:
        raise ConfigError("no request was issued inside the measurement window; run more requests")
    return core.antt(values)


def fairness(
    requests: Sequence[RequestLike],
    standalone: Standalone,
    priorities: Mapping[str, float] | None = None,
    window: Window = "common",
    tenants: Iterable[str] = (),
    intervals: Sequence[IntervalLike] | IntervalIndex | None = None,
) -> float:
    """PREMA Eq. 2: ``min_ij PP_i / PP_j`` with priority-normalized progress ``PP_i``.

    1 means every tenant progresses in proportion to its priority (equal by default); a
    tenant listed in ``tenants`` that finished nothing has ``PP = 0`` and makes fairness 0.
    """
    terms = stp_per_tenant(requests, standalone, window, intervals)
    for name in tenants:
        terms.setdefault(name, 0.0)
    if not terms:
        raise ConfigError("fairness needs at least one tenant")
    prio = {t: float((priorities or {}).get(t, 1.0)) for t in terms}
    if any(p <= 0 for p in prio.values()):
        raise ConfigError(f"priorities must be > 0, got {prio}")
    return core.fairness([terms[t] for t in terms], [prio[t] for t in terms])
