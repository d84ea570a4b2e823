"""Look-up tables over an IR (who produces each transfer id, layer extents, JSON paths).

Built once per validation or simulation so every check stays a linear scan.
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


class Index:
    """Maps from transfer ids, workload ids and layer names to the objects of one IR."""

    def __init__(self, ir: IR) -> None:
        self.ir = ir
        self.positions: dict[tuple[int, int], tuple[int, Workload]] = {}
        self.producers: dict[int, list[Producer]] = defaultdict(list)
        layer_boxes: dict[str, list[Box]] = defaultdict(list)
        for core, wls in ir.cores:
            for i, w in enumerate(wls):
                self.positions.setdefault((core, w.workload_id), (i, w))
                layer_boxes[w.layer_name].append(w.box)
                for j, o in enumerate(w.ofmaps):
                    self.producers[o.transfer_id].append(Producer(core, i, w, j, o))
        self.layer_extent: dict[str, Box] = {
            name: b for name, boxes in layer_boxes.items() if (b := bounding(boxes)) is not None
        }
        self.loads: dict[int, list[tuple[int, DramLoad]]] = defaultdict(list)
        for i, e in enumerate(ir.loads):
            self.loads[e.transfer_id].append((i, e))
        self.stores: dict[int, list[tuple[int, DramStore]]] = defaultdict(list)
        for i, e in enumerate(ir.stores):
            self.stores[e.transfer_id].append((i, e))

    def known(self, tid: int) -> bool:
        """True when ``tid`` is defined by a DRAM load or by some workload's ofmap."""
        return tid in self.loads or tid in self.producers

    def extent(self, tid: int) -> Box | None:
        """The full tensor a transfer id is cut from: the producing layer's ofmap extent, or
        the DRAM load's own box."""
        if tid in self.producers:
            return self.layer_extent[self.producers[tid][0].workload.layer_name]
        if tid in self.loads:
            return self.loads[tid][0][1].box
        return None

    def load_of(self, tid: int) -> DramLoad | None:
        entries = self.loads.get(tid)
        return entries[0][1] if entries else None

    def producer_of(self, tid: int) -> Producer | None:
        entries = self.producers.get(tid)
        return entries[0] if entries else None
