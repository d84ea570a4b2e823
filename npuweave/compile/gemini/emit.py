"""Write a :class:`~npuweave.compile.gemini.mapping.Mapping` as a Gemini IR (the published format).

What each workload gets (docs/GEMINI_IR.md, "Emitting"):

* ``ifmap``: per input tensor the box it reads, absolute, naming the transfer id of every
  producer workload it overlaps (or of the DRAM loads that bring it);
* ``ofmap``: its output, **tile-local** as the published files write split workloads, sent to
  each consumer workload (``core``) and, at a group boundary or the network output, to DRAM;
* ``weight``: one DRAM load per layer (per K slice), multicast to every workload using it;
* ``buffer``: the L2 snapshot (own output, pieces received from other cores, DRAM loads,
  weights), addresses from :func:`~npuweave.compile.gemini.l2alloc.allocate`;
* ``time``: cycles of the workload's slice from the ``systolic-ws`` cost model on one core.

All tensors are int8 (bit width 8, channels aligned to 8) and follow the size rules.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

from npuweave.compile.gemini.emit_l2 import L2Builder
from npuweave.compile.gemini.geometry import fmap_bytes, intersect, weight_bytes
from npuweave.compile.gemini.mapping import Mapping, Task, input_box, weight_box
from npuweave.compile.gemini.model import (
    IR,
    Box,
    Destination,
    DramLoad,
    DramStore,
    Ifmap,
    Ofmap,
    Tile,
    Weight,
    Workload,
)
from npuweave.compile.layergroup.cost import slice_layer
from npuweave.hardware import NPU
from npuweave.workload.layer import Layer


def k_slice(layer: Layer, part: int, whole: int) -> Layer:
    """``layer`` cut to ``part`` of its ``whole`` output channels (weights shrink too)."""
    if part >= whole or layer.gemm is None:
        return layer

    def scale(v: int) -> int:
        return max(1, -(-v * part // whole)) if v else 0

    count, m, k, n = layer.gemm
    return replace(layer, gemm=(count, m, k, scale(n)), macs=scale(layer.macs),
                   vector_ops=scale(layer.vector_ops), weight_elems=scale(layer.weight_elems),
                   out_elems=scale(layer.out_elems))


def task_cycles(layer: Layer, box: Box, shape: tuple[int, int, int], npu: NPU) -> int:
    """Cycles of one workload: its slice of ``layer`` on one core (``systolic-ws``)."""
    from npuweave.cost import layer_cost

    n, c, h, _ = box.shape
    sl = k_slice(slice_layer(layer, h, shape[1]), c, shape[0])
    return math.ceil(layer_cost(sl, npu, n, model="systolic-ws").compute_s * npu.clock_hz)


@dataclass
class _Out:
    """What the emitter learns about one task's ofmap while wiring consumers."""

    tid: int
    dests: list[Destination] = field(default_factory=list)
    store: bool = False
    related: list[int] = field(default_factory=list)


class Emitter:
    """Builds the IR of one mapping; :meth:`build` returns it."""

    def __init__(self, m: Mapping, npu: NPU) -> None:
        self.m, self.npu = m, replace(npu, cores=1, mesh=(1, 1))
        self.next_tid = 0
        self.pos: dict[int, int] = {}
        per_core: dict[int, int] = defaultdict(int)
        for k, t in enumerate(m.tasks):
            self.pos[k] = per_core[t.core]
            per_core[t.core] += 1
        self.by_layer: dict[int, list[int]] = defaultdict(list)
        for k, t in enumerate(m.tasks):
            self.by_layer[t.layer].append(k)
        self.outs = [_Out(self._tid()) for _ in m.tasks]
        self.loads: list[DramLoad] = []
        self.l2 = L2Builder(m.cores)
        self.consumed = {name for lay in m.layers for name in lay.inputs}
        self.index = {lay.name: i for i, lay in enumerate(m.layers)}

    def _tid(self) -> int:
        self.next_tid += 1
        return self.next_tid - 1

    def _load(self, kind: str, box: Box, size: int, dests: list[tuple[int, Task]],
              related: tuple[int, ...] = ()) -> int:
        tid = self._tid()
        ds = tuple(Destination("core", t.core, k, self.m.layers[t.layer].name) for k, t in dests)
        self.loads.append(DramLoad(tid, kind, box, size, ds, related))
        return tid

    def _weights(self) -> dict[int, tuple[Weight, int]]:
        """task -> (its weight field, tid): one load per layer and K range, multicast."""
        users: dict[tuple[int, int, int], list[int]] = defaultdict(list)
        for k, t in enumerate(self.m.tasks):
            if weight_box(self.m.layers[t.layer]) is not None:
                users[(t.layer, t.box.lower[1], t.box.upper[1])].append(k)
        out = {}
        for (i, k0, k1), ks in users.items():
            layer = self.m.layers[i]
            full = self.m.shapes[i][0] - 1
            wb = weight_box(layer, k0, k1) if (k0, k1) != (0, full) else weight_box(layer)
            assert wb is not None
            size = weight_bytes(wb)
            tid = self._load("weight", wb, size, [(k, self.m.tasks[k]) for k in ks])
            for k in ks:
                out[k] = (Weight(wb, size, (tid,)), tid)
                self.l2.weight(self.m.tasks[k].core, tid, wb, size, layer.name, self.pos[k])
        return out

    def _inputs(self, k: int) -> list[Ifmap]:
        t = self.m.tasks[k]
        layer = self.m.layers[t.layer]
        ifmaps = []
        for j, name in enumerate(layer.inputs or ("",)):
            p = self.index.get(name)
            shape = self.m.input_shape if p is None else self.m.shapes[p]
            need = input_box(layer, shape, t.box, j == 0)
            tids = self._wire(k, t, p, need)
            ifmaps.append(Ifmap(need, fmap_bytes(need, 8, 8), tuple(tids), 8, 8))
        return ifmaps

    def _wire(self, k: int, t: Task, p: int | None, need: Box) -> list[int]:
        """Transfer ids that bring ``need`` (of layer ``p``; None: the network input) to task k."""
        if p is None:
            tid = self._load("fmap", need, fmap_bytes(need, 8, 8), [(k, t)])
            self.l2.dram(t.core, tid, need, self.pos[k], self.next_order())
            return [tid]
        tids = []
        via_dram = self.m.group_of[p] != self.m.group_of[t.layer]
        for pk in self.by_layer[p]:
            piece = intersect(need, self.m.tasks[pk].box)
            if piece is None:
                continue
            out, prod = self.outs[pk], self.m.tasks[pk]
            if via_dram:
                out.store = True
                tid = self._load("fmap", piece, fmap_bytes(piece, 8, 8), [(k, t)], (out.tid,))
                out.related.append(tid)
                self.l2.dram(t.core, tid, piece, self.pos[k], self.next_order())
                tids.append(tid)
                continue
            if not any(d.workload_id == k for d in out.dests):
                out.dests.append(Destination("core", t.core, k))
            if prod.core == t.core:
                self.l2.keep(t.core, out.tid, self.pos[k])
            else:
                self.l2.receive(t.core, out.tid, piece, self.m.layers[prod.layer].name,
                                prod.core, self.pos[k])
            tids.append(out.tid)
        return tids

    def next_order(self) -> int:
        return len(self.loads) - 1

    def build(self, xlen: int, ylen: int, buffersize: int) -> IR:
        """The IR of the mapping on an ``xlen`` x ``ylen`` mesh with ``buffersize`` L2 bytes."""
        tasks = self.m.tasks
        for k, t in enumerate(tasks):
            self.l2.own(t.core, self.outs[k].tid, t.box, self.m.layers[t.layer].name, self.pos[k])
        weights = self._weights()
        ifmaps = [self._inputs(k) for k in range(len(tasks))]
        stores = []
        for k, t in enumerate(tasks):
            out = self.outs[k]
            name = self.m.layers[t.layer].name
            if out.store or name not in self.consumed:
                out.dests.append(Destination("DRAM", -1))
                stores.append(DramStore(out.tid, t.core, k, name, t.box,
                                        tuple(out.related) if out.related else None))
        snapshots = self.l2.snapshots(buffersize, len(self.loads))
        per_core: dict[int, list[Workload]] = {c: [] for c in range(self.m.cores)}
        for k, t in enumerate(tasks):
            w = weights.get(k)
            per_core[t.core].append(self._workload(k, t, ifmaps[k], w[0] if w else None,
                                                   snapshots[(t.core, self.pos[k])], buffersize))
        return IR(tuple((c, tuple(ws)) for c, ws in per_core.items()), tuple(self.loads),
                  tuple(stores), buffersize, 1, xlen, ylen)

    def _workload(self, k: int, t: Task, ifmaps: list[Ifmap], weight: Weight | None,
                  buffer: tuple, buffersize: int) -> Workload:
        layer = self.m.layers[t.layer]
        shape = self.m.shapes[t.layer]
        local = Box((0, 0, 0, 0), tuple(s - 1 for s in t.box.shape))
        size = fmap_bytes(t.box, 8, 8)
        out = self.outs[k]
        ofmap = Ofmap(local if t.box.lower != local.lower else t.box, size, out.tid,
                      tuple(out.dests))
        cycles = task_cycles(layer, t.box, shape, self.npu)
        kind = "pe" if layer.gemm is not None else "vp"
        pad = _padding(layer, t.box, shape)
        main = ifmaps[0].box if ifmaps else t.box
        tile = Tile("tile_num_0", t.box, main, pad, float(cycles), layer_name=layer.name,
                    cut_mode=t.split if kind == "pe" else None,
                    loop_order="KNHW" if kind == "pe" else None)
        return Workload(t.core, k, layer.name, kind, t.box, cycles, tuple(ifmaps), (ofmap,),
                        size, buffer, ((0, buffersize),), (tile,), pad, weight, None,
                        "wl1_buffer")


def _padding(layer: Layer, box: Box, shape: tuple[int, int, int]) -> tuple[int, ...]:
    """``[top, bottom, left, right]`` zero padding of this ofmap tile's input window."""
    g = layer.geometry
    if g is None:
        return (0, 0, 0, 0)
    top = g.pads[0] if box.lower[2] == 0 else 0
    bottom = g.pads[2] if box.upper[2] == shape[1] - 1 else 0
    return (top, bottom, g.pads[1], g.pads[3])


def emit(m: Mapping, npu: NPU, xlen: int, ylen: int) -> IR:
    """The Gemini IR of mapping ``m`` on ``npu`` (one core's L2 is ``npu.l2_bytes``).

    Examples
    --------
    >>> from npuweave.compile.gemini.mapping import plan
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload import load_layers
    >>> npu = preset("gemini-like")
    >>> ir = emit(plan(load_layers("resnet50"), npu, 4, 4), npu, 2, 2)  # doctest: +SKIP
    >>> len(ir.cores)  # doctest: +SKIP
    4
    """
    return Emitter(m, npu).build(xlen, ylen, npu.l2_bytes or npu.lmem_bytes)
