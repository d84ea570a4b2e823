"""The event-driven NPU engine and serving simulator.

Entry points: ``run_streams`` (closed-loop streams of requests, one tenant per model, ordered by
a layer-wise policy from ``npuweave.schedule``) and ``standalone_time`` (one request alone on
the same engine). Both return seconds / ``SimResult``; see ``docs/SCHEDULING.md``.
"""

from npuweave.sim.intervals import IntervalColumns
from npuweave.sim.records import Interval, RequestRecord
from npuweave.sim.result import SimResult
from npuweave.sim.streams import run_streams, run_tenants, standalone_time

__all__ = [
    "Interval", "IntervalColumns", "RequestRecord", "SimResult", "run_streams",
    "run_tenants", "standalone_time",
]
