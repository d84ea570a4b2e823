"""Write the frozen IR model back to JSON (equivalent to what was read)."""

from __future__ import annotations

import json
import os
from typing import Any

from npuweave.compile.gemini.model import (
    IR,
    Box,
    BufferEntry,
    Destination,
    DramLoad,
    DramStore,
    Extra,
    Ifmap,
    Ofmap,
    Source,
    Tile,
    Weight,
    WeightBufferEntry,
    Workload,
    thaw,
)
from npuweave.fileio import write_text


def _obj(fields: dict[str, Any], extra: Extra) -> dict[str, Any]:
    out = {k: v for k, v in fields.items() if v is not _ABSENT}
    out.update((k, thaw(v)) for k, v in extra)
    return out


class _Absent:
    """Marker for an optional key that was not in the file."""


_ABSENT: Any = _Absent()


def _opt(value: Any) -> Any:
    return _ABSENT if value is None else value


def _ints(value: tuple[int, ...] | None) -> Any:
    return _ABSENT if value is None else list(value)


def _box(box: Box, lower: str = "lower", upper: str = "upper") -> dict[str, list[int]]:
    return {lower: list(box.lower), upper: list(box.upper)}


def _dest(d: Destination) -> dict[str, Any]:
    return _obj({"core_id": d.core_id, "layer_name": _opt(d.layer_name), "type": d.type,
                 "workload_id": _opt(d.workload_id)}, d.extra)


def _load(e: DramLoad) -> dict[str, Any]:
    return _obj({"destination": [_dest(d) for d in e.destinations], **_box(e.box),
                 "related_ifmap": _ints(e.related_ifmap), "size": e.size,
                 "transfer_id": e.transfer_id, "type": e.type}, e.extra)


def _store(e: DramStore) -> dict[str, Any]:
    return _obj({"core_id": e.core_id, "layer_name": e.layer_name, **_box(e.box),
                 "related_ofmap": _ints(e.related_ofmap), "transfer_id": e.transfer_id,
                 "workload_id": e.workload_id}, e.extra)


def _ifmap(e: Ifmap) -> dict[str, Any]:
    return _obj({"align": e.align, "bitwidth": e.bitwidth, **_box(e.box), "size": e.size,
                 "transfer_id": list(e.transfer_ids)}, e.extra)


def _ofmap(e: Ofmap) -> dict[str, Any]:
    return _obj({"destination": [_dest(d) for d in e.destinations], **_box(e.box),
                 "size": e.size, "transfer_id": e.transfer_id}, e.extra)


def _weight(e: Weight) -> dict[str, Any]:
    return _obj({**_box(e.box), "size": e.size, "transfer_id": list(e.transfer_ids)}, e.extra)


def _source(e: Source) -> dict[str, Any]:
    return _obj({"core_id": e.core_id, "layer_name": _opt(e.layer_name), **_box(e.box),
                 "size": e.size, "transfer_id": e.transfer_id, "type": e.type}, e.extra)


def _buffer_entry(e: BufferEntry) -> dict[str, Any]:
    sources = _ABSENT if e.sources is None else [_source(s) for s in e.sources]
    return _obj({
        "address": e.address, "align": e.align, "bitwidth": e.bitwidth,
        "cur_wl_ifmap": _opt(e.cur_wl_ifmap), "layer_name": _opt(e.layer_name), **_box(e.box),
        "newly_added": _opt(e.newly_added), "size": e.size, "source": sources,
        "start_send": _opt(e.start_send), "tensor_id": e.tensor_id,
        "tensor_order": e.tensor_order, "transfer_id": _ints(e.transfer_ids), "type": e.type,
    }, e.extra)


def _weight_buffer_entry(e: WeightBufferEntry) -> dict[str, Any]:
    box = {} if e.box is None else _box(e.box)
    return _obj({"address": e.address, "align": e.align, "bitwidth": e.bitwidth,
                 "layer_name": e.layer_name, **box, "size": e.size, "source": e.source,
                 "tensor_order": e.tensor_order, "transfer_id": list(e.transfer_ids)}, e.extra)


def _tile(t: Tile) -> dict[str, Any]:
    box2 = {} if t.ifmap2 is None else _box(t.ifmap2, "ifmap_lower2", "ifmap_upper2")
    return _obj({
        "cut_mode": _opt(t.cut_mode), **_box(t.ifmap, "ifmap_lower", "ifmap_upper"), **box2,
        "layer_name": _opt(t.layer_name), "loop_order": _opt(t.loop_order),
        **_box(t.ofmap, "ofmap_lower", "ofmap_upper"), "single_tile_time_pred": t.time_pred,
        "tile_padding_tblr": list(t.padding),
    }, t.extra)


def _workload(w: Workload) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "buffer": [_buffer_entry(b) for b in w.buffer],
        "ifmap": [_ifmap(i) for i in w.ifmaps], "layer_name": w.layer_name,
        "layer_type": w.layer_type, "ofmap": [_ofmap(o) for o in w.ofmaps],
        "ofmap_size": w.ofmap_size, "ring_buffer_info": [list(r) for r in w.ring_buffer],
        "tile_info": {t.name: _tile(t) for t in w.tiles},
        "tile_padding_tblr": list(w.padding), "time": w.time,
        "weight": _ABSENT if w.weight is None else _weight(w.weight),
        "workload": [list(w.box.lower), list(w.box.upper)], "workload_id": w.workload_id,
    }
    if w.weight_buffer_key:
        wb = w.weight_buffer
        fields[w.weight_buffer_key] = None if wb is None else [_weight_buffer_entry(e) for e in wb]
    return _obj(fields, w.extra)


def to_dict(ir: IR) -> dict[str, Any]:
    """The JSON document of ``ir`` (plain dicts and lists)."""
    doc: dict[str, Any] = {
        "-1": _obj({"in": [_store(s) for s in ir.stores], "out": [_load(e) for e in ir.loads]},
                   ir.dram_extra),
    }
    for core, wls in ir.cores:
        doc[str(core)] = [_workload(w) for w in wls]
    doc.update(buffersize=ir.buffersize, top_batch_cut=ir.top_batch_cut, xlen=ir.xlen,
               ylen=ir.ylen)
    return _obj(doc, ir.extra)


def dumps(ir: IR, indent: int | None = 3) -> str:
    """Serialize ``ir`` to JSON text (keys sorted, as Gemini writes them)."""
    return json.dumps(to_dict(ir), indent=indent, sort_keys=True)


def dump(ir: IR, path: str | os.PathLike[str], indent: int | None = 3) -> None:
    """Write ``ir`` to ``path`` atomically."""
    write_text(path, dumps(ir, indent) + "\n")
