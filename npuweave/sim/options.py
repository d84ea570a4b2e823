"""Build the ``Arrivals`` of a run from its parsed arrival options.

The option texts are parsed by ``npuweave.fileio.flags`` (one parser per kind of value, in
``npuweave.fileio.values``); nothing here reads text. ``Batching`` and the parsers are
re-exported for the callers that imported them from here.
"""

from __future__ import annotations

from typing import Any

from npuweave.errors import ConfigError
from npuweave.fileio.flags import (
    ARRIVAL_KINDS,
    ArrivalFlags,
    ArrivalSpec,
    Batching,
    parse_arrival_flags,
    parse_arrivals,
    parse_batching,
    parse_deadlines,
    parse_duration,
    parse_priorities,
    parse_qps,
    parse_seconds,
)

__all__ = ["ARRIVAL_KINDS", "ArrivalFlags", "ArrivalSpec", "Batching", "build_arrivals",
           "parse_arrival_flags", "parse_arrivals", "parse_batching", "parse_deadlines",
           "parse_duration", "parse_priorities", "parse_qps", "parse_seconds"]


def build_arrivals(flags: ArrivalFlags, models: list[str], seed: int,
                   notes: list[str] | None = None) -> Any:
    """The ``Arrivals`` of parsed arrival options: Poisson, LoadGen's Server schedule, or a
    trace file (whose notes, e.g. how bare times were read, go to ``notes``).

    Examples
    --------
    >>> a = build_arrivals(parse_arrival_flags("poisson", 1, "100", "50ms"), ["resnet50"], 0)
    >>> a.models
    ('resnet50',)
    """
    from npuweave.sim import arrivals as arr

    if flags.spec.kind == "trace":
        from npuweave.sim.traces import from_trace

        return from_trace(flags.spec.path, models, notes=notes)  # type: ignore[arg-type]
    if flags.qps is None or flags.duration_s is None:
        raise ConfigError(f"--arrivals {flags.spec.kind} needs --qps and --duration")
    gen = arr.poisson if flags.spec.kind == "poisson" else arr.loadgen_server
    return gen(models, flags.qps, flags.duration_s, seed, priority=flags.priority,
               deadline_s=flags.deadline_s)
