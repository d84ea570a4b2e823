"""PREMA's task-set metrics (section III, Eq. 1-2; section VI-C) from plain arrays.

A PREMA run is a finite set of tasks, each with a dispatch time, a finish time, a *cold*
isolated time (the task alone on an idle NPU) and a priority value. Everything here is an
array expression over those (each formula is ``npuweave.metrics.core``'s; this module checks
the inputs of a task set and keeps PREMA's names):

* ``NTT_i = (finish_i - dispatch_i) / T_isolated,i``; ``ANTT = mean(NTT)``;
  ``STP = sum(1 / NTT_i)`` (Eq. 1).
* ``PP_i = (1 / NTT_i) / (prio_i / sum_j prio_j)``; ``fairness = min PP / max PP`` (Eq. 2,
  whose printed sum index is garbled: the denominator sums over all tasks).
* SLA violation at ``m x T_isolated`` for ``m = 2..20`` (Fig. 13): fraction of tasks whose
  latency exceeds it.
* Tail (Fig. 14): the 95th percentile of the high-priority tasks' NTT, per model.

Examples
--------
>>> import numpy as np
>>> n = ntt([0.0, 1.0], [2.0, 3.0], [1.0, 2.0])  # NTT 2 and 1
>>> antt(n), stp(n), fairness(n, [1.0, 1.0])
(1.5, 1.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from npuweave.errors import ConfigError
from npuweave.metrics import core

SLA_MULTS: tuple[float, ...] = core.sla_mults("prema")
"""SLA targets of Fig. 13, in multiples of the isolated time (``m = 2..20``)."""


def _arr(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim != 1 or a.size == 0:
        raise ConfigError(f"{what}: need a non-empty list of numbers, got shape {a.shape}")
    return a


Values = Sequence[float] | np.ndarray


def ntt(dispatch: Values, finish: Values, isolated: Values) -> np.ndarray:
    """Each task's normalized turnaround time (latency over cold isolated time)."""
    d, f, t = _arr(dispatch, "dispatch"), _arr(finish, "finish"), _arr(isolated, "isolated")
    if not d.size == f.size == t.size:
        raise ConfigError(f"dispatch, finish and isolated differ in length: "
                          f"{d.size}, {f.size}, {t.size}")
    if np.any(t <= 0):
        raise ConfigError("isolated times must be > 0 s")
    if np.any(f < d):
        raise ConfigError("a task finishes before it is dispatched")
    return core.ntt(f - d, t)


def antt(ntts: Sequence[float] | np.ndarray) -> float:
    """Eq. 1: the arithmetic mean of NTT (1 = no slowdown; lower is better)."""
    return core.antt(_arr(ntts, "NTT"))


def stp(ntts: Sequence[float] | np.ndarray) -> float:
    """Eq. 1: ``sum(1 / NTT)`` (n = every task at full speed; higher is better)."""
    return core.stp_task_set(_arr(ntts, "NTT"))


def fairness(ntts: Values, priorities: Values) -> float:
    """Eq. 2: ``min PP / max PP`` with ``PP_i = (1/NTT_i) / (prio_i / sum prio)``.

    Examples
    --------
    >>> round(fairness([1.0, 9.0], [9.0, 1.0]), 12)  # the high one 9x faster: perfectly fair
    1.0
    """
    n, p = _arr(ntts, "NTT"), _arr(priorities, "priorities")
    if n.size != p.size:
        raise ConfigError(f"NTT and priorities differ in length: {n.size}, {p.size}")
    if np.any(p <= 0):
        raise ConfigError("priorities must be > 0")
    return core.fairness(1.0 / n, p)


def sla_violation(ntts: Sequence[float] | np.ndarray, mults: Sequence[float] = SLA_MULTS
                  ) -> np.ndarray:
    """Fraction of tasks with latency above ``m x T_isolated``, for each ``m`` (Fig. 13).

    Examples
    --------
    >>> sla_violation([1.5, 2.5, 5.0], [2, 4]).tolist()
    [0.6666666666666666, 0.3333333333333333]
    """
    return core.sla_violation(_arr(ntts, "NTT"),
                              core.sla_mults(_arr(mults, "SLA multiples").tolist()))


def tail_by_model(ntts: Sequence[float] | np.ndarray, models: Sequence[str],
                  keep: Sequence[bool] | np.ndarray, q: float = 95.0) -> dict[str, float]:
    """The ``q``-th percentile of NTT per model over the tasks in ``keep`` (Fig. 14 keeps
    the high-priority ones); models with no kept task are left out."""
    n = _arr(ntts, "NTT")
    k = np.asarray(keep, dtype=bool)
    names = np.asarray(models)
    if not n.size == k.size == names.size:
        raise ConfigError("NTT, models and keep differ in length")
    out: dict[str, float] = {}
    for name in sorted(set(names[k].tolist())):
        out[name] = float(np.percentile(n[k & (names == name)], q))
    return out
