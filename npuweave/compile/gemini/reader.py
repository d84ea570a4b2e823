"""Read a Gemini IR file into the frozen model; the only module that touches raw dicts.

The reader accepts what the published files contain (both weight-buffer spellings, ofmap
entries in the L2 snapshot, DRAM destinations without a workload id, null weight-buffer
snapshots, ...). Anything structurally wrong (not JSON, a missing required key, a value of
the wrong JSON type) raises :class:`~npuweave.errors.IRError` naming the file and JSON path.
Consistency between fields is the validator's job, not the reader's.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from npuweave.compile.gemini.model import (
    IR,
    Box,
    BufferEntry,
    Destination,
    DramLoad,
    DramStore,
    Ifmap,
    Ofmap,
    Source,
    Tile,
    Weight,
    WeightBufferEntry,
    Workload,
    freeze,
)
from npuweave.errors import ConfigError, IRError
from npuweave.fileio import MAX_INPUT_BYTES, file_kind, load_json

REQUIRED_TOP = ("-1", "buffersize", "top_batch_cut", "xlen", "ylen")
WEIGHT_BUFFER_KEYS = ("wl1_buffer", "wl0_buffer")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def child_path(path: str, key: str | int) -> str:
    """JSON path of ``key`` below ``path``: ``$.a``, ``$["-1"]``, ``$.a[3]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if _IDENT.match(key) else f"{path}[{json.dumps(key)}]"


class _Obj:
    """A JSON object being read: typed getters that raise IRError with the JSON path.

    ``get_*`` read a required key; ``opt_*`` return None when the key is absent (or null).
    """

    __slots__ = ("d", "_path", "_parent", "_key", "src", "used")

    def __init__(self, d: Any, path: str, src: str, parent: str | None = None,
                 key: str | int | None = None) -> None:
        # the JSON path is built only when an error needs it (``parent`` + ``key``)
        self._path, self._parent, self._key = path, parent, key
        if not isinstance(d, dict):
            raise _err(src, self.path, f"expected an object, got {_kind(d)}")
        self.d, self.src = d, src
        self.used: set[str] = set()

    @property
    def path(self) -> str:
        if self._parent is not None and self._key is not None:
            self._path = child_path(self._parent, self._key)
            self._parent = None
        return self._path

    def raw(self, key: str, optional: bool = False) -> Any:
        if key not in self.d:
            if optional:
                return None
            raise _err(self.src, self.path, f"missing required key {key!r}")
        self.used.add(key)
        return self.d[key]

    def get_int(self, key: str) -> int:
        v = self.d.get(key)
        if type(v) is int and (key not in _SIZE_KEYS or 0 <= v <= MAX_SIZE_BYTES):
            self.used.add(key)  # fast path: the common, well-formed case
            return v
        v = _int(self.raw(key), self, key)
        if key in _SIZE_KEYS and not 0 <= v <= MAX_SIZE_BYTES:
            raise _err(self.src, child_path(self.path, key), f"size {v} is outside 0 .. "
                       f"{MAX_SIZE_BYTES} bytes; fix the file")
        return v

    def opt_int(self, key: str) -> int | None:
        v = self.raw(key, True)
        return None if v is None else _int(v, self, key)

    def num(self, key: str) -> float:
        v = self.raw(key)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise _err(self.src, child_path(self.path, key), f"expected a number, got {_kind(v)}")
        return v

    def opt_str(self, key: str) -> str | None:
        v = self.raw(key, True)
        if v is not None and not isinstance(v, str):
            raise _err(self.src, child_path(self.path, key), f"expected a string, got {_kind(v)}")
        return v

    def get_str(self, key: str) -> str:
        v = self.d.get(key)
        if type(v) is str:
            self.used.add(key)
            return v
        v = self.opt_str(key) if key in self.d else self.raw(key)
        if v is None:
            raise _err(self.src, child_path(self.path, key), "expected a string, got null")
        return v

    def opt_bool(self, key: str) -> bool | None:
        v = self.raw(key, optional=True)
        if v is not None and not isinstance(v, bool):
            raise _err(self.src, child_path(self.path, key), f"expected true/false, got {_kind(v)}")
        return v

    def opt_list(self, key: str) -> list[Any] | None:
        v = self.raw(key, True)
        if v is not None and not isinstance(v, list):
            raise _err(self.src, child_path(self.path, key), f"expected a list, got {_kind(v)}")
        return v

    def get_list(self, key: str) -> list[Any]:
        v = self.opt_list(key) if key in self.d else self.raw(key)
        if v is None:
            raise _err(self.src, child_path(self.path, key), "expected a list, got null")
        return v

    def _int_items(self, key: str, items: list[Any], length: int | None) -> tuple[int, ...]:
        p = child_path(self.path, key)
        if length is not None and len(items) != length:
            raise _err(self.src, p, f"expected {length} integers, got {len(items)}")
        return tuple(_int(v, self, key, p) for v in items)

    def ints(self, key: str, length: int | None = None) -> tuple[int, ...]:
        v = self.d.get(key)
        if (type(v) is list and (length is None or len(v) == length)
                and all(type(x) is int for x in v)):
            self.used.add(key)
            return tuple(v)
        return self._int_items(key, self.get_list(key), length)

    def opt_ints(self, key: str) -> tuple[int, ...] | None:
        items = self.opt_list(key)
        return None if items is None else self._int_items(key, items, None)

    def _wrap(self, key: str, items: list[Any]) -> list[_Obj]:
        p = child_path(self.path, key)
        return [_Obj(v, "", self.src, p, i) for i, v in enumerate(items)]

    def objs(self, key: str) -> list[_Obj]:
        return self._wrap(key, self.get_list(key))

    def opt_objs(self, key: str) -> list[_Obj] | None:
        items = self.opt_list(key)
        return None if items is None else self._wrap(key, items)

    def obj(self, key: str) -> _Obj:
        return _Obj(self.raw(key), "", self.src, self.path, key)

    def opt_obj(self, key: str) -> _Obj | None:
        v = self.raw(key, True)
        return None if v is None else _Obj(v, "", self.src, self.path, key)

    def box(self, lower: str = "lower", upper: str = "upper") -> Box:
        d = self.d
        lo, up = d.get(lower), d.get(upper)
        if (type(lo) is list and type(up) is list and len(lo) == 4 and len(up) == 4
                and all(type(x) is int for x in lo) and all(type(x) is int for x in up)):
            self.used.update((lower, upper))
            return Box(tuple(lo), tuple(up))
        return Box(self.ints(lower, length=4), self.ints(upper, length=4))

    def opt_box(self, lower: str = "lower", upper: str = "upper") -> Box | None:
        if lower not in self.d and upper not in self.d:
            return None
        return self.box(lower, upper)

    def extra(self) -> tuple[tuple[str, Any], ...]:
        if len(self.used) == len(self.d):  # every key was read: nothing left over
            return ()
        return tuple((k, freeze(v)) for k, v in self.d.items() if k not in self.used)


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(v), "null" if v is None else type(v).__name__
    )


#: Byte counts: never negative (a negative transfer ran time backwards in the replay), and
#: no tensor is near 2**48 bytes.
_SIZE_KEYS = frozenset({"size", "ofmap_size", "buffersize"})
MAX_SIZE_BYTES = 2**48


def _int(v: Any, o: _Obj, key: str, path: str | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        p = path or child_path(o.path, key)
        raise _err(o.src, p, f"expected an integer, got {_kind(v)}")
    return v


def _err(src: str, path: str, msg: str) -> IRError:
    return IRError(f"{src}: {path}: {msg}")


def _destination(o: _Obj) -> Destination:
    return Destination(
        o.get_str("type"), o.get_int("core_id"), o.opt_int("workload_id"), o.opt_str("layer_name"),
        o.extra(),
    )


def _load(o: _Obj) -> DramLoad:
    rel = o.opt_ints("related_ifmap")
    dests = tuple(_destination(d) for d in o.objs("destination"))
    return DramLoad(o.get_int("transfer_id"), o.get_str("type"), o.box(), o.get_int("size"), dests, rel,
                    o.extra())


def _store(o: _Obj) -> DramStore:
    return DramStore(
        o.get_int("transfer_id"), o.get_int("core_id"), o.get_int("workload_id"), o.get_str("layer_name"),
        o.box(), o.opt_ints("related_ofmap"), o.extra(),
    )


def _ifmap(o: _Obj) -> Ifmap:
    return Ifmap(o.box(), o.get_int("size"), o.ints("transfer_id"), o.get_int("align"),
                 o.get_int("bitwidth"), o.extra())


def _ofmap(o: _Obj) -> Ofmap:
    dests = tuple(_destination(d) for d in o.objs("destination"))
    return Ofmap(o.box(), o.get_int("size"), o.get_int("transfer_id"), dests, o.extra())


def _source(o: _Obj) -> Source:
    return Source(o.get_str("type"), o.get_int("core_id"), o.box(), o.get_int("size"), o.get_int("transfer_id"),
                  o.opt_str("layer_name"), o.extra())


def _buffer_entry(o: _Obj) -> BufferEntry:
    srcs = o.opt_objs("source")
    return BufferEntry(
        tensor_id=o.get_int("tensor_id"), tensor_order=o.get_int("tensor_order"), type=o.get_str("type"),
        address=o.get_int("address"), size=o.get_int("size"), box=o.box(), align=o.get_int("align"),
        bitwidth=o.get_int("bitwidth"), transfer_ids=o.opt_ints("transfer_id"),
        sources=None if srcs is None else tuple(_source(s) for s in srcs),
        newly_added=o.opt_bool("newly_added"), cur_wl_ifmap=o.opt_bool("cur_wl_ifmap"),
        layer_name=o.opt_str("layer_name"), start_send=o.opt_bool("start_send"), extra=o.extra(),
    )


def _weight_buffer_entry(o: _Obj) -> WeightBufferEntry:
    return WeightBufferEntry(
        address=o.get_int("address"), size=o.get_int("size"), transfer_ids=o.ints("transfer_id"),
        source=o.get_str("source"), layer_name=o.get_str("layer_name"), align=o.get_int("align"),
        bitwidth=o.get_int("bitwidth"), tensor_order=o.opt_int("tensor_order"),
        box=o.opt_box(), extra=o.extra(),
    )


def _tile(name: str, o: _Obj) -> Tile:
    ifmap2 = o.opt_box("ifmap_lower2", "ifmap_upper2")
    return Tile(
        name=name, ofmap=o.box("ofmap_lower", "ofmap_upper"),
        ifmap=o.box("ifmap_lower", "ifmap_upper"), padding=o.ints("tile_padding_tblr"),
        time_pred=o.num("single_tile_time_pred"), ifmap2=ifmap2,
        layer_name=o.opt_str("layer_name"), cut_mode=o.opt_str("cut_mode"),
        loop_order=o.opt_str("loop_order"), extra=o.extra(),
    )


def _weight_buffer(o: _Obj) -> tuple[tuple[WeightBufferEntry, ...] | None, str]:
    key = next((k for k in WEIGHT_BUFFER_KEYS if k in o.d), "")
    if not key:
        return None, ""
    entries = o.opt_objs(key)
    if entries is None:
        o.used.add(key)
        return None, key
    return tuple(_weight_buffer_entry(e) for e in entries), key


def _workload(core: int, o: _Obj) -> Workload:
    bounds = o.get_list("workload")
    p = child_path(o.path, "workload")
    if len(bounds) != 2:
        raise _err(o.src, p, f"expected [lower, upper], got {len(bounds)} items")
    pair = _Obj({"lower": bounds[0], "upper": bounds[1]}, p, o.src)
    tiles_obj = o.obj("tile_info")
    tiles = tuple(_tile(k, tiles_obj.obj(k)) for k in list(tiles_obj.d))
    ring = o.get_list("ring_buffer_info")
    ring_path = child_path(o.path, "ring_buffer_info")
    regions = tuple(_region(r, child_path(ring_path, i), o.src) for i, r in enumerate(ring))
    wobj = o.opt_obj("weight")
    weight = None if wobj is None else Weight(wobj.box(), wobj.get_int("size"),
                                              wobj.ints("transfer_id"), wobj.extra())
    wbuf, wkey = _weight_buffer(o)
    return Workload(
        core_id=core, workload_id=o.get_int("workload_id"), layer_name=o.get_str("layer_name"),
        layer_type=o.get_str("layer_type"), box=pair.box(), time=o.get_int("time"),
        ifmaps=tuple(_ifmap(i) for i in o.objs("ifmap")),
        ofmaps=tuple(_ofmap(i) for i in o.objs("ofmap")), ofmap_size=o.get_int("ofmap_size"),
        buffer=tuple(_buffer_entry(b) for b in o.objs("buffer")), ring_buffer=regions,
        tiles=tiles, padding=o.ints("tile_padding_tblr"), weight=weight, weight_buffer=wbuf,
        weight_buffer_key=wkey, extra=o.extra(),
    )


def _region(r: Any, path: str, src: str) -> tuple[int, int]:
    if not (isinstance(r, list) and len(r) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in r)):
        raise _err(src, path, "expected a ring-buffer region [start, size] of two integers")
    return (r[0], r[1])


def from_dict(data: Any, source: str = "<ir>") -> IR:
    """Build an :class:`IR` from a parsed JSON document.

    Examples
    --------
    >>> from_dict({"-1": {"in": [], "out": []}, "0": [], "buffersize": 1,
    ...            "top_batch_cut": 1, "xlen": 1, "ylen": 1}).core_ids
    (0,)
    """
    top = _Obj(data, "$", source)
    missing = [k for k in REQUIRED_TOP if k not in top.d]
    if missing:
        raise _err(source, "$", f"missing required top-level key(s) {', '.join(missing)}; "
                                "is this a Gemini scheduler IR file?")
    dram = top.obj("-1")
    loads = tuple(_load(e) for e in dram.objs("out"))
    stores = tuple(_store(e) for e in dram.objs("in"))
    core_keys = sorted((k for k in top.d if k.isdigit()), key=int)
    if not core_keys:
        raise _err(source, "$", "no core keys (\"0\", \"1\", ...) found")
    cores = []
    for key in core_keys:
        wls = top.objs(key)
        cores.append((int(key), tuple(_workload(int(key), w) for w in wls)))
    return IR(
        cores=tuple(cores), loads=loads, stores=stores, buffersize=top.get_int("buffersize"),
        top_batch_cut=top.get_int("top_batch_cut"), xlen=top.get_int("xlen"), ylen=top.get_int("ylen"),
        dram_extra=dram.extra(), extra=top.extra(),
    )


def loads(text: str | bytes, source: str = "<ir>") -> IR:
    """Parse IR JSON text; raises :class:`IRError` if it is not JSON or not an IR."""
    try:
        data = load_json(text, source)
    except ConfigError as exc:  # IR files say so in their own error class
        raise IRError(str(exc)) from None
    try:
        return from_dict(data, source)
    except RecursionError:
        raise IRError(f"{source}: JSON nested too deeply to be an IR file") from None


def load(path: str | os.PathLike[str]) -> IR:
    """Read an IR file.

    Examples
    --------
    >>> ir = load("int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json")  # doctest: +SKIP
    >>> len(ir.workloads(0))  # doctest: +SKIP
    69
    """
    p = Path(path)
    try:
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block forever, a device never end
            raise IRError(f"{p}: cannot read, it is {file_kind(st)}; give a regular IR file")
        if st.st_size > MAX_INPUT_BYTES * 16:
            raise IRError(f"{p}: {st.st_size >> 20} MiB; an IR file is far smaller, is this "
                          "the right file?")
        data = p.read_bytes()
    except OSError as exc:
        raise IRError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return loads(data, source=p.name)
