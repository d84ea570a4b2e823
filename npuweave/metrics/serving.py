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
from collections.abc import Sequence
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


def _percentiles(latency: np.ndarray) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    vals = np.percentile(latency, LATENCY_QS) if latency.size else [None] * len(LATENCY_QS)
    for q, v in zip(LATENCY_QS, vals, strict=True):
        out[f"latency_p{q:g}_s"] = None if v is None else float(v)
    out["latency_max_s"] = float(latency.max()) if latency.size else None
    return out


def _none(x: float) -> float | None:
    return None if math.isnan(x) else x


def _row(t: RequestTable, scope: str, name: str, span_s: float,
         sla_mults: Sequence[float], stp_form: str) -> Row:
    done = t.state == Outcome.DONE
    latency = (t.finish_s - t.arrival_s)[done]
    iso = t.isolated_s[done]
    ntt = core.ntt(latency, iso)
    served = int(done.sum())
    row: Row = {"scope": scope, "name": name, "requests": len(t), "served": served,
                "killed": len(t) - served, "throughput_rps": served / span_s}
    row["stp_task_set"] = core.stp_task_set(ntt)
    row["stp_open_loop"] = core.stp_open_loop(iso, span_s)
    row["stp"] = row["stp_task_set"] if stp_form == "task-set" else row["stp_open_loop"]
    row["antt"] = _none(core.antt(ntt))
    row["fairness"] = core.fairness(1.0 / ntt, t.priority[done]) if served else None
    # every request: NTT is NaN when killed, and NaN is not within any N -> violated
    sla = core.sla_violation(core.ntt(t.finish_s - t.arrival_s, t.isolated_s), sla_mults)
    for mult, rate in zip(sla_mults, sla.tolist(), strict=True):
        row[sla_column(mult)] = _none(rate)
    has_deadline = np.isfinite(t.deadline_s)
    late = ~(t.finish_s[has_deadline] <= t.deadline_s[has_deadline])
    row["deadline_requests"] = int(has_deadline.sum())
    row["deadline_violation"] = _none(core.violation_rate(late))
    row.update(_percentiles(latency))
    row["preemptions"] = int(t.preemptions.sum())
    row["preempt_overhead_s"] = float(t.preempt_overhead_s.sum())
    row["wasted_s"] = float(t.wasted_s.sum())
    return row


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
    whole = _row(table, "all", "all", span_s, mults, stp_form)
    for key, busy in (("pe_util", pe_busy_s), ("dram_util", dram_busy_s)):
        whole[key] = None if busy is None else float(busy) / span_s
    rows = [whole]
    by_model = dict(table.groups(table.model))
    empty = table.select(slice(0, 0))
    for i, name in enumerate(table.models):  # a model with no request still gets its row
        rows.append(_row(by_model.get(i, empty), "model", name, span_s, mults, stp_form))
    for prio, part in table.groups(table.priority):
        rows.append(_row(part, "priority", str(prio), span_s, mults, stp_form))
    for r in rows[1:]:
        r["pe_util"] = r["dram_util"] = None
    return rows


def jsonable(rows: Sequence[Row]) -> list[Row]:
    """Rows with NaN and infinities replaced by None (strict JSON has neither)."""
    def clean(v: Any) -> Any:
        return None if isinstance(v, float) and not math.isfinite(v) else v
    return [{k: clean(v) for k, v in r.items()} for r in rows]
