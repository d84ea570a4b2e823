"""Look-up tables over an IR (who produces each transfer id, layer extents, JSON paths).

Built once per validation or simulation so every check stays a linear scan.

Coordinate frames (docs/GEMINI_IR.md, "Split workloads"): a workload's ``workload`` box,
DRAM boxes and tiles are absolute (whole-layer coordinates), but the ofmap of a workload that
covers only part of its layer is written tile-local (its lower corner moved to the origin),
and the ifmap / L2 boxes that name a transfer id use either frame. :meth:`Index.absolute`
gives the absolute box of every transfer id; :meth:`Index.readings` the absolute readings of
a box that names some ids.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from npuweave.compile.gemini.geometry import bounding
from npuweave.compile.gemini.model import IR, Box, DramLoad, DramStore, Ofmap, Workload
from npuweave.compile.gemini.reader import child_path


@dataclass(frozen=True, slots=True)
class Violation:
    """One consistency problem: where (JSON path), which check, and what is wrong."""

    path: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: [{self.check}] {self.message}"


def core_path(core: int) -> str:
    return child_path("$", str(core))


def workload_path(core: int, index: int) -> str:
    return f"{core_path(core)}[{index}]"


LOADS_PATH = '$["-1"].out'
STORES_PATH = '$["-1"].in'


@dataclass(frozen=True, slots=True)
class Producer:
    """The workload (and its position) whose ofmap defines a transfer id."""

    core: int
    index: int
    workload: Workload
    ofmap_index: int
    ofmap: Ofmap


def to_absolute(w: Workload, box: Box) -> Box:
    """A box written by workload ``w`` in absolute coordinates: as is when it lies inside the
    workload, else shifted by the workload's lower corner (the tile-local convention)."""
    if w.box.contains(box):
        return box
    shifted = box.shifted(w.box.lower)
    return shifted if w.box.contains(shifted) else box


class Index:
    """Maps from transfer ids, workload ids and layer names to the objects of one IR."""

    def __init__(self, ir: IR) -> None:
        self.ir = ir
        self.positions: dict[tuple[int, int | None], tuple[int, Workload]] = {}
        self.producers: dict[int, list[Producer]] = defaultdict(list)
        layer_boxes: dict[str, list[Box]] = defaultdict(list)
        self.layer_lowers: dict[str, set[tuple[int, ...]]] = defaultdict(set)
        for core, wls in ir.cores:
            for i, w in enumerate(wls):
                self.positions.setdefault((core, w.workload_id), (i, w))
                layer_boxes[w.layer_name].append(w.box)
                self.layer_lowers[w.layer_name].add(w.box.lower)
                for j, o in enumerate(w.ofmaps):
                    self.producers[o.transfer_id].append(Producer(core, i, w, j, o))
        self.layer_extent: dict[str, Box] = {
            name: b for name, boxes in layer_boxes.items() if (b := bounding(boxes)) is not None
        }
        self.loads: dict[int, list[tuple[int, DramLoad]]] = defaultdict(list)
        for i, e in enumerate(ir.loads):
            self.loads[e.transfer_id].append((i, e))
        self.stores: dict[int, list[tuple[int, DramStore]]] = defaultdict(list)
        for k, st in enumerate(ir.stores):
            self.stores[st.transfer_id].append((k, st))
        self._absolute: dict[int, Box] = {}
        for tid, prods in self.producers.items():
            self._absolute[tid] = to_absolute(prods[0].workload, prods[0].ofmap.box)
        for tid, entries in self.loads.items():
            self._absolute.setdefault(tid, entries[0][1].box)
        self._frames: dict[tuple[int, ...], tuple[Box, tuple[int, ...]] | None] = {}

    def known(self, tid: int) -> bool:
        """True when ``tid`` is defined by a DRAM load or by some workload's ofmap."""
        return tid in self.loads or tid in self.producers

    def absolute(self, tid: int) -> Box | None:
        """The absolute box of the tensor a transfer id names (producer ofmap or DRAM load)."""
        return self._absolute.get(tid)

    def frame(self, tids: tuple[int, ...]) -> tuple[Box, tuple[int, ...]] | None:
        """(absolute bounding box of ``tids``, its lower corner), None when no id is known."""
        if tids not in self._frames:
            span = bounding(b for t in tids if (b := self._absolute.get(t)) is not None)
            self._frames[tids] = None if span is None else (span, span.lower)
        return self._frames[tids]

    def readings(self, box: Box, tids: tuple[int, ...]) -> list[Box]:
        """The absolute boxes ``box`` may mean when it names ``tids``: itself when it lies in
        the ids' absolute span, the box moved by the span's lower corner when it lies in the
        span's local frame. Empty when neither fits (a box outside its tensor); ``[box]`` when
        no id is known (that is the dangling check's business)."""
        fr = self.frame(tids)
        if fr is None:
            return [box]
        span, origin = fr
        out = [box] if span.contains(box) else []
        if any(origin):
            moved = box.shifted(origin)
            if span.contains(moved):
                out.append(moved)
        return out

    def in_layer(self, box: Box, layer: str) -> bool:
        """True when ``box`` lies in ``layer``'s extent as is or moved by a workload's corner."""
        ext = self.layer_extent.get(layer)
        if ext is None or ext.contains(box):
            return True
        return any(ext.contains(box.shifted(lo)) for lo in self.layer_lowers[layer])

    def load_of(self, tid: int) -> DramLoad | None:
        entries = self.loads.get(tid)
        return entries[0][1] if entries else None

    def producer_of(self, tid: int) -> Producer | None:
        entries = self.producers.get(tid)
        return entries[0] if entries else None
