"""Metrics of multi-tenant runs: STP, ANTT, fairness, SLA violation, tail latency, utilization.

Pure functions on plain records (anything shaped like ``npuweave.sim.Interval`` and
``npuweave.sim.RequestRecord``); this package imports nothing else from npuweave but errors.
STP, NTT/ANTT and fairness are PREMA's Equations 1 and 2; see ``throughput`` for how they
apply to closed-loop streams. Each formula is written once, in ``npuweave.metrics.core``
(with the SLA targets, ``sla_mults("serve")`` or ``sla_mults("prema")``); the closed-loop
(``multitask``), task-set (``prema``) and serving (``serving``) modules call it.

Examples
--------
>>> from npuweave.metrics import stp, antt, utilization        # doctest: +SKIP
>>> stp(result.requests, {"resnet50": 2.1e-3, "bert-base": 3.4e-3})  # doctest: +SKIP
1.61
"""

from npuweave.metrics.common import Standalone, Window, resolve_window
from npuweave.metrics.core import SLA_DEFAULTS, sla_mults
from npuweave.metrics.index import IntervalIndex
from npuweave.metrics.latency import percentile, sla_violation_rate, tail_latency
from npuweave.metrics.multitask import (
    antt,
    fairness,
    ntt,
    ntt_per_tenant,
    progress,
    stp,
    stp_per_tenant,
    throughput,
)
from npuweave.metrics.occupancy import (
    busy_time,
    lower_bound,
    makespan,
    makespan_ratio,
    merge_intervals,
    utilization,
)
from npuweave.metrics.requests import Outcome, RequestTable, request_table
from npuweave.metrics.serving import summarize as summarize_serving
from npuweave.metrics.summary import DEFAULT_METRICS, METRICS, metric_names, summarize

__all__ = [
    "DEFAULT_METRICS", "METRICS", "SLA_DEFAULTS", "Standalone", "Window",
    "antt", "busy_time", "fairness", "lower_bound", "makespan", "makespan_ratio",
    "merge_intervals", "metric_names", "ntt", "ntt_per_tenant", "percentile", "progress",
    "resolve_window", "sla_mults", "sla_violation_rate", "stp", "stp_per_tenant", "summarize",
    "tail_latency", "throughput", "utilization",
    "IntervalIndex", "Outcome", "RequestTable", "request_table", "summarize_serving",
]
