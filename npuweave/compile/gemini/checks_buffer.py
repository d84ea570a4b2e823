"""L2 buffer and workload checks: no overlap (ring wrap-around), capacity, snapshot flags,
workload order, ofmap sizes and tile coverage."""

from __future__ import annotations

from collections.abc import Iterator

from npuweave.compile.gemini.geometry import uncovered
from npuweave.compile.gemini.index import (
    Index,
    Violation,
    core_path,
    to_absolute,
    workload_path,
)
from npuweave.compile.gemini.model import BufferEntry, Workload


def regions(w: Workload) -> list[tuple[int, int]]:
    """The ring-buffer regions as ``[lo, hi)`` address ranges.

    The format document defines an entry as ``[start, size]``; every published file has the
    single region ``[0, buffersize]``, where ``[start, size]`` and ``[start, end)`` agree, so
    the files cannot tell the two readings apart. npuweave follows the document.
    """
    return [(start, start + size) for start, size in w.ring_buffer]


def _region(w: Workload, address: int) -> tuple[int, int] | None:
    return next(((lo, hi) for lo, hi in regions(w) if lo <= address < hi), None)


def occupied(w: Workload, b: BufferEntry) -> list[tuple[int, int]]:
    """Address intervals ``[lo, hi)`` an entry occupies, wrapping inside its ring region."""
    end = b.address + b.size
    region = _region(w, b.address)
    if region is None or end <= region[1]:
        return [(b.address, end)]
    lo, hi = region
    return [(b.address, hi), (lo, lo + min(end - hi, hi - lo))]


def check_buffer_overlap(ix: Index) -> Iterator[Violation]:
    """In every L2 snapshot no two tensors share an address (ring regions wrap around)."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            spans = sorted((lo, hi, j) for j, b in enumerate(w.buffer) for lo, hi in occupied(w, b)
                           if hi > lo)
            seen: set[tuple[int, int]] = set()
            active: list[tuple[int, int]] = []
            for lo, hi, j in spans:
                active = [(h, k) for h, k in active if h > lo]
                for _, k in active:
                    pair = (min(j, k), max(j, k))
                    if k != j and pair not in seen:
                        seen.add(pair)
                        a, b = w.buffer[pair[0]], w.buffer[pair[1]]
                        yield Violation(f"{workload_path(core, i)}.buffer[{pair[1]}]",
                                        "buffer-overlap",
                                        f"tensor {b.tensor_id} at {b.address}+{b.size} overlaps "
                                        f"buffer[{pair[0]}] (tensor {a.tensor_id} at "
                                        f"{a.address}+{a.size})")
                active.append((hi, j))


def check_buffer_capacity(ix: Index) -> Iterator[Violation]:
    """Every tensor starts inside a ring region and fits it; a snapshot fits ``buffersize``."""
    cap = ix.ir.buffersize
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            wp = workload_path(core, i)
            for j, b in enumerate(w.buffer):
                region = _region(w, b.address)
                if region is None or b.address < 0:
                    yield Violation(f"{wp}.buffer[{j}].address", "buffer-capacity",
                                    f"address {b.address} is in no ring-buffer region "
                                    f"{[list(r) for r in regions(w)]} ([lo, hi) bytes)")
                elif b.size > region[1] - region[0] or b.size < 0:
                    yield Violation(f"{wp}.buffer[{j}].size", "buffer-capacity",
                                    f"{b.size} bytes do not fit region {list(region)}")
            total = sum(b.size for b in w.buffer)
            if total > cap:
                yield Violation(f"{wp}.buffer", "buffer-capacity",
                                f"snapshot holds {total} bytes, more than buffersize {cap}")


def check_newly_added(ix: Index) -> Iterator[Violation]:
    """``newly_added`` is true exactly for tensors absent from the core's previous snapshot."""
    for core, wls in ix.ir.cores:
        previous: set[int] = set()
        for i, w in enumerate(wls):
            for j, b in enumerate(w.buffer):
                if b.newly_added is None:
                    continue
                new = b.tensor_id not in previous
                if b.newly_added != new:
                    state = "new" if new else "already in the previous snapshot"
                    yield Violation(f"{workload_path(core, i)}.buffer[{j}].newly_added",
                                    "newly-added", f"{str(b.newly_added).lower()}, but tensor "
                                    f"{b.tensor_id} is {state}")
            previous = {b.tensor_id for b in w.buffer}


def check_cur_wl_ifmap(ix: Index) -> Iterator[Violation]:
    """Entries flagged ``cur_wl_ifmap`` hold every ifmap id of the workload, and each holds at
    least one (a merged entry may also hold ids of the layer's other workloads)."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            wanted = {t for f in w.ifmaps for t in f.transfer_ids}
            flagged = [set(b.transfer_ids or ()) for b in w.buffer if b.cur_wl_ifmap]
            held = set().union(*flagged)
            if not wanted <= held or any(not ids & wanted for ids in flagged):
                yield Violation(f"{workload_path(core, i)}.buffer", "cur-wl-ifmap",
                                f"entries flagged cur_wl_ifmap hold ids {sorted(held)}, "
                                f"the workload's ifmaps are {sorted(wanted)}")


def check_header(ix: Index) -> Iterator[Violation]:
    """The mesh holds exactly the cores (``xlen * ylen``), sizes are positive, times >= 0."""
    ir = ix.ir
    for key, value, low in (("xlen", ir.xlen, 1), ("ylen", ir.ylen, 1),
                            ("buffersize", ir.buffersize, 1), ("top_batch_cut", ir.top_batch_cut, 1)):
        if value < low:
            yield Violation(f"$.{key}", "header", f"{value}, must be >= {low}")
    cores = len(ir.cores)
    if ir.xlen >= 1 and ir.ylen >= 1 and ir.xlen * ir.ylen != cores:
        yield Violation("$", "header", f"a {ir.xlen} x {ir.ylen} mesh holds {ir.xlen * ir.ylen} "
                        f"cores, the file has {cores} ({', '.join(map(str, ir.core_ids))})")
    for core, wls in ir.cores:
        if not 0 <= core < max(cores, ir.xlen * ir.ylen):
            yield Violation(core_path(core), "header", f"core id {core} lies outside the mesh")
        for i, w in enumerate(wls):
            if w.time < 0:
                yield Violation(f"{workload_path(core, i)}.time", "header",
                                f"{w.time} cycles, a time must be >= 0")
            if w.ofmap_size < 0:
                yield Violation(f"{workload_path(core, i)}.ofmap_size", "header",
                                f"{w.ofmap_size} bytes, must be >= 0")


def check_workload_order(ix: Index) -> Iterator[Violation]:
    """Workload ids ascend strictly on every core."""
    for core, wls in ix.ir.cores:
        for i in range(1, len(wls)):
            if wls[i].workload_id <= wls[i - 1].workload_id:
                yield Violation(f"{core_path(core)}[{i}].workload_id", "workload-order",
                                f"{wls[i].workload_id} follows {wls[i - 1].workload_id}")


def check_ofmap_size(ix: Index) -> Iterator[Violation]:
    """``ofmap_size`` equals the sum of the workload's ofmap sizes."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            total = sum(o.size for o in w.ofmaps)
            if w.ofmap_size != total:
                yield Violation(f"{workload_path(core, i)}.ofmap_size", "ofmap-size",
                                f"{w.ofmap_size}, but the ofmaps add up to {total}")


def check_tile_coverage(ix: Index) -> Iterator[Violation]:
    """``tile_info`` tiles lie inside the workload and together cover it."""
    for core, wls in ix.ir.cores:
        for i, w in enumerate(wls):
            wp = workload_path(core, i)
            boxes = []
            for t in w.tiles:
                box = to_absolute(w, t.ofmap)
                if not w.box.contains(box):
                    yield Violation(f"{wp}.tile_info.{t.name}", "tile-coverage",
                                    f"tile ofmap {t.ofmap} lies outside the workload {w.box}")
                boxes.append(box)
            rest = uncovered(w.box, boxes)
            if rest:
                yield Violation(f"{wp}.tile_info", "tile-coverage",
                                f"{sum(r.volume for r in rest)} elements of the workload "
                                f"{w.box} are in no tile")
