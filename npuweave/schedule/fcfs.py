"""FCFS: the request that arrived first gets the NPU and keeps it to its end.

Task-level and non-preemptive. A preemptive FCFS would preempt a running request for one that
arrived earlier; that can only happen to a request restarted after a kill, so ``fcfs`` with
``preemptive=True`` gives a killed-and-restarted request its place back in arrival order.
The rule (``key``, ``wins``) is stated once here; ``npuweave.schedule.task.Ruled`` decides by it
in Python and the compiled task loop (``npuweave.sim.taskloop``) by the same functions.
"""

from __future__ import annotations

from npuweave.schedule import jit
from npuweave.schedule.task import Ruled


@jit.kernel(inline=True)
def key(arrival_s, priority, remaining_s):
    """Earliest arrival first (ties: lower id)."""
    return arrival_s, 0.0


@jit.kernel(inline=True)
def wins(best_k0, best_k1, best_id, run_k0, run_k1, run_id):
    """Preemptive: the best queued request arrived before the running one (ties: lower id)."""
    return best_k0 < run_k0 or best_k0 == run_k0 and best_id < run_id


class FCFS(Ruled, key=key, wins=wins):
    """First come, first served at request granularity."""

    name = "fcfs"
