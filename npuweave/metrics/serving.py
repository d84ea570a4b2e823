"""Serving metrics of an open-loop run, computed from a ``RequestTable`` in a few array passes.

``summarize`` returns one row (a flat dict) for the whole run, one per model and one per
priority level. Definitions (``docs/ARRIVALS_METRICS.md`` works examples by hand):

- latency = finish - arrival; NTT = latency / isolated time (cold isolated time in open-loop
  runs, as PREMA uses); ANTT = mean NTT over served requests.
- STP, task-set form (PREMA Eq. 1): sum of 1/NTT over the served requests.
  STP, open-loop form (thesis IV.5 and V.3.A): standalone seconds of the served requests per
  second of the run, i.e. sum(isolated_s) / span_s. ``stp_form`` picks which one is ``stp``.
- fairness (PREMA Eq. 2): PP_i = (1/NTT_i) / (prio_i / sum_j prio_j); min PP / max PP.
- SLA violation at ``N x isolated``: NTT not within N, over every request of the row; a killed
  request counts as a violation. Deadline violation: finish > absolute deadline (or killed),
  over the requests that have a deadline (None when none has one).

Each formula is ``npuweave.metrics.core``'s; this module only picks the rows' requests.
- latency percentiles interpolate linearly (numpy's default), over served requests.
- utilization = busy seconds / span_s (whole-run rows only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from npuweave.errors import ConfigError
from npuweave.metrics import core
from npuweave.metrics.requests import Outcome, RequestTable

#: Latency percentiles reported by ``summarize`` (column ``latency_p<q>_s``).
LATENCY_QS = (50.0, 90.0, 95.0, 99.0, 99.9)
#: Default SLA multipliers: ``core.sla_mults("serve")``, four points of PREMA's N = 2..20.
SLA_MULTS = core.sla_mults("serve")
STP_FORMS = ("open-loop", "task-set")

Row = dict[str, Any]


def sla_column(mult: float) -> str:
    """Column name of the SLA violation rate at ``mult x isolated`` (``sla_violation_x2``)."""
    return f"sla_violation_x{mult:g}"


Columns = dict[str, np.ndarray]


def _per_group(key: np.ndarray, n_groups: int, columns: Sequence[np.ndarray],
               fn: Callable[..., Columns]) -> Columns:
    """``fn`` over each group's rows, in one call per distinct group size.

    ``key`` (int, ``0 <= key < n_groups``) names each row's group. The groups of one size are
    stacked as the rows of 2-D arrays (each group's rows in table order) and ``fn`` reduces
    over the last axis: the sums, means and percentiles are NumPy's own on each group's
    values, so every float equals a reduction of that group alone (``np.add.reduceat`` would
    change the summation order). ``out[name][g]`` is NaN for a group with no rows.
    """
    if n_groups == 1 and key.size:  # one group of every row in table order: no gather
        return dict(fn(*(c[None, :] for c in columns)))
    counts = np.bincount(key, minlength=n_groups)
    order = np.argsort(key, kind="stable")
    starts = np.cumsum(counts) - counts
    out: Columns = {}
    for size in np.unique(counts[counts > 0]).tolist():
        groups = np.flatnonzero(counts == size)
        rows = order[starts[groups][:, None] + np.arange(size)]
        for name, v in fn(*(c[rows] for c in columns)).items():
            out.setdefault(name, np.full((n_groups,) + v.shape[1:], np.nan))[groups] = v
    return out


def _served(span_s: float) -> Callable[..., Columns]:
    def fn(latency: np.ndarray, iso: np.ndarray, prio: np.ndarray) -> Columns:
        ntt = core.ntt(latency, iso)
        return {"stp_task_set": core.stp_task_set_rows(ntt),
                "stp_open_loop": core.stp_open_loop_rows(iso, span_s),
                "antt": core.antt_rows(ntt), "fairness": core.fairness_rows(1.0 / ntt, prio),
                "percentiles": np.percentile(latency, LATENCY_QS, axis=-1).T,
                "latency_max_s": latency.max(axis=-1)}
    return fn


def _every(mults: Sequence[float]) -> Callable[..., Columns]:
    def fn(latency: np.ndarray, iso: np.ndarray, preemptions: np.ndarray,
           overhead: np.ndarray, wasted: np.ndarray) -> Columns:
        # NTT is NaN when killed, and NaN is not within any N -> violated
        return {"sla": core.sla_violation(core.ntt(latency, iso), mults),
                "preemptions": preemptions.sum(axis=-1),
                "preempt_overhead_s": overhead.sum(axis=-1), "wasted_s": wasted.sum(axis=-1)}
    return fn


def _late(finish: np.ndarray, deadline: np.ndarray) -> Columns:
    return {"deadline_violation": core.violation_rate_rows(~(finish <= deadline))}


def _get(cols: Columns, name: str, shape: tuple[int, ...], default: float) -> np.ndarray:
    """Column ``name`` of a ``_per_group`` result; ``default`` where a group had no rows."""
    v = cols.get(name)
    return np.full(shape, default) if v is None else v


def _none(values: np.ndarray) -> list[float | None]:
    return [None if math.isnan(x) else x for x in values.tolist()]


def _if_served(values: np.ndarray, served: list[int]) -> list[float | None]:
    return [x if n else None for x, n in zip(values.tolist(), served, strict=True)]


def _columns(t: RequestTable, key: np.ndarray, n_groups: int, span_s: float,
             sla_mults: Sequence[float]) -> dict[str, list[Any]]:
    """Every column of the rows of ``n_groups`` groups of ``t`` (group ``key[i]`` per request)."""
    done = t.state == Outcome.DONE
    latency = t.finish_s - t.arrival_s
    srv = _per_group(key[done], n_groups, (latency[done], t.isolated_s[done],
                                           t.priority[done]), _served(span_s))
    every = _per_group(key, n_groups, (latency, t.isolated_s, t.preemptions,
                                       t.preempt_overhead_s, t.wasted_s), _every(sla_mults))
    has_deadline = np.isfinite(t.deadline_s)
    late = _per_group(key[has_deadline], n_groups,
                      (t.finish_s[has_deadline], t.deadline_s[has_deadline]), _late)
    requests = np.bincount(key, minlength=n_groups)
    served = np.bincount(key[done], minlength=n_groups)
    s = served.tolist()
    pct = _get(srv, "percentiles", (n_groups, len(LATENCY_QS)), np.nan)
    cols: dict[str, list[Any]] = {
        "requests": requests.tolist(), "served": s, "killed": (requests - served).tolist(),
        "throughput_rps": (served / span_s).tolist()}
    for name in ("stp_task_set", "stp_open_loop"):  # the sum over no request is 0
        cols[name] = np.where(served > 0, _get(srv, name, (n_groups,), 0.0), 0.0).tolist()
    cols["antt"] = _none(_get(srv, "antt", (n_groups,), np.nan))
    cols["fairness"] = _if_served(_get(srv, "fairness", (n_groups,), np.nan), s)
    sla = _get(every, "sla", (n_groups, len(sla_mults)), np.nan)
    for j, mult in enumerate(sla_mults):
        cols[sla_column(mult)] = _none(sla[:, j])
    cols["deadline_requests"] = np.bincount(key[has_deadline], minlength=n_groups).tolist()
    cols["deadline_violation"] = _none(_get(late, "deadline_violation", (n_groups,), np.nan))
    for j, q in enumerate(LATENCY_QS):
        cols[f"latency_p{q:g}_s"] = _if_served(pct[:, j], s)
    cols["latency_max_s"] = _if_served(_get(srv, "latency_max_s", (n_groups,), np.nan), s)
    some = requests > 0
    cols["preemptions"] = np.where(some, _get(every, "preemptions", (n_groups,), 0), 0
                                   ).astype(np.int64).tolist()
    for name in ("preempt_overhead_s", "wasted_s"):
        cols[name] = np.where(some, _get(every, name, (n_groups,), 0.0), 0.0).tolist()
    return cols


def _rows(t: RequestTable, key: np.ndarray, names: Sequence[str], scope: str, span_s: float,
          sla_mults: Sequence[float], stp_form: str) -> list[Row]:
    """One row per name; request ``i`` belongs to ``names[key[i]]``."""
    cols = _columns(t, key, len(names), span_s, sla_mults)
    stp = cols["stp_task_set" if stp_form == "task-set" else "stp_open_loop"]
    order = list(cols)
    order.insert(order.index("antt"), "stp")
    cols["stp"] = stp
    values = [cols[c] for c in order]
    return [{"scope": scope, "name": name, **dict(zip(order, vals, strict=True))}
            for name, *vals in zip(names, *values, strict=True)]


def summarize(table: RequestTable, *, span_s: float, pe_busy_s: float | None = None,
              dram_busy_s: float | None = None, sla_mults: Sequence[float] | str = SLA_MULTS,
              stp_form: str = "open-loop") -> list[Row]:
    """Rows of serving metrics: the whole run first, then per model, then per priority.

    Parameters
    ----------
    table : the run's requests.
    span_s : the measured duration (seconds; > 0), the denominator of rates and utilizations.
    pe_busy_s, dram_busy_s : busy seconds of the PE array and the DRAM channel (None: unknown).
    sla_mults : the N of the ``N x isolated`` SLA targets, or a named default of
        ``core.SLA_DEFAULTS`` (``"serve"``, ``"prema"``).
    stp_form : ``"open-loop"`` (standalone seconds served per second) or ``"task-set"``
        (PREMA Eq. 1); both are always in the row as ``stp_open_loop`` and ``stp_task_set``.

    Examples
    --------
    >>> from npuweave.metrics.requests import request_table
    >>> t = request_table(("a", "b"), [0, 1], [0.0, 0.0], [1.0, 3.0], [1.0, 1.0])
    >>> rows = summarize(t, span_s=4.0)
    >>> rows[0]["stp_open_loop"], rows[0]["stp_task_set"], rows[0]["antt"]
    (0.5, 1.3333333333333333, 2.0)
    """
    if not (isinstance(span_s, (int, float)) and math.isfinite(span_s) and span_s > 0):
        raise ConfigError(f"summarize: span_s = {span_s!r}; give the run's duration (> 0 s)")
    if stp_form not in STP_FORMS:
        raise ConfigError(f"summarize: stp_form {stp_form!r}; choose one of {', '.join(STP_FORMS)}")
    try:
        mults = core.sla_mults(sla_mults)
    except ConfigError as exc:
        raise ConfigError(f"summarize: {exc}") from None
    whole = _rows(table, np.zeros(len(table), dtype=np.int64), ["all"], "all", span_s, mults,
                  stp_form)[0]
    for key, busy in (("pe_util", pe_busy_s), ("dram_util", dram_busy_s)):
        whole[key] = None if busy is None else float(busy) / span_s
    # a model with no request still gets its row
    rows = [whole, *_rows(table, table.model, table.models, "model", span_s, mults, stp_form)]
    prios, prio_of = np.unique(table.priority, return_inverse=True)
    rows += _rows(table, prio_of.reshape(-1), [str(p) for p in prios.tolist()], "priority", span_s,
                  mults, stp_form)
    for r in rows[1:]:
        r["pe_util"] = r["dram_util"] = None
    return rows


def jsonable(rows: Sequence[Row]) -> list[Row]:
    """Rows with NaN and infinities replaced by None (strict JSON has neither)."""
    def clean(v: Any) -> Any:
        return None if isinstance(v, float) and not math.isfinite(v) else v
    return [{k: clean(v) for k, v in r.items()} for r in rows]
