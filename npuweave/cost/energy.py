"""Energy of one layer: access counts times per-access energy, plus static power times time.

**Access counts** (elements, ``Accesses``) use SCALE-Sim v3's counter names. For a layer's GEMMs
``(count, m, k, n)`` (whole batch, see ``batched_gemm``) on an ``R x C`` weight-stationary array,
with ``rf = ceil(k/R)`` row folds and ``cf = ceil(n/C)`` column folds, SCALE-Sim 3.0.0 counts,
per GEMM (checked by ``benchmarks/scalesim_energy_crosscheck.py``):

* ``ifmap_sram_reads = m * k * cf`` (every column fold streams the whole ifmap again);
* ``filter_sram_reads = k * n`` (each weight enters the array once);
* ``ofmap_sram_writes = m * n * rf`` (every row fold writes its partial sums);
* ``dram_ifmap_reads = roundup(m * rf * R, W)``: its prefetcher streams the ifmap operand
  matrix fold by fold, im2col duplicates and the null padding of a ragged last fold included,
  in lines of ``W`` words (``W`` = DRAM words per cycle, ``dram_bw / clock / element bytes``;
  SCALE-Sim v3 itself takes this line from ``[layout] IfmapSRAMBankBandwidth`` and
  ``FilterSRAMBankBandwidth``, so a config compared with npuweave sets them to ``Bandwidth``);
* ``dram_filter_reads = roundup(k * cf * C, W)``, likewise for the filter;
* ``dram_ofmap_writes = m * n * rf`` (every partial sum drains to DRAM).

The DRAM counters are SCALE-Sim's when each operand's stream fits its SRAM's active half;
beyond that SCALE-Sim's prefetcher re-fetches in an order that depends on its line layout and
npuweave keeps the closed form. ``systolic-ws``, ``systolic-ws-db``, ``maestro`` and ``prema``
use these rules (the same array, the same weight-stationary mapping; double buffering changes
time, not counts). ``roofline`` counts the ideal: every operand element once in SRAM and in
DRAM. Layers without GEMM (pooling, norms, embeddings) read their input from the ifmap SRAM and
write their output to the ofmap SRAM once; an embedding reads its gathered rows from DRAM.

**Energy** (``layer_energy``): compute = MACs x ``mac_pj`` + idle PE-cycles x ``pe_idle_pj``
+ vector ops x ``vector_op_pj``, where the idle PE-cycles (``idle_pe_cycles``) are the array's
``PEs x cycles`` less the useful MACs, over the cycles the array runs (the layer's compute
cycles less its vector-unit cycles; DRAM stalls not included), so an array that a layer fills
poorly pays for its unused PEs;
SRAM = each buffer's reads and writes in bytes x its pJ/B, where the DRAM traffic also fills
(writes) the ifmap and filter SRAMs and drains (reads) the ofmap SRAM; DRAM = bytes x
``dram_pj_per_byte``; static = static power x the layer's time alone (``LayerCost.time_s``).
DRAM bytes follow ``EnergySpec.dram_counts``: ``traffic`` (the cost model's own weight and
spill bytes, the traffic the time model moves) or ``scalesim`` (the counters above). On-chip
data is at the NPU's ``precision_bits``; weight formats change DRAM weight bytes only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from npuweave.cost.systolic import batched_gemm, vector_cycles
from npuweave.cost.traffic import cdiv
from npuweave.cost.types import CostRecord, LayerCost
from npuweave.hardware.energy import EnergySpec, default_energy
from npuweave.hardware.npu import NPU
from npuweave.workload.layer import Layer, LayerKind

PJ = 1e-12


@dataclass(frozen=True, slots=True)
class Accesses(CostRecord):
    """Element counts of one layer, under SCALE-Sim v3's counter names; adds with ``+``."""

    ifmap_sram_reads: int = 0
    filter_sram_reads: int = 0
    ofmap_sram_writes: int = 0
    dram_ifmap_reads: int = 0
    dram_filter_reads: int = 0
    dram_ofmap_writes: int = 0


@dataclass(frozen=True, slots=True)
class LayerEnergy(CostRecord):
    """Joules of one layer (or, after ``+``, of several), split by where they are spent."""

    compute_j: float = 0.0
    sram_j: float = 0.0
    dram_j: float = 0.0
    static_j: float = 0.0

    @property
    def total_j(self) -> float:
        return self.dynamic_j + self.static_j

    @property
    def dynamic_j(self) -> float:
        return self.compute_j + self.sram_j + self.dram_j

    def to_dict(self) -> dict[str, float]:
        return {**asdict(self), "total_j": self.total_j}


def _roundup(x: int, line: int) -> int:
    return cdiv(x, line) * line


def line_words(npu: NPU) -> int:
    """SCALE-Sim's DRAM line: words per cycle of the NPU's DRAM interface (at least 1)."""
    return max(1, round(npu.dram_bw / npu.clock_hz / npu.element_bytes))


def ws_accesses(count: int, m: int, k: int, n: int, rows: int, cols: int, line: int) -> Accesses:
    """SCALE-Sim v3's weight-stationary counters of ``count`` (m x k) @ (k x n) GEMMs.

    Examples
    --------
    >>> a = ws_accesses(1, 10, 9, 6, 4, 4, 10)  # 3 row folds, 2 column folds
    >>> a.ifmap_sram_reads, a.filter_sram_reads, a.ofmap_sram_writes
    (180, 54, 180)
    >>> a.dram_ifmap_reads, a.dram_filter_reads, a.dram_ofmap_writes
    (120, 80, 180)
    """
    rf, cf = cdiv(k, rows), cdiv(n, cols)
    return Accesses(count * m * k * cf, count * k * n, count * m * n * rf,
                    count * _roundup(m * rf * rows, line), count * _roundup(k * cf * cols, line),
                    count * m * n * rf)


def _no_gemm(layer: Layer, npu: NPU, batch: int) -> Accesses:
    gathered = 0
    if layer.kind is LayerKind.EMBEDDING:
        gathered = batch * layer.gather_elems
        gathered = min(layer.weight_elems, gathered) if layer.weight_elems else gathered
    return Accesses(ifmap_sram_reads=batch * layer.in_elems, ofmap_sram_writes=batch * layer.out_elems,
                    dram_filter_reads=gathered)


def layer_accesses(layer: Layer, npu: NPU, batch: int = 1,
                   cost_model: str = "systolic-ws") -> Accesses:
    """Access counts of ``layer`` at ``batch`` under ``cost_model`` (see the module docstring).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> layer_accesses(fc, preset("prema")).filter_sram_reads
    2560
    """
    shape = batched_gemm(layer, batch)
    if shape is None or shape[0] * shape[1] * shape[2] * shape[3] == 0:
        return _no_gemm(layer, npu, batch)
    count, m, k, n = shape
    if cost_model == "roofline":
        return Accesses(count * m * k, count * k * n, count * m * n,
                        count * m * k, count * k * n, count * m * n)
    return ws_accesses(count, m, k, n, npu.pe_rows, npu.pe_cols, line_words(npu))


def energy_spec(npu: NPU) -> tuple[EnergySpec, str | None]:
    """The NPU's energy spec, and a note when it had none and the default table is used."""
    if npu.energy is not None:
        if not npu.energy.defaulted:
            return npu.energy, None
        return npu.energy, (f"NPU {npu.name!r}: 'energy:' leaves out "
                            f"{', '.join(npu.energy.defaulted)}; those take the default table "
                            f"(npuweave.hardware.energy.default_energy)")
    note = (f"NPU {npu.name!r} has no 'energy:' section; using the default "
            f"{npu.precision_bits}-bit table (Horowitz ISSCC 2014 at 45 nm, HBM2 3.9 pJ/bit, "
            f"static power scaled from TPUv1's idle die; npuweave.hardware.energy)")
    return default_energy(npu.precision_bits, npu.macs_per_cycle), note


def _dram_bytes(acc: Accesses, cost: LayerCost, spec: EnergySpec, e: int) -> tuple[int, int, int]:
    """DRAM bytes (ifmap read, filter read, ofmap write) under ``spec.dram_counts``."""
    if spec.dram_counts == "scalesim":
        return acc.dram_ifmap_reads * e, acc.dram_filter_reads * e, acc.dram_ofmap_writes * e
    half = cost.spill_bytes // 2
    return cost.spill_bytes - half, cost.weight_bytes, half


def idle_pe_cycles(layer: Layer, cost: LayerCost, npu: NPU, batch: int = 1) -> int:
    """PE-cycles without a useful MAC while ``layer``'s array runs (0 for layers without MACs).

    The array runs for the layer's compute cycles less its vector-unit cycles; every one of the
    NPU's ``macs_per_cycle`` PEs spends each of those cycles, useful or not.

    Examples
    --------
    >>> from npuweave.cost.types import CostRecord, LayerCost
    >>> fc = Layer("fc", LayerKind.GEMM, ("Gemm",), (1, 1, 8, 4), 32, 0, 32, 8, 4)
    >>> npu = NPU("toy", 4, 4, 1e9, 1e9, weight_buffer=1024, act_buffer=1 << 20)
    >>> idle_pe_cycles(fc, LayerCost(compute_s=10e-9, macs=32), npu)  # 16 PEs x 10 - 32
    128
    """
    if cost.macs <= 0:
        return 0
    cycles = round(cost.compute_s * npu.clock_hz) - vector_cycles(layer, npu, batch)
    return max(0, npu.macs_per_cycle * cycles - cost.macs)


def layer_energy(layer: Layer, cost: LayerCost, acc: Accesses, npu: NPU, spec: EnergySpec,
                 batch: int = 1) -> LayerEnergy:
    """Energy of one layer from its counts, its cost and the NPU's ``spec``.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.cost import layer_cost
    >>> from npuweave.workload.layer import toy_fc
    >>> npu = preset("prema")
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> spec, _ = energy_spec(npu)
    >>> e = layer_energy(fc, layer_cost(fc, npu), layer_accesses(fc, npu), npu, spec)
    >>> idle = idle_pe_cycles(fc, layer_cost(fc, npu), npu)
    >>> e.compute_j == (2560 * spec.mac_pj + idle * spec.pe_idle_pj) * 1e-12
    True
    """
    e = npu.element_bytes
    d_if, d_filt, d_of = _dram_bytes(acc, cost, spec, e)
    sram_pj = (e * (acc.ifmap_sram_reads * spec.ifmap_sram_read_pj_per_byte
                    + acc.filter_sram_reads * spec.filter_sram_read_pj_per_byte
                    + acc.ofmap_sram_writes * spec.ofmap_sram_write_pj_per_byte)
               + d_if * spec.ifmap_sram_write_pj_per_byte
               + d_filt * spec.filter_sram_write_pj_per_byte
               + d_of * spec.ofmap_sram_read_pj_per_byte)
    compute_pj = (cost.macs * spec.mac_pj + batch * layer.vector_ops * spec.vector_op_pj
                  + idle_pe_cycles(layer, cost, npu, batch) * spec.pe_idle_pj)
    return LayerEnergy(compute_pj * PJ, sram_pj * PJ, (d_if + d_filt + d_of) * spec.dram_pj_per_byte * PJ,
                       spec.static_power_w * cost.time_s)
