"""What a simulation leaves behind: busy intervals per resource, and one record per request.

These two records are the contract between the engine (``npuweave.sim``) and everything that
reads its results (``npuweave.metrics``, ``npuweave.report``). Times are seconds.
``RequestRecord`` is defined once, in ``npuweave.metrics.common`` (metrics may not import
``sim``), and re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass

from npuweave.metrics.common import RequestRecord

__all__ = ["Interval", "RequestRecord"]


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
