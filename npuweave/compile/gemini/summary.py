"""What an IR file holds, in numbers: cores, workloads, DRAM traffic, L2 use, estimated time."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from npuweave.compile.gemini.model import IR, Workload


@dataclass(frozen=True, slots=True)
class CoreSummary:
    core: int
    workloads: int
    by_type: tuple[tuple[str, int], ...]
    #: sum of the workloads' ``time`` fields (cycles)
    time_cycles: int
    #: largest L2 snapshot (sum of tensor sizes) and the workload it belongs to
    peak_l2_bytes: int
    peak_l2_workload: int | None


@dataclass(frozen=True, slots=True)
class Traffic:
    """DRAM transfers of one direction and type."""

    direction: str  # "load" (DRAM -> core, the file's "out") or "store" ("in")
    type: str
    count: int
    bytes: int


@dataclass(frozen=True, slots=True)
class Summary:
    cores: tuple[CoreSummary, ...]
    mesh: tuple[int, int]
    buffersize: int
    batch: int
    traffic: tuple[Traffic, ...]

    @property
    def workloads(self) -> int:
        return sum(c.workloads for c in self.cores)

    @property
    def peak_l2_bytes(self) -> int:
        return max((c.peak_l2_bytes for c in self.cores), default=0)

    @property
    def time_cycles(self) -> int:
        """Estimated time: the busiest core's sum of workload times (cores run in parallel)."""
        return max((c.time_cycles for c in self.cores), default=0)

    def traffic_bytes(self, direction: str, type: str | None = None) -> int:
        return sum(t.bytes for t in self.traffic
                   if t.direction == direction and (type is None or t.type == type))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(workloads=self.workloads, peak_l2_bytes=self.peak_l2_bytes,
                 time_cycles=self.time_cycles)
        return d


def _core(core: int, wls: tuple[Workload, ...]) -> CoreSummary:
    types = Counter(w.layer_type for w in wls)
    peak, at = 0, None
    for w in wls:
        used = sum(b.size for b in w.buffer)
        if used > peak:
            peak, at = used, w.workload_id
    return CoreSummary(core, len(wls), tuple(sorted(types.items())), sum(w.time for w in wls),
                       peak, at)


def _traffic(ir: IR) -> tuple[Traffic, ...]:
    rows: dict[tuple[str, str], list[int]] = {}
    for e in ir.loads:
        row = rows.setdefault(("load", e.type), [0, 0])
        row[0] += 1
        row[1] += e.size
    # a DRAM "in" entry has no size: it is the size of the ofmap it stores
    ofmap_size = {o.transfer_id: o.size for w in ir.workloads() for o in w.ofmaps}
    for s in ir.stores:
        row = rows.setdefault(("store", "fmap"), [0, 0])
        row[0] += 1
        row[1] += ofmap_size.get(s.transfer_id, 0)
    return tuple(Traffic(d, t, n, b) for (d, t), (n, b) in sorted(rows.items()))


def summarize(ir: IR) -> Summary:
    """Summarize an IR.

    Examples
    --------
    >>> from npuweave.compile.gemini import load
    >>> s = summarize(load("int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"))  # doctest: +SKIP
    >>> s.workloads, s.traffic_bytes("load", "weight")  # doctest: +SKIP
    (69, 22099712)
    """
    batch = max((w.box.upper[0] + 1 for w in ir.workloads()), default=0)
    return Summary(
        cores=tuple(_core(c, wls) for c, wls in ir.cores), mesh=(ir.xlen, ir.ylen),
        buffersize=ir.buffersize, batch=batch, traffic=_traffic(ir),
    )
