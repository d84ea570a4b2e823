"""Remaining standalone time of a request: the estimate Layerweaver+ compares with its slack.

Layerweaver+ (thesis V.2) asks, for a request that has run its first ``pos`` units, how long
its remaining units would take alone on the NPU. Two estimates:

* ``approx`` (the thesis's equation): ``sum over the remaining units of max(m_L, c_L)``, with
  ``m_L = L[size] / MemBW`` the unit's fetch time and ``c_L`` its compute time. It counts each
  unit as if its fetch and computation overlapped perfectly with themselves and not with their
  neighbours: it over-counts the overlap of one unit's fetch with the previous computation and
  misses the exposed first fetch of a cold start, so it bounds the replay below neither way.
  Kept as a suffix-sum table per (model, batch): one estimate is one lookup, O(1) per candidate.
* ``precise`` (the thesis's hypothetical exact variant, which the seed does not define):
  replay the remaining units alone, on an empty buffer, with the predictor's arithmetic
  (``Board.commit``, i.e. ScheduleMemFetch), and return the last compute end. It costs
  O(remaining units) per estimate.

Both depend on the model, batch and position only, not on the rest of the schedule.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from npuweave.errors import ConfigError
from npuweave.schedule.base import Tenant
from npuweave.schedule.board import Board
from npuweave.schedule.buffer import commit_in_place, in_flight
from npuweave.schedule.jit import kernel


class StandaloneMode(str, Enum):
    """How Layerweaver+ estimates a request's remaining standalone time."""

    APPROX = "approx"
    PRECISE = "precise"


def standalone_mode(name: str | StandaloneMode) -> StandaloneMode:
    """Parse ``approx`` / ``precise``; anything else is a ``ConfigError`` naming the option.

    Examples
    --------
    >>> standalone_mode("approx").value
    'approx'
    """
    try:
        return StandaloneMode(name)
    except ValueError:
        raise ConfigError(f"unknown standalone estimate {name!r} (option --standalone); "
                          "choose one of: approx, precise") from None


def approx_suffix(compute_s: Sequence[float], fetch_s: Sequence[float]) -> tuple[float, ...]:
    """Suffix sums of ``max(compute, fetch)``: entry ``i`` is the estimate after ``i`` units.

    The table has one entry more than there are units; the last is 0 (nothing left). It is
    accumulated from the last unit backwards.

    Examples
    --------
    >>> approx_suffix([2.0, 1.0, 4.0], [1.0, 3.0, 0.5])  # max: 2, 3, 4
    (9.0, 7.0, 4.0, 0.0)
    """
    if len(compute_s) != len(fetch_s):
        raise ValueError("compute_s and fetch_s must have one entry per unit")
    out = [0.0] * (len(compute_s) + 1)
    acc = 0.0
    for i in range(len(compute_s) - 1, -1, -1):
        c, f = compute_s[i], fetch_s[i]
        acc += c if c > f else f
        out[i] = acc
    return tuple(out)


def approx_table(tenant: Tenant, dram_bw: float) -> tuple[float, ...]:
    """``approx_suffix`` of a tenant's units on a DRAM of ``dram_bw`` bytes/s.

    Examples
    --------
    >>> t = Tenant("m", ("a", "b"), (2.0, 1.0), (10, 30))
    >>> approx_table(t, 10.0)    # max(2, 1) + max(1, 3)
    (5.0, 3.0, 0.0)
    """
    bw = float(dram_bw)
    return approx_suffix(tenant.compute_s, [s / bw for s in tenant.weight_bytes])


def replay_alone(tenant: Tenant, pos: int, buffer_bytes: int, dram_bw: float) -> float:
    """Precise estimate: units ``pos..`` of ``tenant`` alone from time 0 on an empty buffer.

    Uses the predictor (``Board``) with one request and no other tenant, committing the units
    in order; the result is the last compute end, which the engine reproduces exactly.

    Examples
    --------
    >>> t = Tenant("m", ("a", "b"), (2.0, 1.0), (10, 30))
    >>> replay_alone(t, 0, 100, 10.0)  # fetch a 0-1, b 1-4; compute a 1-3, b 4-5
    5.0
    >>> replay_alone(t, 1, 100, 10.0)  # fetch b 0-3, compute 3-4
    4.0
    """
    n = len(tenant.units)
    if not 0 <= pos <= n:
        raise ValueError(f"position {pos} outside 0..{n} for {tenant.label!r}")
    if pos == n:
        return 0.0
    rest = Tenant(tenant.label, tenant.units[pos:], tenant.compute_s[pos:],
                  tenant.weight_bytes[pos:], tenant.model, tenant.batch)
    board = Board((rest,), buffer_bytes, dram_bw)
    board.issue(0, 0, 0.0)
    t_c = 0.0
    while board.active:
        t_c = board.commit(0)[5]
    return t_c


class Estimator:
    """Remaining standalone time of a unit list from ``pos`` on, in one mode.

    The unit list is given as the per-unit compute seconds and weight bytes the predictor uses
    (``board.comp[t]``, ``board.size[t]``: a driver may swap them per batch size). ``approx``
    builds the suffix table once per list object (kept with the list, so a reused ``id`` can
    never return a stale table); ``precise`` replays the units every time.

    Examples
    --------
    >>> est = Estimator("approx", buffer_bytes=100, dram_bw=10.0)
    >>> comp, size = [2.0, 1.0], [10, 30]
    >>> est.remaining(comp, size, 1), est.calls
    (3.0, 1)
    """

    __slots__ = ("mode", "buf", "bw", "tables", "bounds", "calls")

    def __init__(self, mode: str | StandaloneMode, buffer_bytes: int, dram_bw: float) -> None:
        self.mode = standalone_mode(mode)
        self.buf, self.bw = int(buffer_bytes), float(dram_bw)
        self.tables: dict[int, tuple[Sequence[float], tuple[float, ...]]] = {}
        self.bounds: dict[int, tuple[Sequence[float], tuple[float, ...]]] = {}
        self.calls = 0  # estimates made, for the scheduler-cost report

    def remaining(self, comp: Sequence[float], size: Sequence[int], pos: int) -> float:
        """Estimated standalone seconds of units ``pos..`` (compute ``comp``, bytes ``size``)."""
        self.calls += 1
        if self.mode is StandaloneMode.APPROX:
            hit = self.tables.get(id(comp))
            if hit is None or hit[0] is not comp:
                hit = (comp, approx_suffix(comp, [b / self.bw for b in size]))
                self.tables[id(comp)] = hit
            return hit[1][pos]
        n = len(comp)
        rest = Tenant("rest", ("u",) * (n - pos), tuple(comp[pos:]), tuple(size[pos:]))
        return replay_alone(rest, 0, self.buf, self.bw)

    def serial_bound(self, comp: Sequence[float], size: Sequence[int], pos: int) -> float:
        """``sum(compute + fetch)`` of units ``pos..``: no estimate exceeds it (O(1)).

        The replay never does: once unit ``i - 1`` has computed, every earlier unit's weights
        are freed, so unit ``i``'s fetch ends by ``ce[i-1] + fetch[i]`` and its computation by
        ``ce[i-1] + fetch[i] + compute[i]``. The approximation is a sum of maxima of the same
        terms. A caller may skip an estimate when the slack is at least this bound: the
        request cannot be at risk then, whatever the estimate.
        """
        hit = self.bounds.get(id(comp))
        if hit is None or hit[0] is not comp:
            bw = self.bw
            hit = (comp, approx_suffix([c + b / bw for c, b in zip(comp, size)],
                                       [0.0] * len(comp)))
            self.bounds[id(comp)] = hit
        return hit[1][pos]


@kernel
def replay_table(size, comp, ftime, lo, n, buf, bw, out):
    """``out[lo + p]`` = ``replay_alone`` of units ``p..n-1`` (``out[lo + n]`` = 0)."""
    fl_s, fl_c, fl_f = in_flight(n + 1)
    out[lo + n] = 0.0
    for p in range(n):
        t_m = 0.0
        t_c = 0.0
        used = 0
        head = 0
        tail = 0
        for u in range(lo + p, lo + n):
            fe, t_c, head, tail, used = commit_in_place(
                u, t_m, t_c, buf - used, size, comp, ftime, fl_s, fl_c, fl_f, head, tail, used,
                bw)
            t_m = fe
        out[lo + p] = t_c
