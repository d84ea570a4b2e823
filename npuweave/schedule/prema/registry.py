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

_PREEMPTIVE = {"prema": "p-prema", "p-prema": "p-prema", "token": "p-token",
               "p-token": "p-token", "hpf": "p-hpf", "np-hpf": "p-hpf", "p-hpf": "p-hpf",
               "sjf": "p-sjf", "np-sjf": "p-sjf", "p-sjf": "p-sjf"}
_PLAIN = {"p-prema": "prema", "p-token": "token", "p-hpf": "np-hpf", "p-sjf": "np-sjf"}
PREEMPT_CHOICES = ("none", "checkpoint", "kill", "drain", "dynamic", "dynamic-kill")


def with_preempt(name: str, preempt: str | None, opts: dict[str, object]
                 ) -> tuple[str, dict[str, object]]:
    """The policy name and options for ``--scheduler NAME --preempt MECHANISM``.

    ``none`` picks the non-preemptive form; a mechanism picks the preemptive form of a PREMA
    policy (``prema`` -> ``p-prema``; ``hpf``/``sjf`` -> PREMA's ``p-hpf``/``p-sjf``) with
    that mechanism. ``None`` leaves both unchanged.

    Examples
    --------
    >>> with_preempt("prema", "dynamic", {})
    ('p-prema', {'mechanism': 'dynamic'})
    >>> with_preempt("p-sjf", "none", {})
    ('np-sjf', {})
    """
    from npuweave.errors import ConfigError

    if preempt is None:
        return name, opts
    if preempt not in PREEMPT_CHOICES:
        raise ConfigError(f"--preempt {preempt!r}; choose one of {', '.join(PREEMPT_CHOICES)}")
    if preempt == "none":
        return _PLAIN.get(name, name), opts
    if name not in _PREEMPTIVE:
        raise ConfigError(f"--preempt {preempt}: scheduler {name!r} has no preemptive PREMA "
                          f"form; use one of {', '.join(sorted(set(_PREEMPTIVE)))}")
    if opts.get("mechanism", preempt) != preempt:
        raise ConfigError(f"--preempt {preempt} contradicts --scheduler-opt "
                          f"mechanism={opts['mechanism']}; give one of them")
    return _PREEMPTIVE[name], {**opts, "mechanism": preempt}


def check_priorities(name: str, priorities: str | None) -> None:
    """Reject, before a run, ``--priority`` values a PREMA policy cannot map to a level.

    Examples
    --------
    >>> check_priorities("p-prema", "1,9")
    >>> check_priorities("fcfs", "2,5")  # not a PREMA policy: any integers
    """
    from npuweave.errors import ConfigError
    from npuweave.schedule.prema.family import PAPER_PRIORITIES

    if priorities is None or name not in PREMA_POLICIES:
        return
    for text in priorities.split(","):
        text = text.strip()
        if text and (not text.isdigit() or int(text) not in PAPER_PRIORITIES):
            raise ConfigError(f"--priority {text!r}: PREMA policies take the levels 1 (low), "
                              f"3 (medium) and 9 (high)")
