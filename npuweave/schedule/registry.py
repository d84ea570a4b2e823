"""Policies by name: ``schedulers()`` lists them, ``get_scheduler`` builds one.

Two levels share the registry: ``"layer"`` (layer-wise: the closed-loop ``schedule`` command,
``plan`` and ``serve``) and ``"task"`` (task-level: ``serve`` only). ``schedulers()`` lists the
layer-wise ones (what ``plan`` and ``run_streams`` accept); ``schedulers("all")`` lists both and
``scheduler_level(name)`` tells them apart.
"""

from __future__ import annotations

import inspect
from functools import lru_cache

from npuweave.errors import ConfigError, unknown_name
from npuweave.schedule.aimt import AIMT, AimtFetchAhead, RandomInterleaver
from npuweave.schedule.compute_only import ComputeOnly
from npuweave.schedule.fair import Fair
from npuweave.schedule.fcfs import FCFS
from npuweave.schedule.hpf import HPF
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.schedule.memory_only import MemoryOnly
from npuweave.schedule.prema.registry import PREMA_POLICIES
from npuweave.schedule.protocol import Policy
from npuweave.schedule.rr import RoundRobin
from npuweave.schedule.sequential import Sequential
from npuweave.schedule.sjf import SJF

_POLICIES: dict[str, tuple[type, str]] = {
    "layerweaver": (Layerweaver, "greedy layer interleaving that minimizes PE and DRAM idle "
                                 "time (thesis IV.2-IV.4)"),
    "layerweaver-plus": (LayerweaverPlus, "Layerweaver with deadlines: least idle, or least "
                                          "slack when a request is at risk (thesis V.2)"),
    "sequential": (Sequential, "one request at a time, first come first served"),
    "compute-only": (ComputeOnly, "only the compute-intensive models, one request at a time"),
    "memory-only": (MemoryOnly, "only the memory-intensive models, one request at a time"),
    "fair": (Fair, "whole requests, alternating so each model gets an equal share of NPU time"),
    "aimt": (AIMT, "AI-MT: merged sub-layer blocks, least compute when memory is low (mem), "
                   "compute-intensive when the distance is short (dist), else memory-intensive"),
    "aimt-fetchahead": (AimtFetchAhead, "the former AI-MT-like band controller: whole layers, "
                                        "fetch-ahead distance kept in [low, high]"),
    "random": (RandomInterleaver, "a uniformly random candidate at every decision"),
}
_TASK: dict[str, tuple[type, str, dict[str, object]]] = {
    "fcfs": (FCFS, "task-level: first come first served, non-preemptive", {}),
    "sjf": (SJF, "task-level: shortest job first (isolated work left), non-preemptive", {}),
    "sjf-p": (SJF, "task-level: shortest remaining time first, preemptive",
              {"preemptive": True}),
    "hpf": (HPF, "task-level: highest priority first, non-preemptive", {}),
    "hpf-p": (HPF, "task-level: highest priority first, preemptive", {"preemptive": True}),
    "rr": (RoundRobin, "task-level: round robin with a quantum (quantum_s), preemptive", {}),
    **PREMA_POLICIES,
}
LEVELS = ("layer", "task", "all")


def schedulers(level: str = "layer") -> dict[str, str]:
    """Registered policies of ``level`` (``"layer"``, ``"task"`` or ``"all"``): name -> one-line
    description.

    Examples
    --------
    >>> sorted(schedulers())[:3]
    ['aimt', 'aimt-fetchahead', 'compute-only']
    >>> [n for n in sorted(schedulers("task")) if n in ("fcfs", "hpf", "prema", "p-prema")]
    ['fcfs', 'hpf', 'p-prema', 'prema']
    """
    if level not in LEVELS:
        raise unknown_name("policy level", level, list(LEVELS))
    out: dict[str, str] = {}
    if level in ("layer", "all"):
        out.update((name, desc) for name, (_, desc) in _POLICIES.items())
    if level in ("task", "all"):
        out.update((name, entry[1]) for name, entry in _TASK.items())
    return out


def scheduler_level(name: str) -> str:
    """``"layer"`` or ``"task"`` for a registered policy name.

    Examples
    --------
    >>> scheduler_level("layerweaver"), scheduler_level("hpf-p")
    ('layer', 'task')
    """
    if name in _POLICIES:
        return "layer"
    if name in _TASK:
        return "task"
    raise unknown_name("scheduler", name, [*_POLICIES, *_TASK])


def get_scheduler(name: str, **opts: object) -> Policy:
    """A fresh policy registered as ``name``; ``opts`` go to its constructor (``seed`` is
    accepted by all).

    Examples
    --------
    >>> get_scheduler("aimt", mem=0.125, dist=0.1).mem
    0.125
    """
    defaults: dict[str, object] = {}
    if name in _POLICIES:
        cls = _POLICIES[name][0]
    elif name in _TASK:
        cls, _, defaults = _TASK[name]
    else:
        raise unknown_name("scheduler", name, [*_POLICIES, *_TASK])
    params = _options(cls)
    bad = sorted(k for k in opts if k not in params)
    if bad:
        valid = ", ".join(sorted(params)) or "none"
        raise ConfigError(f"scheduler {name!r} has no option {', '.join(map(repr, bad))}; "
                          f"valid options: {valid}")
    return cls(**{**defaults, **opts})


@lru_cache(maxsize=64)
def _options(cls: type) -> frozenset[str]:
    """The constructor parameters of a policy class (read once per class: a run asks)."""
    return frozenset(inspect.signature(cls).parameters)


def register_scheduler(name: str, cls: type, description: str,
                       **defaults: object) -> None:
    """Add (or replace) a policy class under ``name``; its ``level`` attribute (``"layer"``,
    the default, or ``"task"``) says which list it joins. ``defaults`` go to its constructor.
    """
    _POLICIES.pop(name, None)
    _TASK.pop(name, None)
    if getattr(cls, "level", "layer") == "task":
        _TASK[name] = (cls, description, dict(defaults))
    else:
        _POLICIES[name] = (cls, description)
