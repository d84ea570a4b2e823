"""Transfer-id checks: every id is defined once, every reference resolves, links are mutual."""

from __future__ import annotations

from collections.abc import Iterator

from npuweave.compile.gemini.index import (
    LOADS_PATH,
    STORES_PATH,
    Index,
    Violation,
    workload_path,
)
from npuweave.compile.gemini.model import Workload


def check_transfer_unique(ix: Index) -> Iterator[Violation]:
    """Each transfer id is defined once: by one DRAM load or one workload ofmap."""
    for tid, entries in ix.loads.items():
        for i, _ in entries[1:]:
            yield Violation(f"{LOADS_PATH}[{i}].transfer_id", "transfer-unique",
                            f"transfer id {tid} is used by {len(entries)} DRAM loads")
        if tid in ix.producers:
            p = ix.producers[tid][0]
            yield Violation(f"{LOADS_PATH}[{entries[0][0]}].transfer_id", "transfer-unique",
                            f"transfer id {tid} is also the ofmap of workload "
                            f"{p.workload.workload_id} on core {p.core}")
    for tid, prods in ix.producers.items():
        for p in prods[1:]:
            yield Violation(f"{workload_path(p.core, p.index)}.ofmap[{p.ofmap_index}].transfer_id",
                            "transfer-unique", f"transfer id {tid} is produced {len(prods)} times")
    for tid, stored in ix.stores.items():
        for i, _ in stored[1:]:
            yield Violation(f"{STORES_PATH}[{i}].transfer_id", "transfer-unique",
                            f"transfer id {tid} is stored to DRAM {len(stored)} times")


def _references(w: Workload) -> Iterator[tuple[str, int]]:
    """(relative path, transfer id) of every id a workload refers to."""
    for i, f in enumerate(w.ifmaps):
        for k, tid in enumerate(f.transfer_ids):
            yield f"ifmap[{i}].transfer_id[{k}]", tid
    if w.weight is not None:
        for k, tid in enumerate(w.weight.transfer_ids):
            yield f"weight.transfer_id[{k}]", tid
    for j, b in enumerate(w.buffer):
        for k, tid in enumerate(b.transfer_ids or ()):
            yield f"buffer[{j}].transfer_id[{k}]", tid
        for k, s in enumerate(b.sources or ()):
            yield f"buffer[{j}].source[{k}].transfer_id", s.transfer_id
    for j, e in enumerate(w.weight_buffer or ()):
        for k, tid in enumerate(e.transfer_ids):
            yield f"{w.weight_buffer_key}[{j}].transfer_id[{k}]", tid


def check_transfer_dangling(ix: Index) -> Iterator[Violation]:
    """Every id an ifmap, weight or buffer entry names exists as a DRAM load or an ofmap."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            for rel, tid in _references(w):
                if not ix.known(tid):
                    yield Violation(f"{workload_path(core, i)}.{rel}", "transfer-dangling",
                                    f"transfer id {tid} is neither a DRAM load nor any "
                                    f"workload's ofmap")


def check_dram_store(ix: Index) -> Iterator[Violation]:
    """Every DRAM ``in`` entry matches its producer's ofmap, and vice versa."""
    for i, s in enumerate(ix.ir.stores):
        path = f"{STORES_PATH}[{i}]"
        p = ix.producer_of(s.transfer_id)
        if p is None:
            yield Violation(path, "dram-store", f"transfer id {s.transfer_id} is no ofmap")
            continue
        wl = p.workload
        if (p.core, wl.workload_id) != (s.core_id, s.workload_id):
            yield Violation(path, "dram-store", f"says core {s.core_id} workload "
                            f"{s.workload_id}, but the ofmap belongs to core {p.core} "
                            f"workload {wl.workload_id}")
        if s.layer_name != wl.layer_name:
            yield Violation(f"{path}.layer_name", "dram-store",
                            f"{s.layer_name!r} but the producer is {wl.layer_name!r}")
        if s.box not in (p.ofmap.box, ix.absolute(s.transfer_id)):
            yield Violation(path, "dram-store", f"box {s.box} differs from ofmap box "
                            f"{p.ofmap.box} (absolute: {ix.absolute(s.transfer_id)})")
        if not any(d.type == "DRAM" for d in p.ofmap.destinations):
            yield Violation(path, "dram-store", "the producer's ofmap has no DRAM destination")
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            for j, o in enumerate(w.ofmaps):
                if any(d.type == "DRAM" for d in o.destinations) and o.transfer_id not in ix.stores:
                    yield Violation(f"{workload_path(core, i)}.ofmap[{j}]", "dram-store",
                                    f"goes to DRAM but no DRAM 'in' entry has transfer id "
                                    f"{o.transfer_id}")


def check_related_mutual(ix: Index) -> Iterator[Violation]:
    """``related_ofmap`` (DRAM in) and ``related_ifmap`` (DRAM out) name each other."""
    for i, s in enumerate(ix.ir.stores):
        for k, rid in enumerate(s.related_ofmap or ()):
            load = ix.load_of(rid)
            if load is None or s.transfer_id not in (load.related_ifmap or ()):
                yield Violation(f"{STORES_PATH}[{i}].related_ofmap[{k}]", "related-mutual",
                                f"DRAM load {rid} does not list {s.transfer_id} in related_ifmap")
    for i, e in enumerate(ix.ir.loads):
        for k, rid in enumerate(e.related_ifmap or ()):
            stores = ix.stores.get(rid)
            if not stores or e.transfer_id not in (stores[0][1].related_ofmap or ()):
                yield Violation(f"{LOADS_PATH}[{i}].related_ifmap[{k}]", "related-mutual",
                                f"DRAM store {rid} does not list {e.transfer_id} in related_ofmap")


def _consumes(w: Workload, tid: int) -> bool:
    if any(tid in f.transfer_ids for f in w.ifmaps):
        return True
    return w.weight is not None and tid in w.weight.transfer_ids


def _reads_layer(ix: Index, w: Workload, layer: str) -> bool:
    """True when ``w`` reads some ofmap of ``layer`` (a producer split into several workloads
    lists every workload of its consumer layers as a destination, see docs/GEMINI_IR.md)."""
    for f in w.ifmaps:
        for tid in f.transfer_ids:
            p = ix.producer_of(tid)
            if p is not None and p.workload.layer_name == layer:
                return True
    return False


def check_destination(ix: Index) -> Iterator[Violation]:
    """Core destinations name existing workloads that read the id (or its layer) as an input."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            for j, o in enumerate(w.ofmaps):
                for k, d in enumerate(o.destinations):
                    yield from _dest(ix, f"{workload_path(core, i)}.ofmap[{j}].destination[{k}]",
                                     d.type, d.core_id, d.workload_id, o.transfer_id,
                                     w.layer_name)
    for i, e in enumerate(ix.ir.loads):
        for k, d in enumerate(e.destinations):
            yield from _dest(ix, f"{LOADS_PATH}[{i}].destination[{k}]", d.type, d.core_id,
                             d.workload_id, e.transfer_id, None)


def _dest(ix: Index, path: str, kind: str, core: int, wid: int | None,
          tid: int, layer: str | None) -> Iterator[Violation]:
    if kind != "core":
        return
    pos = ix.positions.get((core, wid)) if wid is not None else None
    if pos is None:
        yield Violation(path, "destination", f"core {core} has no workload {wid}")
    elif not _consumes(pos[1], tid) and (layer is None or not _reads_layer(ix, pos[1], layer)):
        yield Violation(path, "destination", f"workload {wid} on core {core} takes neither "
                        f"transfer id {tid} nor any ofmap of its layer as an input")
