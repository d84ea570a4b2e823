"""The PREMA-evaluation policies by name, for ``npuweave.schedule.registry``.

Non-preemptive: ``np-fcfs``, ``rrb``, ``np-hpf``, ``token``, ``np-sjf``, ``prema``.
Preemptive (``mechanism``: ``checkpoint``, ``kill``, ``dynamic`` or ``dynamic-kill``):
``p-hpf``, ``p-token``, ``p-sjf``, ``p-prema``. FCFS and RRB have no preemptive form: their
running task is always the one they would pick (the quantum-based ``rr`` is the preemptive
round robin). ``hpf``/``sjf`` are the serving core's own (SJF on true lengths).
"""

from __future__ import annotations

from npuweave.schedule.prema.fcfs import NPFCFS
from npuweave.schedule.prema.hpf import PremaHPF
from npuweave.schedule.prema.policy import Prema
from npuweave.schedule.prema.rrb import RRB
from npuweave.schedule.prema.sjf import PremaSJF
from npuweave.schedule.prema.token import Token

_P = {"preemptive": True, "mechanism": "dynamic"}
PREMA_POLICIES: dict[str, tuple[type, str, dict[str, object]]] = {
    "np-fcfs": (NPFCFS, "PREMA baseline: first come first served, non-preemptive", {}),
    "rrb": (RRB, "PREMA: round robin across models, a whole task per turn", {}),
    "np-hpf": (PremaHPF, "PREMA: high priority first, non-preemptive", {}),
    "token": (Token, "PREMA: token candidates (Alg. 2), FCFS among them", {}),
    "np-sjf": (PremaSJF, "PREMA: shortest estimated job first, non-preemptive", {}),
    "prema": (Prema, "PREMA (Alg. 2): token candidates, shortest estimated job", {}),
    "p-hpf": (PremaHPF, "PREMA: preemptive HPF (mechanism: dynamic by default)", _P),
    "p-token": (Token, "PREMA: preemptive TOKEN (mechanism: dynamic by default)", _P),
    "p-sjf": (PremaSJF, "PREMA: preemptive SJF on estimates (mechanism: dynamic)", _P),
    "p-prema": (Prema, "PREMA with preemption, Alg. 3 DRAIN/CHECKPOINT by default", _P),
}
"""name -> (class, one line, default options)."""

PAPER_POLICIES = ("np-fcfs", "rrb", "hpf", "token", "sjf", "prema")
"""The six policies of Figs 11-12 under their paper names."""
