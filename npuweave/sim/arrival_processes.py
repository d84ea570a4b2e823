"""The one registry of arrival processes: how requests come to the NPU.

``ARRIVAL_PROCESSES`` names each once: ``closed`` (the closed loop: each stream issues its next
request when the last one finishes, thesis IV.5.B; ``ClosedLoop`` lives in
``npuweave.schedule.closedloop`` because the planner and the compiled kernel apply its rule
and ``schedule`` may not import ``sim``), and the open-loop ``poisson``, ``loadgen-server``
(``npuweave.sim.arrivals``) and ``trace`` (``npuweave.sim.traces``). ``npuweave.simulate``
takes a ``ClosedLoop`` or an ``Arrivals``; ``build_arrivals`` builds the open-loop ones from
parsed options (``npuweave.fileio.flags``, whose ``ARRIVAL_KINDS`` lists the same names: a
test keeps the two equal, since ``fileio`` may not import ``sim``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from npuweave.errors import ConfigError, unknown_name
from npuweave.fileio.flags import ArrivalFlags
from npuweave.schedule.closedloop import ClosedLoop
from npuweave.sim.arrivals import Arrivals, loadgen_server, poisson
from npuweave.sim.traces import from_trace

__all__ = ["ARRIVAL_PROCESSES", "ArrivalProcess", "arrival_process", "build_arrivals"]


def _trace(path: str, models: Sequence[str], notes: list[str] | None = None) -> Arrivals:
    return from_trace(path, list(models), notes=notes)


@dataclass(frozen=True, slots=True)
class ArrivalProcess:
    """A registered arrival process: its name, whether requests arrive on their own clock
    (``open_loop``) or when earlier ones finish, one line on what it is, and its builder."""

    name: str
    open_loop: bool
    summary: str
    build: Callable[..., Any]


#: Every arrival process by name.
ARRIVAL_PROCESSES: dict[str, ArrivalProcess] = {p.name: p for p in (
    ArrivalProcess("closed", False, "one stream per model; the next request is issued when "
                   "the last one finishes (thesis IV.5.B): ClosedLoop(requests, window_s)",
                   ClosedLoop),
    ArrivalProcess("poisson", True, "independent Poisson processes per model: "
                   "poisson(models, qps, duration_s, seed)", poisson),
    ArrivalProcess("loadgen-server", True, "MLPerf LoadGen's Server-scenario schedule, "
                   "bit-identical: loadgen_server(models, qps, duration_s, seed)",
                   loadgen_server),
    ArrivalProcess("trace", True, "a CSV or JSON file of requests: trace(path, models)",
                   _trace),
)}


def arrival_process(name: str) -> ArrivalProcess:
    """The registered arrival process ``name``.

    Examples
    --------
    >>> arrival_process("closed").build(requests=2)
    ClosedLoop(requests=2, window_s=None)
    >>> len(arrival_process("poisson").build(("resnet50",), (100.0,), 0.1, 0)) > 0
    True
    """
    if name not in ARRIVAL_PROCESSES:
        raise unknown_name("arrival process", name, list(ARRIVAL_PROCESSES))
    return ARRIVAL_PROCESSES[name]


def build_arrivals(flags: ArrivalFlags, models: list[str], seed: int,
                   notes: list[str] | None = None) -> Arrivals:
    """The open-loop ``Arrivals`` of parsed arrival options: Poisson, LoadGen's Server
    schedule, or a trace file (whose notes, e.g. how bare times were read, go to ``notes``).

    Examples
    --------
    >>> from npuweave.fileio.flags import parse_arrival_flags
    >>> a = build_arrivals(parse_arrival_flags("poisson", 1, "100", "50ms"), ["resnet50"], 0)
    >>> a.models
    ('resnet50',)
    """
    process = arrival_process(flags.spec.kind)
    if not process.open_loop:
        raise ConfigError(f"--arrivals {flags.spec.kind}: not an open-loop process; closed "
                          "loops run with 'npuweave schedule' or simulate(ClosedLoop(...))")
    if flags.spec.kind == "trace":
        return process.build(flags.spec.path, models, notes)
    if flags.qps is None or flags.duration_s is None:
        raise ConfigError(f"--arrivals {flags.spec.kind} needs --qps and --duration")
    return process.build(models, flags.qps, flags.duration_s, seed, priority=flags.priority,
                         deadline_s=flags.deadline_s)
