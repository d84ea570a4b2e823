"""The one registry of arrival processes: how requests come to the NPU.

``ARRIVAL_PROCESSES`` names each once: ``closed`` (``ClosedLoop``, defined here: each stream
issues its next request when the last one finishes, thesis IV.5.B), and the open-loop
``poisson``, ``loadgen-server`` (``npuweave.sim.arrivals``) and ``trace``
(``npuweave.sim.traces``). ``npuweave.simulate`` takes a ``ClosedLoop`` or an ``Arrivals``;
``build_arrivals`` builds the open-loop ones from parsed options (``npuweave.fileio.flags``,
whose ``ARRIVAL_KINDS`` lists the same names: a test keeps the two equal, since ``fileio`` may
not import ``sim``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from npuweave.errors import ConfigError, unknown_name
from npuweave.fileio.flags import ArrivalFlags
from npuweave.metrics.request_index import RequestIndex
from npuweave.schedule.plan import first_issue, reissues
from npuweave.sim.arrivals import Arrivals, loadgen_server, poisson
from npuweave.sim.traces import from_trace

__all__ = ["ARRIVAL_PROCESSES", "ArrivalProcess", "ClosedLoop", "arrival_process", "build_arrivals"]


@dataclass(frozen=True, slots=True)
class ClosedLoop:
    """The closed loop (thesis IV.5.B): ``k`` streams, one per tenant, each issue their first
    request at time 0 and request ``r + 1`` the moment request ``r`` finishes, for ``requests``
    requests per stream, or, with ``window_s``, while the previous request finished before the
    window ends (the window wins when both are given; requests already issued finish, so the
    makespan may pass the window).

    Who knows the finish: ``plan`` and the serving simulator learn it when a request's last
    unit is dispatched (the predicted finish, which the engine reproduces exactly), as the
    thesis's scheduler appends queued requests just before the running ones complete; the
    next request's units then join the candidate group at once. The rule itself is
    ``npuweave.schedule.plan.first_issue``/``reissues`` (``plan`` applies it and ``schedule``
    may not import ``sim``); ``npuweave.schedule.kernel`` compiles it from the two fields.

    Examples
    --------
    >>> loop = ClosedLoop(requests=2)
    >>> loop.reissue(0, 3.0), loop.reissue(1, 6.0)
    (True, False)
    >>> ClosedLoop(window_s=5.0).reissue(7, 4.9)
    True
    """

    requests: int | None = None
    window_s: float | None = None

    def first(self) -> bool:
        """Whether the streams issue their first request at time 0."""
        return first_issue(self.window_s)

    def reissue(self, index: int, finish_s: float) -> bool:
        """Whether request ``index + 1`` is issued at ``finish_s``, when request ``index``
        of the same stream finishes."""
        return reissues(self.requests, self.window_s, index, finish_s)

    @staticmethod
    def common_window(requests: Iterable[Any]) -> tuple[float, float]:
        """The measurement window of a closed-loop run, from its request records (anything
        with ``tenant`` and ``finish_s``): from 0, when every stream issues its first request,
        until the first stream stops issuing. A stream issues its next request the moment
        one finishes, so it stops at the finish of its last request; after that the other
        streams run alone, which would dilute a measurement of sharing. ``(0.0, 0.0)`` when
        nothing finished.

        Pass it (or its value) as the ``window`` of ``npuweave.metrics`` functions (the
        metrics package may not import ``sim``, so callers pass it: ``experiments.compare``).

        Examples
        --------
        >>> from types import SimpleNamespace as R
        >>> ClosedLoop.common_window([R(tenant="a", finish_s=3.0), R(tenant="a", finish_s=6.0),
        ...                           R(tenant="b", finish_s=5.0)])
        (0.0, 5.0)
        """
        last: dict[Any, float] = {}
        if isinstance(requests, RequestIndex):  # the same latest finishes, from its arrays
            last = requests.last_finish()
            requests = ()
        for r in requests:
            f = r.finish_s
            if f > last.get(r.tenant, float("-inf")):
                last[r.tenant] = f
        return 0.0, min(last.values(), default=0.0)


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
