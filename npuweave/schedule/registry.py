"""Layer-wise policies by name: ``schedulers()`` lists them, ``get_scheduler`` builds one."""

from __future__ import annotations

import inspect

from npuweave.errors import ConfigError, unknown_name
from npuweave.schedule.aimt import AIMT
from npuweave.schedule.base import Policy
from npuweave.schedule.compute_only import ComputeOnly
from npuweave.schedule.fair import Fair
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.memory_only import MemoryOnly
from npuweave.schedule.sequential import Sequential

_POLICIES: dict[str, tuple[type, str]] = {
    "layerweaver": (Layerweaver, "greedy layer interleaving that minimizes PE and DRAM idle "
                                 "time (thesis IV.2-IV.4)"),
    "sequential": (Sequential, "one request at a time, first come first served"),
    "compute-only": (ComputeOnly, "only the compute-intensive models, one request at a time"),
    "memory-only": (MemoryOnly, "only the memory-intensive models, one request at a time"),
    "fair": (Fair, "whole requests, alternating so each model gets an equal share of NPU time"),
    "aimt": (AIMT, "AI-MT-like: keeps the fetch-ahead distance in a band (thresholds low, "
                   "high); random otherwise"),
}


def schedulers() -> dict[str, str]:
    """Registered layer-wise policies: name -> one-line description.

    Examples
    --------
    >>> sorted(schedulers())
    ['aimt', 'compute-only', 'fair', 'layerweaver', 'memory-only', 'sequential']
    """
    return {name: desc for name, (_, desc) in _POLICIES.items()}


def get_scheduler(name: str, **opts: object) -> Policy:
    """A fresh policy registered as ``name``; ``opts`` go to its constructor (``seed`` is
    accepted by all).

    Examples
    --------
    >>> get_scheduler("aimt", low=0.05, high=0.4).high
    0.4
    """
    try:
        cls = _POLICIES[name][0]
    except KeyError:
        raise unknown_name("scheduler", name, list(_POLICIES)) from None
    params = inspect.signature(cls).parameters
    bad = sorted(k for k in opts if k not in params)
    if bad:
        valid = ", ".join(sorted(params)) or "none"
        raise ConfigError(f"scheduler {name!r} has no option {', '.join(map(repr, bad))}; "
                          f"valid options: {valid}")
    return cls(**opts)


def register_scheduler(name: str, cls: type, description: str) -> None:
    """Add (or replace) a policy class under ``name``."""
    _POLICIES[name] = (cls, description)
