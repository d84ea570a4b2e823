"""HPF: the request with the highest priority gets the NPU (ties: first arrived).

Task-level. Non-preemptive by default; ``hpf-p`` (``preemptive=True``) preempts the running
request when one of strictly higher priority arrives (``Ruled``'s default ``wins``: strictly
ahead on the first key, which is the priority). The rule (``key``) is stated once here, for
the Python decision and the compiled task loop alike (``npuweave.schedule.task``).
"""

from __future__ import annotations

from npuweave.schedule import jit
from npuweave.schedule.task import Ruled


@jit.kernel(inline=True)
def key(arrival_s, priority, remaining_s):
    """Highest priority first, then earliest arrival (then lower id)."""
    return -float(priority), arrival_s


class HPF(Ruled, key=key):
    """Highest priority first."""

    name = "hpf"
    preemptive_name = "hpf-p"
