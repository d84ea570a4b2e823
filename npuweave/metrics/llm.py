"""LLM serving metrics: time to first token, time between tokens, tokens/s, goodput under SLOs.

* TTFT: first token time minus arrival, per request.
* TBT: every gap between two consecutive tokens of one request, pooled over all requests
  (Sarathi-Serve's P99 TBT is over tokens, not requests).
* Rates, as MLPerf LoadGen's Server log gives them. ``span_s`` runs from time 0 (the start of
  the arrivals) to the run's last token, so it includes the drain after the last arrival.
  ``throughput_rps`` (N / span), ``tokens_per_s`` and ``goodput_rps`` (requests whose TTFT is
  within ``ttft_s`` and whose largest gap between tokens is within ``tbt_s``, per second of the
  span; an unset SLO is met) are LoadGen's "completed" rates; LoadGen counts N - 1 requests
  there, we count all N. ``offered_rps`` is its "scheduled" rate: (N - 1) / the last arrival.
* ``slo_met``: the run-level check a capacity search uses: the ``pXX`` of TTFT and of TBT
  within their bounds, each at its own percentile. No rate enters it, so a capacity (the
  largest load whose run passes) does not depend on the drain.

Percentiles are numpy's linear interpolation (as ``npuweave.metrics.latency``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class SLO:
    """Latency objectives: bounds in seconds (``inf``: none) and the percentile each applies at
    for a run-level check (``None``: per request only)."""

    ttft_s: float = math.inf
    tbt_s: float = math.inf
    ttft_pct: float | None = None
    tbt_pct: float | None = None


def _pct(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def llm_summary(arrival_s: np.ndarray, first_s: np.ndarray, finish_s: np.ndarray,
                generated: np.ndarray, max_gap_s: np.ndarray, gaps_s: np.ndarray,
                span_s: float, slo: SLO = SLO()) -> dict[str, float | int | None]:
    """One row of LLM serving metrics (keys end in ``_s`` for seconds).

    Examples
    --------
    >>> a = np.array([0.0, 1.0]); f = np.array([0.5, 1.2]); e = np.array([1.0, 2.0])
    >>> row = llm_summary(a, f, e, np.array([3, 3]), np.array([0.3, 0.4]),
    ...                   np.array([0.2, 0.3, 0.4, 0.4]), 2.0, SLO(ttft_s=0.4, tbt_s=1.0))
    >>> row["ttft_p50_s"], row["goodput_rps"], row["tokens_per_s"]
    (0.35, 0.5, 3.0)
    """
    ttft = first_s - arrival_s
    e2e = finish_s - arrival_s
    good = (ttft <= slo.ttft_s) & (max_gap_s <= slo.tbt_s)
    span = span_s if span_s > 0 else math.nan
    row: dict[str, float | int | None] = {"requests": int(len(arrival_s))}
    qs = sorted({50.0, 90.0, 99.0} | {q for q in (slo.ttft_pct, slo.tbt_pct) if q is not None})
    for name, values in (("ttft", ttft), ("tbt", gaps_s)):
        for q in qs:
            row[f"{name}_p{q:g}_s"] = _pct(values, q)
    row["e2e_p50_s"], row["e2e_p99_s"] = _pct(e2e, 50), _pct(e2e, 99)
    last = float(arrival_s.max()) if len(arrival_s) else 0.0
    row["span_s"] = float(span_s)
    row["offered_rps"] = (len(arrival_s) - 1) / last if len(arrival_s) > 1 and last > 0 else None
    row["tokens_per_s"] = float(generated.sum()) / span
    row["throughput_rps"] = len(arrival_s) / span
    row["goodput_rps"] = float(np.count_nonzero(good)) / span
    row["slo_attainment"] = float(good.mean()) if len(good) else None
    return row


def slo_met(row: dict[str, float | int | None], slo: SLO) -> bool:
    """Whether ``row`` meets ``slo`` at its percentiles (a bound without one is not checked)."""
    for bound, pct, name in ((slo.ttft_s, slo.ttft_pct, "ttft"), (slo.tbt_s, slo.tbt_pct, "tbt")):
        if pct is None or math.isinf(bound):
            continue
        value = row.get(f"{name}_p{pct:g}_s")
        if value is None:
            return False
        if float(value) > bound:
            return False
    return True
