"""HPF: the request with the highest priority gets the NPU (ties: first arrived).

Task-level. Non-preemptive by default; ``hpf-p`` (``preemptive=True``) preempts the running
request when one of strictly higher priority arrives. The rule (``key``, ``wins``) is stated
once here, for the Python decision and the compiled task loop alike (``npuweave.schedule.task``).
"""

from __future__ import annotations

from npuweave.schedule import jit
from npuweave.schedule.task import Ruled


@jit.kernel(inline=True)
def key(arrival_s, priority, remaining_s):
    """Highest priority first, then earliest arrival (then lower id)."""
    return -float(priority), arrival_s


@jit.kernel(inline=True)
def wins(best_k0, best_k1, best_id, run_k0, run_k1, run_id):
    """Preemptive: the best queued request has a strictly higher priority."""
    return best_k0 < run_k0


class HPF(Ruled):
    """Highest priority first."""

    name = "hpf"
    rule = "hpf"
    preemptive_name = "hpf-p"
    key = staticmethod(key)
    wins = staticmethod(wins)
