"""Typed, immutable model of a Gemini multi-core scheduler IR file.

One frozen dataclass per kind of JSON object. Field names follow the file where they are
clear; boxes (``lower``/``upper`` pairs) become :class:`Box`. Keys the model does not know
are kept in ``extra`` (frozen), so writing back what was read gives an equivalent JSON.
Only :mod:`npuweave.compile.gemini.reader` builds these objects from raw dicts.

Coordinates are 4-D and inclusive: feature maps are ``[N, C, H, W]``; weights are
``[0, K, C, R*S]`` (the kernel window is flattened into the last axis, see docs/GEMINI_IR.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: frozen leftovers of a JSON object: ((key, frozen value), ...)
Extra = tuple[tuple[str, Any], ...]

#: the IR's node types, the names ``npuweave.compile.gemini`` re-exports
__all__ = ["IR", "Box", "BufferEntry", "Destination", "DramLoad", "DramStore", "Ifmap", "Ofmap",
           "Source", "Tile", "Weight", "WeightBufferEntry", "Workload"]


@dataclass(frozen=True, slots=True)
class Box:
    """An inclusive 4-D box ``lower <= x <= upper``."""

    lower: tuple[int, ...]
    upper: tuple[int, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        """Extent per axis (``upper - lower + 1``); may be <= 0 for an inverted box."""
        return tuple(u - lo + 1 for lo, u in zip(self.lower, self.upper))

    @property
    def ordered(self) -> bool:
        return all(lo <= u for lo, u in zip(self.lower, self.upper))

    @property
    def volume(self) -> int:
        vol = 1
        for n in self.shape:
            vol *= max(n, 0)
        return vol

    def contains(self, other: Box) -> bool:
        """True when ``other`` lies entirely inside this box."""
        return all(
            a <= c and d <= b
            for a, b, c, d in zip(self.lower, self.upper, other.lower, other.upper)
        )

    def shifted(self, offset: tuple[int, ...]) -> Box:
        return Box(
            tuple(x + o for x, o in zip(self.lower, offset)),
            tuple(x + o for x, o in zip(self.upper, offset)),
        )

    def __str__(self) -> str:
        return f"{list(self.lower)}..{list(self.upper)}"


@dataclass(frozen=True, slots=True)
class Destination:
    """Where a tensor goes: ``type`` is ``"core"`` or ``"DRAM"`` (DRAM has no workload id)."""

    type: str
    core_id: int
    workload_id: int | None = None
    layer_name: str | None = None
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class DramLoad:
    """An entry of ``["-1"]["out"]``: data read from DRAM (weights, input or spilled fmaps)."""

    transfer_id: int
    type: str
    box: Box
    size: int
    destinations: tuple[Destination, ...]
    related_ifmap: tuple[int, ...] | None = None
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class DramStore:
    """An entry of ``["-1"]["in"]``: an ofmap written to DRAM by ``(core_id, workload_id)``."""

    transfer_id: int
    core_id: int
    workload_id: int
    layer_name: str
    box: Box
    related_ofmap: tuple[int, ...] | None = None
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class Ifmap:
    """One input feature map of a workload (several transfer ids when it is stitched)."""

    box: Box
    size: int
    transfer_ids: tuple[int, ...]
    align: int
    bitwidth: int
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class Ofmap:
    """One output of a workload and its destinations (other workloads and/or DRAM)."""

    box: Box
    size: int
    transfer_id: int
    destinations: tuple[Destination, ...]
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class Weight:
    box: Box
    size: int
    transfer_ids: tuple[int, ...]
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class Source:
    """Where part of an L2 buffer tensor comes from: ``"DRAM"`` or a producing ``"core"``."""

    type: str
    core_id: int
    box: Box
    size: int
    transfer_id: int
    layer_name: str | None = None
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class BufferEntry:
    """A tensor in the L2 snapshot taken before a workload starts.

    Entries of type ``"ofmap"`` describe an outgoing ofmap being sent to DRAM
    (``start_send``); they carry no transfer ids, sources or ``newly_added`` flag.
    """

    tensor_id: int
    tensor_order: int
    type: str
    address: int
    size: int
    box: Box
    align: int
    bitwidth: int
    transfer_ids: tuple[int, ...] | None = None
    sources: tuple[Source, ...] | None = None
    newly_added: bool | None = None
    cur_wl_ifmap: bool | None = None
    layer_name: str | None = None
    start_send: bool | None = None
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class WeightBufferEntry:
    """A weight slice in the WL0/WL1 weight buffer, read from ``"DDR"`` or the L2 (``"CORE"``)."""

    address: int
    size: int
    transfer_ids: tuple[int, ...]
    source: str
    layer_name: str
    align: int
    bitwidth: int
    tensor_order: int | None = None
    box: Box | None = None
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class Tile:
    """One intra-core tile from ``tile_info`` (``ifmap2`` is the second operand of a binary op)."""

    name: str
    ofmap: Box
    ifmap: Box
    padding: tuple[int, ...]
    time_pred: float
    ifmap2: Box | None = None
    layer_name: str | None = None
    cut_mode: str | None = None
    loop_order: str | None = None
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class Workload:
    """A compute tile on one core with its inputs, outputs and buffer snapshots."""

    core_id: int
    workload_id: int
    layer_name: str
    layer_type: str
    box: Box
    time: int
    ifmaps: tuple[Ifmap, ...]
    ofmaps: tuple[Ofmap, ...]
    ofmap_size: int
    buffer: tuple[BufferEntry, ...]
    ring_buffer: tuple[tuple[int, int], ...]
    tiles: tuple[Tile, ...]
    padding: tuple[int, ...]
    weight: Weight | None = None
    weight_buffer: tuple[WeightBufferEntry, ...] | None = None
    #: the key the weight-buffer snapshot was read under ("wl1_buffer" in the published
    #: files, "wl0_buffer" in the format document); "" when the workload has none
    weight_buffer_key: str = ""
    extra: Extra = ()


@dataclass(frozen=True, slots=True)
class IR:
    """A whole IR file: DRAM loads and stores, and the workload list of every core."""

    cores: tuple[tuple[int, tuple[Workload, ...]], ...]
    loads: tuple[DramLoad, ...]
    stores: tuple[DramStore, ...]
    buffersize: int
    top_batch_cut: int
    xlen: int
    ylen: int
    dram_extra: Extra = ()
    extra: Extra = ()

    @property
    def core_ids(self) -> tuple[int, ...]:
        return tuple(core for core, _ in self.cores)

    def workloads(self, core: int | None = None) -> tuple[Workload, ...]:
        """The workloads of one core in file order, or of all cores (core by core)."""
        if core is not None:
            return dict(self.cores)[core]
        return tuple(w for _, wls in self.cores for w in wls)


class FrozenDict(tuple):
    """A JSON object frozen as a tuple of ``(key, value)`` pairs (keeps it apart from lists)."""

    __slots__ = ()


def freeze(value: Any) -> Any:
    """Make a JSON value hashable: lists become tuples, dicts :class:`FrozenDict`."""
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return FrozenDict((k, freeze(v)) for k, v in value.items())
    return value


def thaw(value: Any) -> Any:
    """Inverse of :func:`freeze`."""
    if isinstance(value, FrozenDict):
        return {k: thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value
