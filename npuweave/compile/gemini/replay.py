"""Replay an IR on a simple multi-core model with DRAM transfers overlapped with compute.

Model (docs/GEMINI_IR.md has the long form):

* each core runs its workloads in file (ascending id) order; a workload takes ``time`` cycles
  at ``clock_hz`` and starts once the previous one has finished and all its inputs arrived:
  an ofmap of a workload on the same core when that workload finishes, an ofmap of another
  core when its mesh transfer completes, a DRAM tensor when its load completes;
* a mesh transfer moves the slice the receiving core holds (the sizes of its L2 sources with
  that id) from the producer's core when the producer finishes: ``hops * hop_cycles`` cycles
  (Manhattan distance on the ``xlen`` x ``ylen`` mesh, core ``c`` at ``(c % xlen, c // xlen)``)
  plus ``bytes / noc_bw``; each core sends one transfer at a time, first come first served.
  Without ``noc_bw`` mesh transfers are free (the published files have one core);
* DRAM is one channel of ``dram_bw`` bytes/s that moves one tensor at a time, first come first
  served (ties by the file's ``tensor_order``); ``dram_bw=None`` makes transfers instantaneous;
* a load is issued when the workload before the one whose snapshot first holds it starts
  (one-workload prefetch, as the snapshots show), and after the stores it re-reads
  (``related_ifmap``) have finished; a store is issued when its producer finishes.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from npuweave.compile.gemini.model import IR, DramLoad, Workload
from npuweave.errors import ConfigError, InfeasibleError, IRError

_NEVER = float("inf")


@dataclass(frozen=True, slots=True)
class Span:
    """One busy interval: a workload on a core, or a transfer on the DRAM channel (seconds)."""

    lane: str
    name: str
    kind: str
    start: float
    end: float
    core: int | None = None
    workload_id: int | None = None
    bytes: int = 0

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class ReplayResult:
    workloads: tuple[Span, ...]
    transfers: tuple[Span, ...]
    makespan: float
    core_busy: tuple[tuple[int, float], ...]
    dram_busy: float
    #: sum of all ``time`` fields at the clock (the no-overlap, no-DRAM estimate per core sum)
    sum_time: float
    clock_hz: float
    dram_bw: float | None
    #: core-to-core transfers (lane ``mesh <core>`` of the sending core); empty when free
    mesh: tuple[Span, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class _Transfer:
    tid: int
    kind: str
    bytes: int
    order: int
    waits: int = 0
    start: float = _NEVER
    end: float = _NEVER


@dataclass(frozen=True, slots=True)
class Mesh:
    """The cores' links: ``noc_bw`` bytes/s per transfer, ``hop_s`` seconds per hop."""

    xlen: int
    noc_bw: float
    hop_s: float

    def hops(self, a: int, b: int) -> int:
        return abs(a % self.xlen - b % self.xlen) + abs(a // self.xlen - b // self.xlen)

    def seconds(self, a: int, b: int, nbytes: int) -> float:
        return self.hops(a, b) * self.hop_s + nbytes / self.noc_bw


class _Replay:
    """State of one replay, driven by the package's event loop (``sim.events.EventLoop``)."""

    def __init__(self, ir: IR, dram_bw: float | None, clock_hz: float,
                 mesh: Mesh | None) -> None:
        from npuweave.sim.events import EventLoop  # the package's one event loop

        self.ir, self.bw, self.clock, self.mesh = ir, dram_bw, clock_hz, mesh
        self.loop = EventLoop()
        self.next = {core: 0 for core in ir.core_ids}
        self.busy = dict.fromkeys(ir.core_ids, False)
        self.start: dict[tuple[int, int], float] = {}
        self.done: dict[tuple[int, int], float] = {}
        self.ready: list[tuple[float, int, int]] = []
        self.dram_free = True
        self.xfers: dict[int, _Transfer] = {}
        self.on_start: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.after_store: dict[int, list[int]] = defaultdict(list)
        self.stores_of: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.producer: dict[int, tuple[int, int]] = {}
        self.links: dict[tuple[int, int], _Link] = {}
        self.sends: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
        self.port_queue: dict[int, list[tuple[int, int]]] = defaultdict(list)
        self.port_free = dict.fromkeys(ir.core_ids, True)
        self._plan()
        if mesh is not None:
            self._plan_mesh()

    def _plan(self) -> None:
        for core, wls in self.ir.cores:
            for i, w in enumerate(wls):
                for o in w.ofmaps:
                    self.producer[o.transfer_id] = (core, i)
        first = _first_holders(self.ir)
        for e in self.ir.loads:
            self._plan_load(e, first.get(e.transfer_id))
        ofmap_size = {o.transfer_id: o.size for w in self.ir.workloads() for o in w.ofmaps}
        for s in self.ir.stores:
            where = self.producer.get(s.transfer_id)
            if where is not None:
                self.xfers[s.transfer_id] = _Transfer(s.transfer_id, "store",
                                                      ofmap_size[s.transfer_id], 1 << 30)
                self.stores_of[where].append(s.transfer_id)

    def _plan_mesh(self) -> None:
        """One link transfer per (transfer id, receiving core) read across cores."""
        for core, wls in self.ir.cores:
            for w in wls:
                for tid in _input_ids(w):
                    src = self.producer.get(tid)
                    if src is None or src[0] == core or (tid, core) in self.links:
                        continue
                    nbytes = _slice_bytes(self.ir, core, tid, self.producer, src[0])
                    self.links[(tid, core)] = _Link(src[0], core, nbytes)
                    self.sends[src].append((tid, core))

    def _plan_load(self, e: DramLoad, holder: tuple[int, int, int] | None) -> None:
        core, index, order = holder or self._first_consumer(e)
        x = _Transfer(e.transfer_id, e.type, e.size, order)
        self.xfers[e.transfer_id] = x
        if index > 0:
            x.waits += 1
            self.on_start[(core, index - 1)].append(e.transfer_id)
        for sid in e.related_ifmap or ():
            if sid in self.producer:
                x.waits += 1
                self.after_store[sid].append(e.transfer_id)

    def _first_consumer(self, e: DramLoad) -> tuple[int, int, int]:
        where: list[tuple[int, int]] = []
        for d in e.destinations:
            if d.type == "core" and d.workload_id is not None:
                idx = self._index(d.core_id, d.workload_id)
                if idx is not None:
                    where.append((d.core_id, idx))
        core, index = min(where, key=lambda w: w[1], default=(self.ir.core_ids[0], 0))
        return core, index, 1 << 30

    def _index(self, core: int, wid: int) -> int | None:
        wls = dict(self.ir.cores).get(core, ())
        return next((i for i, w in enumerate(wls) if w.workload_id == wid), None)

    def _release(self, tid: int) -> None:
        x = self.xfers[tid]
        x.waits -= 1
        if x.waits <= 0:
            heapq.heappush(self.ready, (self.loop.now, x.order, tid))

    def _inputs_ready(self, core: int, w: Workload) -> bool:
        now = self.loop.now
        for tid in _input_ids(w):
            x = self.xfers.get(tid)
            if x is not None and x.kind != "store":
                if x.end > now:
                    return False
                continue
            link = self.links.get((tid, core))
            if link is not None:
                if link.end > now:
                    return False
            elif tid in self.producer and self.producer[tid] not in self.done:
                return False
        return True

    def _dispatch(self) -> None:
        progress = True
        while progress:
            progress = False
            for core, wls in self.ir.cores:
                i = self.next[core]
                if not self.busy[core] and i < len(wls) and self._inputs_ready(core, wls[i]):
                    self._start_workload(core, i, wls[i])
                    progress = True
            if self.dram_free and self.ready:
                _, _, tid = heapq.heappop(self.ready)
                x = self.xfers[tid]
                x.start = self.loop.now
                dur = 0.0 if self.bw is None else x.bytes / self.bw
                self.dram_free = False
                self.loop.schedule(self.loop.now + dur, self._dram_done, tid)
                progress = True
            progress |= self._start_links()

    def _start_links(self) -> bool:
        started = False
        for core, queue in self.port_queue.items():
            if self.port_free[core] and queue:
                key = queue.pop(0)
                link = self.links[key]
                assert self.mesh is not None
                link.start = self.loop.now
                self.port_free[core] = False
                dur = self.mesh.seconds(link.src, link.dst, link.bytes)
                self.loop.schedule(self.loop.now + dur, self._link_done, key)
                started = True
        return started

    def _start_workload(self, core: int, i: int, w: Workload) -> None:
        self.busy[core] = True
        self.start[(core, i)] = self.loop.now
        self.loop.schedule(self.loop.now + w.time / self.clock, self._workload_done, core, i)
        for tid in self.on_start.pop((core, i), ()):
            self._release(tid)

    def _workload_done(self, core: int, i: int) -> None:
        self.busy[core], self.next[core] = False, i + 1
        self.done[(core, i)] = self.loop.now
        for tid in self.stores_of.get((core, i), ()):
            self.xfers[tid].waits = 1
            self._release(tid)
        self.port_queue[core].extend(self.sends.get((core, i), ()))
        self._dispatch()

    def _dram_done(self, tid: int) -> None:
        x = self.xfers[tid]
        x.end, self.dram_free = self.loop.now, True
        for t in self.after_store.get(tid, ()):
            self._release(t)
        self._dispatch()

    def _link_done(self, key: tuple[int, int]) -> None:
        link = self.links[key]
        link.end = self.loop.now
        self.port_free[link.src] = True
        self._dispatch()

    def run(self) -> ReplayResult:
        for x in self.xfers.values():
            if x.kind != "store" and x.waits == 0:
                heapq.heappush(self.ready, (0.0, x.order, x.tid))
        self._dispatch()
        self.loop.run()
        self._check_finished()
        return self._result()

    def _check_finished(self) -> None:
        for core, wls in self.ir.cores:
            if self.next[core] < len(wls):
                w = wls[self.next[core]]
                raise InfeasibleError(
                    f"simulation stalled: workload {w.workload_id} ({w.layer_name}) on core "
                    f"{core} waits for an input that never arrives; run 'npuweave ir validate'")

    def _result(self) -> ReplayResult:
        spans = []
        for core, wls in self.ir.cores:
            for i, w in enumerate(wls):
                spans.append(Span(f"core {core}", w.layer_name, w.layer_type,
                                  self.start[(core, i)], self.done[(core, i)], core,
                                  w.workload_id))
        xspans = sorted((Span("DRAM", f"{x.kind} #{x.tid}", x.kind, x.start, x.end, bytes=x.bytes)
                         for x in self.xfers.values() if x.end < _NEVER),
                        key=lambda s: (s.start, s.end))
        mspans = sorted((Span(f"mesh {ln.src}", f"#{tid} {ln.src}->{ln.dst}", "mesh", ln.start,
                              ln.end, ln.src, bytes=ln.bytes)
                         for (tid, _), ln in self.links.items() if ln.end < _NEVER),
                        key=lambda s: (s.start, s.end))
        busy = tuple((c, sum(s.duration for s in spans if s.core == c)) for c in self.ir.core_ids)
        end = max([s.end for s in spans] + [s.end for s in xspans] + [s.end for s in mspans],
                  default=0.0)
        total = sum(w.time for w in self.ir.workloads()) / self.clock
        return ReplayResult(tuple(spans), tuple(xspans), end, busy,
                         sum(s.duration for s in xspans), total, self.clock, self.bw,
                         tuple(mspans))


@dataclass(slots=True)
class _Link:
    src: int
    dst: int
    bytes: int
    start: float = _NEVER
    end: float = _NEVER


def _input_ids(w: Workload) -> list[int]:
    tids = [t for f in w.ifmaps for t in f.transfer_ids]
    return tids + (list(w.weight.transfer_ids) if w.weight is not None else [])


def _slice_bytes(ir: IR, core: int, tid: int, producer: dict[int, tuple[int, int]],
                 src: int) -> int:
    """Bytes of ``tid`` that ``core`` receives: its L2 sources with that id (a tile moves only
    its slice), else the producer's whole ofmap."""
    for w in ir.workloads(core):
        sizes = [s.size for b in w.buffer for s in (b.sources or ()) if s.transfer_id == tid]
        if sizes:
            return max(sizes)
    p = producer[tid]
    w = ir.workloads(src)[p[1]]
    return next(o.size for o in w.ofmaps if o.transfer_id == tid)


def _first_holders(ir: IR) -> dict[int, tuple[int, int, int]]:
    """transfer id -> (core, workload index, tensor_order) of the first snapshot holding it."""
    first: dict[int, tuple[int, int, int]] = {}
    for core, wls in ir.cores:
        for i, w in enumerate(wls):
            held = [(t, b.tensor_order) for b in w.buffer for t in (b.transfer_ids or ())]
            held += [(t, e.tensor_order if e.tensor_order is not None else 1 << 30)
                     for e in (w.weight_buffer or ()) if e.source == "DDR" for t in e.transfer_ids]
            for tid, order in held:
                if tid not in first or i < first[tid][1]:
                    first[tid] = (core, i, order)
    return first


def simulate(ir: IR, dram_bw: float | None = 16e9, clock_hz: float = 1e9,
             noc_bw: float | None = None, hop_cycles: int = 0) -> ReplayResult:
    """Replay ``ir`` with DRAM and mesh transfers overlapped with compute.

    Parameters
    ----------
    dram_bw : bytes per second of the single DRAM channel; None for instantaneous transfers.
    clock_hz : core clock that turns the IR's ``time`` cycles into seconds.
    noc_bw : bytes per second of a core-to-core transfer; None makes them free.
    hop_cycles : cycles per mesh hop of a core-to-core transfer.

    Examples
    --------
    >>> from npuweave.compile.gemini import load
    >>> r = simulate(load("int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"))  # doctest: +SKIP
    >>> r.makespan >= r.sum_time  # one core: DRAM stalls can only add  # doctest: +SKIP
    True
    """
    if dram_bw is not None and not dram_bw > 0:
        raise ConfigError(f'"dram_bw" must be > 0 bytes/s, got {dram_bw}')
    if not clock_hz > 0:
        raise ConfigError(f'"clock_hz" must be > 0 Hz, got {clock_hz}')
    if noc_bw is not None and not noc_bw > 0:
        raise ConfigError(f'"noc_bw" must be > 0 bytes/s, got {noc_bw}')
    if hop_cycles < 0:
        raise ConfigError(f'"hop_cycles" must be >= 0, got {hop_cycles}')
    for core, wls in ir.cores:
        for w in wls:
            if w.time < 0:
                raise IRError(f"core {core} workload {w.workload_id} ({w.layer_name}): time "
                              f"{w.time} cycles is negative; fix the file ('npuweave ir "
                              f"validate' lists every problem)")
    mesh = None if noc_bw is None else Mesh(max(ir.xlen, 1), noc_bw, hop_cycles / clock_hz)
    return _Replay(ir, dram_bw, clock_hz, mesh).run()
