"""Coordinate and size checks: ordered boxes, boxes inside their tensors, coverage, byte sizes."""

from __future__ import annotations

from collections.abc import Iterator

from npuweave.compile.gemini.geometry import (
    bounding,
    fmap_bytes,
    fmap_sizes,
    uncovered,
    weight_bytes,
)
from npuweave.compile.gemini.index import (
    LOADS_PATH,
    STORES_PATH,
    Index,
    Violation,
    to_absolute,
    workload_path,
)
from npuweave.compile.gemini.model import Box, BufferEntry, Workload


def _workload_boxes(wp: str, w: Workload) -> Iterator[tuple[str, Box]]:
    yield f"{wp}.workload", w.box
    for i, f in enumerate(w.ifmaps):
        yield f"{wp}.ifmap[{i}]", f.box
    for i, o in enumerate(w.ofmaps):
        yield f"{wp}.ofmap[{i}]", o.box
    if w.weight is not None:
        yield f"{wp}.weight", w.weight.box
    for j, b in enumerate(w.buffer):
        yield f"{wp}.buffer[{j}]", b.box
        for k, s in enumerate(b.sources or ()):
            yield f"{wp}.buffer[{j}].source[{k}]", s.box
    for j, e in enumerate(w.weight_buffer or ()):
        if e.box is not None:
            yield f"{wp}.{w.weight_buffer_key}[{j}]", e.box
    for t in w.tiles:
        tp = f"{wp}.tile_info.{t.name}"
        yield f"{tp}.ofmap", t.ofmap
        yield f"{tp}.ifmap", t.ifmap
        if t.ifmap2 is not None:
            yield f"{tp}.ifmap2", t.ifmap2


def check_box_order(ix: Index) -> Iterator[Violation]:
    """Every box has ``lower <= upper`` on all four axes."""
    boxes: list[tuple[str, Box]] = [(f"{LOADS_PATH}[{i}]", e.box) for i, e in enumerate(ix.ir.loads)]
    boxes += [(f"{STORES_PATH}[{i}]", e.box) for i, e in enumerate(ix.ir.stores)]
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            boxes.extend(_workload_boxes(workload_path(core, i), w))
    for path, box in boxes:
        if not box.ordered:
            yield Violation(path, "box-order", f"lower > upper in {box}")


def _outside(path: str, box: Box, outer: Box | None, what: str) -> Iterator[Violation]:
    if outer is not None and not outer.contains(box):
        yield Violation(path, "box-outside", f"box {box} lies outside {what} {outer}")


def _unread(ix: Index, path: str, box: Box, tids: tuple[int, ...],
            what: str) -> Iterator[Violation]:
    """A box naming ``tids`` that lies in neither frame of the tensor (see ``Index.readings``)."""
    if not ix.readings(box, tids):
        fr = ix.frame(tids)
        yield Violation(path, "box-outside", f"box {box} lies outside {what} "
                        f"{fr[0] if fr else '?'} (absolute or tile-local)")


def check_box_outside(ix: Index) -> Iterator[Violation]:
    """Each tensor's box lies inside the tensor it is cut from (absolute or tile-local)."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            wp = workload_path(core, i)
            for j, o in enumerate(w.ofmaps):
                if not w.box.contains(to_absolute(w, o.box)):
                    yield Violation(f"{wp}.ofmap[{j}]", "box-outside", f"box {o.box} lies "
                                    f"outside its workload {w.box} (absolute or tile-local)")
            for j, f in enumerate(w.ifmaps):
                yield from _unread(ix, f"{wp}.ifmap[{j}]", f.box, f.transfer_ids,
                                   "the tensor it reads")
            if w.weight is not None:
                fr = ix.frame(w.weight.transfer_ids)
                yield from _outside(f"{wp}.weight", w.weight.box, fr[0] if fr else None,
                                    "the DRAM weight")
            yield from _buffer_outside(ix, wp, w)
    for i, s in enumerate(ix.ir.stores):
        if not ix.in_layer(s.box, s.layer_name):
            yield Violation(f"{STORES_PATH}[{i}]", "box-outside", f"box {s.box} lies outside "
                            f"layer {s.layer_name!r} {ix.layer_extent.get(s.layer_name)}")


def _buffer_outside(ix: Index, wp: str, w: Workload) -> Iterator[Violation]:
    for j, b in enumerate(w.buffer):
        bp = f"{wp}.buffer[{j}]"
        if b.transfer_ids is not None:
            yield from _unread(ix, bp, b.box, b.transfer_ids, "the tensor it holds")
        elif b.layer_name is not None and not ix.in_layer(b.box, b.layer_name):
            yield Violation(bp, "box-outside", f"box {b.box} lies outside layer "
                            f"{b.layer_name!r} {ix.layer_extent.get(b.layer_name)}")
        for k, s in enumerate(b.sources or ()):
            yield from _unread(ix, f"{bp}.source[{k}]", s.box, (s.transfer_id,),
                               "the tensor it comes from")


def _size(path: str, actual: int, expected: int | set[int], rule: str) -> Iterator[Violation]:
    ok = actual in expected if isinstance(expected, set) else actual == expected
    if not ok:
        want = " or ".join(map(str, sorted(expected))) if isinstance(expected, set) else expected
        yield Violation(f"{path}.size", "size", f"{actual} bytes, but {rule} gives {want}")


def _entry_size(b: BufferEntry, box: Box) -> int:
    if b.type == "weight":
        return weight_bytes(box, b.align, b.bitwidth)
    return fmap_bytes(box, b.bitwidth, b.align)


def check_size(ix: Index) -> Iterator[Violation]:
    """Sizes agree with box, bit width and channel alignment (rules in ``geometry``)."""
    for i, e in enumerate(ix.ir.loads):
        exp = weight_bytes(e.box) if e.type == "weight" else fmap_sizes(e.box)
        yield from _size(f"{LOADS_PATH}[{i}]", e.size, exp, f"the {e.type} rule")
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            wp = workload_path(core, i)
            for j, f in enumerate(w.ifmaps):
                yield from _size(f"{wp}.ifmap[{j}]", f.size,
                                 fmap_bytes(f.box, f.bitwidth, f.align), "the fmap rule")
            for j, o in enumerate(w.ofmaps):
                yield from _size(f"{wp}.ofmap[{j}]", o.size, fmap_sizes(o.box),
                                 "the 8/16-bit fmap rule")
            if w.weight is not None:
                yield from _size(f"{wp}.weight", w.weight.size, weight_bytes(w.weight.box),
                                 "the weight rule")
            for j, b in enumerate(w.buffer):
                bp = f"{wp}.buffer[{j}]"
                yield from _size(bp, b.size, _entry_size(b, b.box), f"the {b.type} rule")
                for k, s in enumerate(b.sources or ()):
                    yield from _size(f"{bp}.source[{k}]", s.size, _entry_size(b, s.box),
                                     f"the {b.type} rule")


def _absolute_source(ix: Index, box: Box, tid: int) -> Box:
    """A source box in absolute coordinates (its first reading; as is when none fits)."""
    found = ix.readings(box, (tid,))
    return found[0] if found else box


def check_buffer_source(ix: Index) -> Iterator[Violation]:
    """A buffer tensor's sources carry exactly its transfer ids and span exactly its box."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            for j, b in enumerate(w.buffer):
                if b.sources is None or b.transfer_ids is None:
                    continue
                bp = f"{workload_path(core, i)}.buffer[{j}]"
                ids = {s.transfer_id for s in b.sources}
                if ids != set(b.transfer_ids):
                    yield Violation(f"{bp}.source", "buffer-source", f"source ids {sorted(ids)} "
                                    f"differ from transfer_id {list(b.transfer_ids)}")
                span = bounding(s.box for s in b.sources)
                if span is None or span == b.box:
                    continue
                real = bounding(_absolute_source(ix, s.box, s.transfer_id) for s in b.sources)
                if real not in ix.readings(b.box, b.transfer_ids):
                    yield Violation(f"{bp}.source", "buffer-source",
                                    f"sources span {span}, the entry says {b.box}")


def check_ifmap_coverage(ix: Index) -> Iterator[Violation]:
    """The L2 snapshot's sources for each ifmap's transfer ids cover the ifmap box."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            for j, f in enumerate(w.ifmaps):
                tids = set(f.transfer_ids)
                boxes = [_absolute_source(ix, s.box, s.transfer_id) for b in w.buffer
                         if tids & set(b.transfer_ids or ()) for s in (b.sources or ())
                         if s.transfer_id in tids]
                readings = ix.readings(f.box, f.transfer_ids) or [f.box]
                rests = [uncovered(r, boxes) for r in readings]
                if all(rests):
                    rest = rests[0]
                    yield Violation(f"{workload_path(core, i)}.ifmap[{j}]", "ifmap-coverage",
                                    f"{sum(r.volume for r in rest)} elements of {f.box} are in "
                                    f"no L2 buffer entry of transfer ids {sorted(tids)}")
