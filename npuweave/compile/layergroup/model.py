"""The nouns of the layer-group compiler: ``Buffer``, ``LayerGroup``, ``GroupPlan``.

A ``LayerGroup`` is a run of consecutive layers that executes slice by slice out of local
memory (LMEM): only its inputs, its outputs and its weights cross the DRAM interface. A
``GroupPlan`` is the partition of a whole model into groups, together with the layer-by-layer
baseline it is compared against. Everything here is frozen data; the passes live in the
sibling modules (``slicing``, ``backward``, ``timestep``, ``allocate``, ``search``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class BufferKind(str, Enum):
    """What an LMEM buffer holds (the seed's three categories)."""

    ACTIVATION = "activation"
    WEIGHT = "weight"
    SCRATCH = "scratch"

    def __str__(self) -> str:
        return self.value


class GroupStatus(str, Enum):
    """``grouped``: runs out of LMEM. ``ungrouped``: runs alone with DRAM operands."""

    GROUPED = "grouped"
    UNGROUPED = "ungrouped"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Buffer:
    """One LMEM rectangle: ``bytes`` tall, live over timesteps ``[start, end]`` (inclusive).

    ``uses`` are the compute timesteps that read or write the buffer; ``address`` is -1 until
    ``allocate`` places it.
    """

    id: int
    name: str
    kind: BufferKind
    bytes: int
    start: int
    end: int
    uses: tuple[int, ...] = ()
    address: int = -1

    @property
    def end_address(self) -> int:
        return self.address + self.bytes

    def live_at(self, step: int) -> bool:
        return self.start <= step <= self.end


@dataclass(frozen=True, slots=True)
class LayerGroup:
    """A run of layers ``layers`` (model indices ``first .. first+len-1``) and how it runs.

    Attributes
    ----------
    layers : layer names, in model order.
    first : model index of the first layer.
    status : grouped (in LMEM) or ungrouped (``reason`` says why).
    n_slices, n_per_slice : the batch is cut into ``n_slices`` pieces of at most
        ``n_per_slice`` samples.
    h_slices : each N slice is cut into this many pieces along the output height.
    timesteps : length of one slice's program (compute steps plus prologue and epilogue).
    buffers : the placed LMEM buffers of one slice's program (reused by every slice).
    inputs, outputs : tensors (producer layer names, ``@input`` for the graph input) loaded
        from and stored to DRAM.
    dram_bytes : all DRAM traffic of the group (weights once, inputs with halos, outputs).
    seconds : estimated time (per slice max of compute and DMA, plus fill and drain).
    baseline_dram_bytes, baseline_seconds : the same layers run one by one.
    """

    layers: tuple[str, ...]
    first: int
    status: GroupStatus
    reason: str = ""
    n_slices: int = 1
    n_per_slice: int = 1
    h_slices: int = 1
    timesteps: int = 0
    buffers: tuple[Buffer, ...] = ()
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    dram_bytes: int = 0
    seconds: float = 0.0
    baseline_dram_bytes: int = 0
    baseline_seconds: float = 0.0

    @property
    def lmem_peak(self) -> int:
        """Highest LMEM address used (bytes)."""
        return max((b.end_address for b in self.buffers), default=0)

    @property
    def slices(self) -> int:
        return self.n_slices * self.h_slices

    @property
    def dram_saved(self) -> int:
        return self.baseline_dram_bytes - self.dram_bytes


@dataclass(frozen=True, slots=True)
class GroupPlan:
    """The partition of a model into ``LayerGroup``s, found by ``method``."""

    model: str
    npu: str
    batch: int
    method: str
    clock_hz: float
    lmem_bytes: int
    lmem_banks: int
    groups: tuple[LayerGroup, ...]

    @property
    def dram_bytes(self) -> int:
        return sum(g.dram_bytes for g in self.groups)

    @property
    def baseline_dram_bytes(self) -> int:
        return sum(g.baseline_dram_bytes for g in self.groups)

    @property
    def seconds(self) -> float:
        return sum(g.seconds for g in self.groups)

    @property
    def baseline_seconds(self) -> float:
        return sum(g.baseline_seconds for g in self.groups)

    @property
    def cycles(self) -> int:
        return round(self.seconds * self.clock_hz)

    @property
    def baseline_cycles(self) -> int:
        return round(self.baseline_seconds * self.clock_hz)

    @property
    def ungrouped(self) -> tuple[LayerGroup, ...]:
        return tuple(g for g in self.groups if g.status is GroupStatus.UNGROUPED)
