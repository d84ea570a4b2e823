"""``RequestTable``: every request of a serving run as parallel NumPy arrays, built once.

The serving simulator fills one table at the end of a run; every serving metric
(``npuweave.metrics.serving``) is then a vectorized expression over its columns, so a summary
costs a few passes over arrays instead of a walk over records per metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import Any

import numpy as np

from npuweave.errors import ConfigError


class Outcome(IntEnum):
    """How a request left the system: served to the end, or killed and never finished."""

    DONE = 0
    KILLED = 1


@dataclass(frozen=True, slots=True, eq=False)
class RequestTable:
    """Per-request columns of a serving run (all arrays of one length, seconds for times).

    Attributes
    ----------
    models : model names; ``model`` indexes them.
    model : int64. arrival_s, start_s, finish_s : float64 (``finish_s`` is NaN when killed).
    isolated_s : float64, the request's time alone on the NPU (cold for open-loop runs).
    priority : int64 (larger is more important). deadline_s : float64 *absolute* (inf: none).
    state : int8 ``Outcome`` codes. preemptions : int64, times the request was preempted.
    preempt_overhead_s : float64, checkpoint/restore time charged to it.
    wasted_s : float64, PE time of work thrown away (killed progress that was recomputed).
    """

    models: tuple[str, ...]
    model: np.ndarray
    arrival_s: np.ndarray
    start_s: np.ndarray
    finish_s: np.ndarray
    isolated_s: np.ndarray
    priority: np.ndarray
    deadline_s: np.ndarray
    state: np.ndarray
    preemptions: np.ndarray
    preempt_overhead_s: np.ndarray
    wasted_s: np.ndarray

    def __len__(self) -> int:
        return int(self.model.shape[0])

    @property
    def done(self) -> np.ndarray:
        """Boolean mask of the requests that finished."""
        return self.state == Outcome.DONE

    @property
    def latency_s(self) -> np.ndarray:
        """finish - arrival (NaN for killed requests)."""
        return self.finish_s - self.arrival_s

    @property
    def ntt(self) -> np.ndarray:
        """Normalized turnaround time: latency / isolated time (NaN for killed requests)."""
        return self.latency_s / self.isolated_s

    def select(self, rows: np.ndarray | slice) -> RequestTable:
        """The rows picked by a mask, an index array or a slice (a slice gives views)."""
        cols = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "models"}
        return RequestTable(self.models, **{k: v[rows] for k, v in cols.items()})

    def groups(self, key: np.ndarray) -> list[tuple[int, RequestTable]]:
        """``(value, rows)`` for each distinct value of the int column ``key``, in value order.

        The table is reordered by ``key`` once; every group is then a slice of it (views, not
        copies), which is what keeps per-model and per-priority summaries cheap.
        """
        order = np.argsort(key, kind="stable")
        ordered = self.select(order)
        values, starts = np.unique(key[order], return_index=True)
        ends = np.append(starts[1:], key.size)
        return [(int(v), ordered.select(slice(a, b)))
                for v, a, b in zip(values.tolist(), starts.tolist(), ends.tolist(), strict=True)]


_FLOAT_DEFAULTS = {"start_s": np.nan, "deadline_s": np.inf, "preempt_overhead_s": 0.0,
                   "wasted_s": 0.0}


def _column(name: str, values: Any, n: int, dtype: Any, default: Any) -> np.ndarray:
    if values is None:
        return np.full(n, default, dtype=dtype)
    arr = np.array(values, dtype=dtype)
    if arr.shape != (n,):
        raise ConfigError(f"request table: column {name!r} has shape {arr.shape}, expected ({n},)")
    return arr


def _states(state: Sequence[Any] | np.ndarray | None, n: int) -> np.ndarray:
    if state is None:
        return np.zeros(n, np.int8)
    if isinstance(state, np.ndarray) and state.dtype.kind in "iu":  # codes already: no loop
        if not np.isin(state, [int(o) for o in Outcome]).all():
            raise ConfigError("request table: state must be 'done' or 'killed'")
        return _column("state", state, n, np.int8, 0)
    codes = {"done": Outcome.DONE, "killed": Outcome.KILLED}
    try:
        out = [int(codes[s.lower()]) if isinstance(s, str) else int(Outcome(int(s)))
               for s in np.asarray(state, dtype=object).tolist()]
    except (KeyError, ValueError):
        raise ConfigError("request table: state must be 'done' or 'killed'") from None
    return _column("state", out, n, np.int8, 0)


def request_table(models: Sequence[str], model: Sequence[int] | np.ndarray,
                  arrival_s: Sequence[float] | np.ndarray, finish_s: Sequence[float] | np.ndarray,
                  isolated_s: Sequence[float] | np.ndarray, **optional: Any) -> RequestTable:
    """Validate columns and build a ``RequestTable``; optional columns get their defaults.

    Optional keywords: ``start_s`` (NaN), ``priority`` (1), ``deadline_s`` (inf, absolute),
    ``state`` ('done'/'killed' or ``Outcome`` codes; done), ``preemptions`` (0),
    ``preempt_overhead_s`` (0), ``wasted_s`` (0). ``isolated_s`` may be one value per model
    (indexed by ``model``) or one per request.

    Examples
    --------
    >>> t = request_table(("a",), [0, 0], [0.0, 1.0], [2.0, 2.5], [1.0])
    >>> t.ntt.tolist()
    [2.0, 1.5]
    """
    unknown = set(optional) - {"start_s", "priority", "deadline_s", "state", "preemptions",
                               "preempt_overhead_s", "wasted_s"}
    if unknown:
        raise ConfigError(f"request table: unknown column(s) {sorted(unknown)}")
    names = tuple(str(m) for m in models)
    m = np.array(model, dtype=np.int64)
    n = m.shape[0]
    if m.ndim != 1 or (n and (m.min() < 0 or m.max() >= len(names))):
        raise ConfigError(f"request table: model indices must lie in [0, {len(names)})")
    iso = np.array(isolated_s, dtype=np.float64)
    if iso.shape == (len(names),) and len(names) != n:
        iso = iso[m]
    cols: dict[str, np.ndarray] = {
        "arrival_s": _column("arrival_s", arrival_s, n, np.float64, 0.0),
        "finish_s": _column("finish_s", finish_s, n, np.float64, 0.0),
        "isolated_s": _column("isolated_s", iso, n, np.float64, 0.0),
        "priority": _column("priority", optional.get("priority"), n, np.int64, 1),
        "preemptions": _column("preemptions", optional.get("preemptions"), n, np.int64, 0),
        "state": _states(optional.get("state"), n),
    }
    for name, default in _FLOAT_DEFAULTS.items():
        cols[name] = _column(name, optional.get(name), n, np.float64, default)
    _check(cols)
    return RequestTable(names, m, **cols)


def _check(c: dict[str, np.ndarray]) -> None:
    done = c["state"] == Outcome.DONE
    if not np.all(np.isfinite(c["arrival_s"])):
        raise ConfigError("request table: arrival times must be finite")
    if not np.all(c["isolated_s"] > 0):
        raise ConfigError("request table: isolated times must be > 0 seconds")
    if np.any(~np.isfinite(c["finish_s"][done])) or np.any(
            c["finish_s"][done] < c["arrival_s"][done]):
        raise ConfigError("request table: a done request must finish (finitely) after it arrives")
    c["finish_s"][~done] = np.nan
