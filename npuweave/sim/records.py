"""What a simulation leaves behind: busy intervals per resource, and one record per request.

These two records are the contract between the engine (``npuweave.sim``) and everything that
reads its results (``npuweave.metrics``, ``npuweave.report``). Times are seconds.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Interval:
    """A resource busy with one scheduling unit of one tenant's request.

    ``resource`` is ``"PE"`` or ``"DRAM"`` for the single-NPU engine (``"core<i>"`` and the like
    for multi-core replays). A DRAM fetch that proceeds in parts gives one interval per part.
    """

    resource: str
    tenant: str
    request: int
    unit: str
    start_s: float
    end_s: float

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request's life: issued at ``arrival_s``, first work at ``start_s``, done at ``finish_s``.

    ``deadline_s`` is absolute (None when the request has no deadline); ``batch`` is the number
    of inputs served by this request.
    """

    tenant: str
    model: str
    index: int
    arrival_s: float
    start_s: float
    finish_s: float
    batch: int = 1
    deadline_s: float | None = None

    @property
    def latency_s(self) -> float:
        return self.finish_s - self.arrival_s
