"""SJF: the request with the least isolated work left gets the NPU.

Task-level. Work left is estimated from the cost model (``View.remaining_s``: the sum of
``max(compute, fetch)`` over the units still to run), the estimate PREMA's prediction uses.
Non-preemptive by default; ``sjf-p`` (``preemptive=True``) is shortest remaining time first:
an arriving request with strictly less work left than the running one preempts it
(``Ruled``'s default ``wins``). The rule (``key``) is stated once here, for the Python
decision and the compiled task loop alike (``npuweave.schedule.task``).
"""

from __future__ import annotations

from npuweave.schedule import jit
from npuweave.schedule.task import Ruled


@jit.kernel(inline=True)
def key(arrival_s, priority, remaining_s):
    """Least work left first (ties: lower id)."""
    return remaining_s, 0.0


class SJF(Ruled, key=key):
    """Shortest job first (preemptive: shortest remaining time first)."""

    name = "sjf"
    preemptive_name = "sjf-p"
