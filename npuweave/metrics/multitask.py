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

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from npuweave.errors import ConfigError
from npuweave.metrics import core
from npuweave.metrics.common import (
    IntervalLike,
    RequestLike,
    Standalone,
    Window,
    resolve_window,
    standalone_of,
)
from npuweave.metrics.index import IntervalIndex, as_index
from npuweave.metrics.request_index import RequestIndex, as_requests, first_seen

Intervals = Iterable[IntervalLike] | IntervalIndex | None


def progress(
    requests: Iterable[RequestLike] | RequestIndex,
    t0: float,
    t1: float,
    intervals: Intervals = None,
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
    req = as_requests(requests)
    if not len(req):
        return 0.0
    index = as_index(intervals) if intervals is not None else None
    # Python's left-to-right ``sum``: bit for bit the sequential accumulation
    return sum(_shares(req, t0, t1, index).tolist())


def _shares(req: RequestIndex, t0: float, t1: float, index: IntervalIndex | None) -> np.ndarray:
    """Each request's share of its work inside ``[t0, t1]`` (see ``progress``), in record
    order; only requests straddling the window read their intervals."""
    if index is None:
        return _span_shares(req.start_s, req.finish_s, t0, t1)
    worked, lo, hi = index.reach_of(req.tenants, req.tenant, req.request)
    # a request whose busy spans all lie inside counts whole (its clipped sum / total is
    # exactly 1), one whose spans all lie outside counts 0 (every clipped term is 0); one
    # without busy time by its span
    known = worked & (lo <= hi)
    whole = known & (t0 <= lo) & (hi <= t1)
    out = known & ((hi <= t0) | (lo >= t1))
    share = (whole & ~out).astype(np.float64)  # outside wins where both hold (a point)
    idle = (~worked).nonzero()[0]  # 1-D: flatnonzero without its wrappers
    if idle.size:
        share[idle] = _span_shares(req.start_s[idle], req.finish_s[idle], t0, t1)
    names, tenant, request = req.tenants, req.tenant, req.request
    for j in (worked & ~whole & ~out).nonzero()[0].tolist():
        inside, total = index.work_split(names[tenant[j]], int(request[j]), t0, t1)
        share[j] = inside / total
    return share


def _span_shares(start: np.ndarray, finish: np.ndarray, t0: float, t1: float) -> np.ndarray:
    """The share of each ``[start, finish]`` inside ``[t0, t1]`` (a point span: 1 when it
    lies inside, else 0)."""
    span = finish - start
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(span <= 0, ((t0 <= finish) & (finish <= t1)).astype(np.float64),
                        np.maximum(0.0, np.minimum(finish, t1) - np.maximum(start, t0)) / span)


def _progress(req: RequestIndex, t0: float, t1: float,
              index: IntervalIndex | None) -> list[float]:
    """``progress`` of each tenant's requests (in finishing order), tenants in first-seen
    order; computed once per window and index for all the metrics that ask."""
    def make() -> list[float]:
        share = _shares(req, t0, t1, index)
        return [sum(share[req.rows(k)].tolist()) for k in range(len(req.tenants))]

    return req.memo(("progress", t0, t1, index), make)


def _first(req: RequestIndex, k: int) -> RequestLike:
    """Tenant ``k``'s first record in finishing order."""
    return req[int(req.rows(k)[0])]


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
    req = as_requests(requests)
    t0, t1 = resolve_window(window, req)
    index = as_index(intervals) if intervals is not None else None
    done = _progress(req, t0, t1, index)
    out = {}
    for k, tenant in enumerate(req.tenants):
        scale = _first(req, k).batch if unit == "inputs" else 1
        out[tenant] = done[k] * scale / (t1 - t0)
    return out


def stp_per_tenant(
    requests: Sequence[RequestLike],
    standalone: Standalone,
    window: Window = "common",
    intervals: Sequence[IntervalLike] | IntervalIndex | None = None,
) -> dict[str, float]:
    """Each tenant's term ``T_single / T_multi`` of the STP sum (its normalized progress)."""
    req = as_requests(requests)
    t0, t1 = resolve_window(window, req)
    single = standalone_of(standalone)
    index = as_index(intervals) if intervals is not None else None
    done = _progress(req, t0, t1, index)
    first = req.first_singles(single)
    return {tenant: done[k] * first[k] / (t1 - t0) for k, tenant in enumerate(req.tenants)}


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


def _ntts(req: RequestIndex, single: Standalone, rows: np.ndarray | slice) -> np.ndarray:
    """``ntt`` of the records at ``rows`` (``RequestIndex.singles`` looks up ``T_single``)."""
    latency = req.finish_s[rows] - req.arrival_s[rows]
    return core.ntt(latency, req.singles(standalone_of(single), rows))


def ntt_per_tenant(
    requests: Sequence[RequestLike], standalone: Standalone, window: Window = "common"
) -> dict[str, float]:
    """Mean NTT of each tenant's requests issued inside the window (see ``antt``)."""
    req = as_requests(requests)
    t0, t1 = resolve_window(window, req)
    inside = (t0 <= req.arrival_s) & (req.arrival_s < t1)
    single = standalone_of(standalone)  # one function: its lookups are kept per index
    # where every request of a tenant is the same work, every record's NTT at once (its
    # standalone time is its tenant's, looked up for each tenant anyway; each NTT is one
    # division, the same whichever records are divided together)
    every = _ntts(req, single, slice(None)) if req.uniform else None
    out = {}
    for k in first_seen(req.tenant[inside]):  # in the order of their first request inside
        rows = req.rows(k)
        rows = rows[inside[rows]]
        out[req.tenants[k]] = core.antt(_ntts(req, single, rows) if every is None
                                        else every[rows])
    return out


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
    req = as_requests(requests)
    t0, t1 = resolve_window(window, req)
    if by == "tenant":
        values = np.array(list(ntt_per_tenant(req, standalone, (t0, t1)).values()))
    elif by == "request":
        inside = (t0 <= req.arrival_s) & (req.arrival_s < t1)
        values = _ntts(req, standalone, np.flatnonzero(inside))
    else:
        raise ConfigError(f"by must be 'tenant' or 'request', got {by!r}")
    if not values.size:
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
