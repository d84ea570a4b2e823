"""The task-level rules the compiled task loop knows (``npuweave.sim.taskloop``).

Each rule is stated once, in its policy's module (``npuweave.schedule.fcfs``, ``hpf``,
``sjf``: ``key`` and ``wins``, see ``npuweave.schedule.task.Ruled``); this module only numbers
them and forwards to them, so that one compiled loop serves every rule (numba does not cache
a function that takes another function as an argument). A new ``Ruled`` policy joins by its
two functions and one line in each forwarder.

Examples
--------
>>> from npuweave.schedule.registry import get_scheduler
>>> rule_code(get_scheduler("hpf-p")), rule_code(get_scheduler("rr"))
(1, -1)
>>> rule_key(1, 0.5, 9, 0.0)
(-9.0, 0.5)
"""

from __future__ import annotations

from typing import Any

from npuweave.schedule.fcfs import key as fcfs_key
from npuweave.schedule.fcfs import wins as fcfs_wins
from npuweave.schedule.hpf import key as hpf_key
from npuweave.schedule.hpf import wins as hpf_wins
from npuweave.schedule.jit import kernel, plain
from npuweave.schedule.sjf import key as sjf_key
from npuweave.schedule.sjf import wins as sjf_wins
from npuweave.schedule.task import Ruled

#: rule names by code (``Ruled.rule``)
RULES = ("fcfs", "hpf", "sjf")


def rule_code(policy: Any) -> int:
    """The code of ``policy``'s rule; -1 when it is not a ``Ruled`` policy deciding by it
    alone (a subclass that writes its own ``decide``, or a rule this module does not know)."""
    if not isinstance(policy, Ruled) or type(policy).decide is not Ruled.decide:
        return -1
    name = type(policy).rule
    if name not in RULES or type(policy).key is not plain(f"npuweave.schedule.{name}.key"):
        return -1
    return RULES.index(name)


@kernel(inline=True)
def rule_key(rule, arrival_s, priority, remaining_s):
    """``key`` of rule ``rule`` (``RULES``)."""
    if rule == 0:
        return fcfs_key(arrival_s, priority, remaining_s)
    if rule == 1:
        return hpf_key(arrival_s, priority, remaining_s)
    return sjf_key(arrival_s, priority, remaining_s)


@kernel(inline=True)
def rule_wins(rule, best_k0, best_k1, best_id, run_k0, run_k1, run_id):
    """``wins`` of rule ``rule`` (``RULES``)."""
    if rule == 0:
        return fcfs_wins(best_k0, best_k1, best_id, run_k0, run_k1, run_id)
    if rule == 1:
        return hpf_wins(best_k0, best_k1, best_id, run_k0, run_k1, run_id)
    return sjf_wins(best_k0, best_k1, best_id, run_k0, run_k1, run_id)

