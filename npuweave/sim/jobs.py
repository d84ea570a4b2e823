"""The engine's work records: ``Unit`` (one command for the NPU) and ``Job`` (a unit and the
request it serves), with the ``Source`` protocol the engine pulls them from
(``npuweave.sim.engine``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol


class Kind(IntEnum):
    """What a unit asks of the hardware."""

    LOAD = 0
    COMPUTE = 1
    STORE = 2


@dataclass(frozen=True, slots=True)
class Unit:
    """One command for the NPU; built once per model unit and reused by every request.

    Attributes
    ----------
    kind : ``Kind.LOAD``, ``COMPUTE`` or ``STORE``.
    tenant : index of the model it belongs to.
    index : the model's unit index (layer or weight tile); -1 for a checkpoint store/restore.
    nbytes : bytes moved (LOAD, STORE).
    hold : weight-buffer bytes it claims (LOAD) or frees when its computation ends (COMPUTE).
    seconds : PE seconds (COMPUTE), or the DRAM latency paid once per transfer (LOAD, STORE).

    Examples
    --------
    >>> Unit(Kind.COMPUTE, 0, 3, 0, 64, 2e-6).kind.name
    'COMPUTE'
    """

    kind: Kind
    tenant: int
    index: int
    nbytes: int = 0
    hold: int = 0
    seconds: float = 0.0


Job = tuple[Unit, int]  # a unit and the id of the request it serves


class Source(Protocol):
    def next(self, now: float) -> Job | None: ...


Hook = Callable[[Unit, int, float], None]
