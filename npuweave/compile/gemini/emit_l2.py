"""The L2 side of the emitter: which tensors each core holds when, and their snapshots.

Every tensor on a core lives over a range of that core's workload positions: a workload's
own output from the workload to its last consumer on the same core; a piece received from
another core or a DRAM load from its first to its last consumer; a weight from its first to
its last use. :meth:`L2Builder.snapshots` places them (``l2alloc.allocate``) and writes the
``buffer`` list of every workload.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from npuweave.compile.gemini.geometry import bounding, fmap_bytes
from npuweave.compile.gemini.l2alloc import Live, allocate
from npuweave.compile.gemini.model import Box, BufferEntry, Source


@dataclass
class _Entry:
    kind: str  # own | recv | dram | weight
    tid: int
    box: Box
    start: int
    end: int
    source_core: int
    layer_name: str | None = None
    order: int = -1
    size: int = 0

    def bytes(self) -> int:
        return self.size if self.kind == "weight" else fmap_bytes(self.box, 8, 8)

    def source(self) -> Source:
        if self.kind in ("dram", "weight"):
            return Source("DRAM", -1, self.box, self.bytes(), self.tid)
        return Source("core", self.source_core, self.box, self.bytes(), self.tid, self.layer_name)


class L2Builder:
    """Collects the tensors of every core, then writes the per-workload snapshots."""

    def __init__(self, cores: int) -> None:
        self.entries: dict[int, dict[tuple[str, int], _Entry]] = {c: {} for c in range(cores)}
        self.reads: dict[tuple[int, int], set[int]] = defaultdict(set)

    def _touch(self, core: int, key: tuple[str, int], pos: int) -> _Entry:
        e = self.entries[core][key]
        e.start, e.end = min(e.start, pos), max(e.end, pos)
        return e

    def own(self, core: int, tid: int, box: Box, layer: str, pos: int) -> None:
        """A workload's output, held on its core from the workload on."""
        self.entries[core][("own", tid)] = _Entry("own", tid, box, pos, pos, core, layer)

    def keep(self, core: int, tid: int, pos: int) -> None:
        """A consumer at ``pos`` on the producer's own core reads ``tid``."""
        self._touch(core, ("own", tid), pos)
        self.reads[(core, pos)].add(tid)

    def receive(self, core: int, tid: int, piece: Box, layer: str, src: int, pos: int) -> None:
        """``piece`` of ``tid`` arrives over the mesh from core ``src`` for the workload at ``pos``."""
        key = ("recv", tid)
        if key in self.entries[core]:
            e = self._touch(core, key, pos)
            e.box = bounding([e.box, piece]) or piece
        else:
            self.entries[core][key] = _Entry("recv", tid, piece, pos, pos, src, layer)
        self.reads[(core, pos)].add(tid)

    def dram(self, core: int, tid: int, box: Box, pos: int, order: int) -> None:
        """A DRAM fmap load for the workload at ``pos``."""
        self.entries[core][("dram", tid)] = _Entry("dram", tid, box, pos, pos, -1, order=order)
        self.reads[(core, pos)].add(tid)

    def weight(self, core: int, tid: int, box: Box, size: int, layer: str, pos: int) -> None:
        """A weight used by the workload at ``pos`` (kept between uses on the core)."""
        key = ("weight", tid)
        if key in self.entries[core]:
            self._touch(core, key, pos)
        else:
            self.entries[core][key] = _Entry("weight", tid, box, pos, pos, -1, layer, tid, size)

    def snapshots(self, capacity: int,
                  n_loads: int) -> dict[tuple[int, int], tuple[BufferEntry, ...]]:
        """(core, position) -> the L2 snapshot before that workload starts."""
        out: dict[tuple[int, int], list[BufferEntry]] = defaultdict(list)
        tensor_id = 0
        for core, entries in self.entries.items():
            lives = [Live(key, e.bytes(), e.start, e.end) for key, e in entries.items()]
            address = allocate(lives, capacity, f"core {core} L2")
            for key, e in sorted(entries.items(), key=lambda kv: (kv[1].start, address[kv[0]])):
                for pos in range(e.start, e.end + 1):
                    out[(core, pos)].append(self._entry(core, e, tensor_id, address[key], pos,
                                                        n_loads))
                tensor_id += 1
        return {k: tuple(v) for k, v in out.items()}

    def _entry(self, core: int, e: _Entry, tensor_id: int, address: int, pos: int,
               n_loads: int) -> BufferEntry:
        kind = "weight" if e.kind == "weight" else "ifmap"
        return BufferEntry(
            tensor_id=tensor_id, tensor_order=e.order if e.order >= 0 else n_loads, type=kind,
            address=address, size=e.bytes(), box=e.box, align=8, bitwidth=8,
            transfer_ids=(e.tid,), sources=(e.source(),), newly_added=pos == e.start,
            cur_wl_ifmap=True if e.tid in self.reads.get((core, pos), ()) else None,
            layer_name=e.layer_name if kind == "weight" else None,
        )
