"""The one definition of each multi-tenant metric: NTT, ANTT, STP, fairness, SLA violation.

Every other metrics module calls these: ``serving`` (open-loop runs, one row per request in a
``RequestTable``), ``prema`` (PREMA's task sets) and ``multitask`` (closed-loop streams, where
a tenant's term is its normalized progress in a window). Each formula is written here once,
as an array expression, and evaluated in one fixed order (so two callers with the same inputs
get the same bits).

Definitions (``T_single``: the time alone on the NPU; ``T_multi``: the time under sharing)

* ``NTT_i = T_multi,i / T_single,i``: normalized turnaround time (Eyerman and Eeckhout, IEEE
  Micro 2008; PREMA, HPCA 2020, Eq. 1). For one request, latency over isolated time.
* ``ANTT = mean NTT`` (PREMA Eq. 1). Lower is better; 1 = no slowdown.
* STP, three statistics that differ in meaning, not in rounding:

  - ``stp``: the sum of each tenant's *normalized progress* ``T_single / T_multi``. Closed-loop
    streams (Layerweaver thesis IV.5.B) give a tenant's progress over the measurement window
    (``metrics.multitask``).
  - ``stp_task_set``: PREMA Eq. 1, one term ``1 / NTT_i`` per task; ``stp`` of ``1 / NTT``.
  - ``stp_open_loop``: standalone seconds of the served requests per second of the run
    (Layerweaver thesis IV.5 and V.3.A), for open-loop serving, where the task-set sum grows
    with the run's length.

* ``fairness``: PREMA Eq. 2. ``PP_i = progress_i / (prio_i / sum_j prio_j)`` and
  ``fairness = min PP / max PP`` (1: everyone progresses in proportion to its priority). The
  paper's printed sum index is garbled; the denominator sums over all tasks. Evaluated as
  printed: divide the priority by the sum, then the progress by that share.
* ``sla_violation``: PREMA section VI-C (Fig. 13): the fraction of requests whose NTT is not
  within ``m`` (latency above ``m x T_single``); an unfinished request (NTT NaN) violates.
* ``violation_rate``: the fraction of ``True`` in a mask, as ``count / n`` (one rounding);
  deadline violation is ``violation_rate(not (finish <= deadline))``.

SLA targets are a parameter: ``sla_mults("prema")`` is Fig. 13's ``m = 2..20`` and
``sla_mults("serve")`` the four points ``serve`` tabulates; any sequence of ``N > 0`` works.

Examples
--------
>>> n = ntt([2.0, 3.0], [1.0, 3.0])
>>> n.tolist(), antt(n), stp_task_set(n)
([2.0, 1.0], 1.5, 1.5)
>>> fairness(1.0 / n, [1.0, 1.0])
0.5
>>> sla_violation(n, [1.5]).tolist()
[0.5]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np

from npuweave.errors import ConfigError, unknown_name

Values = Sequence[float] | np.ndarray

#: SLA targets (multiples of the isolated time) by source: PREMA's Fig. 13 sweeps ``m = 2..20``;
#: ``serve`` tabulates four points of that range (its columns ``sla_violation_x<m>``).
SLA_DEFAULTS: Mapping[str, tuple[float, ...]] = MappingProxyType({
    "prema": tuple(float(m) for m in range(2, 21)),
    "serve": (2.0, 5.0, 10.0, 20.0),
})


def sla_mults(which: str | Sequence[float]) -> tuple[float, ...]:
    """The SLA multipliers of a named default (``"prema"``, ``"serve"``) or a given list,
    checked: every ``N`` finite and > 0.

    Examples
    --------
    >>> sla_mults("serve")
    (2.0, 5.0, 10.0, 20.0)
    >>> sla_mults([3, 4])
    (3.0, 4.0)
    """
    if isinstance(which, str):
        if which not in SLA_DEFAULTS:
            raise unknown_name("SLA multiplier set", which, list(SLA_DEFAULTS))
        return SLA_DEFAULTS[which]
    try:
        mults = tuple(float(m) for m in which)
    except (TypeError, ValueError):
        raise ConfigError(f"sla_mults {which!r}; give numbers N > 0") from None
    if any(not (np.isfinite(m) and m > 0) for m in mults):
        raise ConfigError(f"sla_mults {tuple(which)}; every N must be > 0")
    return mults


def ntt(latency: Values, isolated: Values) -> np.ndarray:
    """Normalized turnaround time of each request: ``latency / isolated`` (NaN stays NaN)."""
    return np.asarray(latency, dtype=float) / np.asarray(isolated, dtype=float)


def antt(ntts: Values) -> float:
    """Mean NTT (PREMA Eq. 1); NaN for no values (callers report None)."""
    a = np.asarray(ntts, dtype=float)
    return float(antt_rows(a)) if a.size else float("nan")


def antt_rows(ntts: np.ndarray) -> np.ndarray:
    """``antt`` of each row of a 2-D array (one group of requests per row, none empty)."""
    a = np.asarray(ntts, dtype=float)
    # ``mean`` without its Python wrapper: the same pairwise sum, divided by the count
    return np.add.reduce(a, axis=-1) / a.shape[-1]


def stp(progress: Values) -> float:
    """System throughput as the sum of normalized progress ``T_single / T_multi``."""
    return float(stp_rows(np.asarray(progress, dtype=float)))


def stp_rows(progress: np.ndarray) -> np.ndarray:
    """``stp`` of each row of a 2-D array (one group per row)."""
    return np.add.reduce(np.asarray(progress, dtype=float), axis=-1)  # np.sum's own reduce


def stp_task_set(ntts: Values) -> float:
    """PREMA Eq. 1: ``sum_i 1 / NTT_i``, one term per task."""
    return float(stp_task_set_rows(np.asarray(ntts, dtype=float)))


def stp_task_set_rows(ntts: np.ndarray) -> np.ndarray:
    """``stp_task_set`` of each row of a 2-D array (one group per row)."""
    return stp_rows(1.0 / np.asarray(ntts, dtype=float))


def stp_open_loop(isolated: Values, span_s: float) -> float:
    """Standalone seconds of the served requests per second of the run (thesis IV.5, V.3.A)."""
    return float(stp_open_loop_rows(np.asarray(isolated, dtype=float), span_s))


def stp_open_loop_rows(isolated: np.ndarray, span_s: float) -> np.ndarray:
    """``stp_open_loop`` of each row of a 2-D array (one group per row)."""
    return np.sum(np.asarray(isolated, dtype=float), axis=-1) / span_s


def fairness(progress: Values, priorities: Values) -> float:
    """PREMA Eq. 2: ``min PP / max PP``, ``PP_i = progress_i / (prio_i / sum_j prio_j)``.

    ``progress`` is ``1 / NTT`` per task, or a closed-loop tenant's normalized progress. No
    progress at all (every PP 0) is fairness 0.

    Examples
    --------
    >>> round(fairness([1.0, 1 / 9], [9.0, 1.0]), 12)  # the high one 9x faster: perfectly fair
    1.0
    """
    return float(fairness_rows(np.asarray(progress, dtype=float),
                               np.asarray(priorities, dtype=float)))


def fairness_rows(progress: np.ndarray, priorities: np.ndarray) -> np.ndarray:
    """``fairness`` of each row of 2-D arrays (one group of tasks per row, none empty)."""
    x = np.asarray(progress, dtype=float)
    p = np.asarray(priorities, dtype=float)
    # the ufuncs' own reductions (``sum``, ``max``, ``min`` without their Python wrappers)
    pp = x / (p / np.add.reduce(p, axis=-1, keepdims=True))
    top = np.maximum.reduce(pp, axis=-1)
    low = np.minimum.reduce(pp, axis=-1)
    idle = top == 0
    return np.where(idle, 0.0, low / np.where(idle, 1.0, top))


def violation_rate(violated: np.ndarray) -> float:
    """The fraction of ``True`` in a boolean mask, ``count / n``; NaN when empty."""
    return float(violation_rate_rows(violated)) if violated.size else float("nan")


def violation_rate_rows(violated: np.ndarray) -> np.ndarray:
    """``violation_rate`` of each row of a 2-D boolean array (one group per row, none empty)."""
    return np.asarray(violated).mean(axis=-1)


def sla_violation(ntts: Values, mults: Sequence[float]) -> np.ndarray:
    """For each ``m``: the fraction of requests with ``NTT`` not within ``m`` (NaN violates).

    The requests are the last axis: a 2-D ``ntts`` (one group per row) gives one row of rates
    per group.

    Examples
    --------
    >>> sla_violation([1.5, 2.5, float("nan")], [2.0, 4.0]).tolist()
    [0.6666666666666666, 0.3333333333333333]
    """
    n = np.asarray(ntts, dtype=float)
    m = np.asarray(mults, dtype=float)
    if not n.shape[-1]:
        return np.full(n.shape[:-1] + (m.size,), np.nan)
    return violation_rate_rows(~(n[..., None, :] <= m[:, None]))
