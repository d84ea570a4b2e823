"""The frozen NPU spec.

Units at this boundary: bytes, bytes/second, hertz. Cycles appear only as the DRAM latency
field (a hardware fact) and inside cost models.

An NPU has ``cores`` cores; each core has ``arrays`` systolic arrays of ``pe_rows x pe_cols``
multiply-accumulate units and a vector unit of ``vector_lanes`` operations per cycle. All
cores share the DRAM (``dram_bw`` bytes/s, ``dram_latency_cycles`` per transfer), the weight
buffer and the activation buffer (sizes in bytes). ``lmem_bytes``/``lmem_banks`` describe the
local memory the layer-group compiler allocates; ``global_mem_bytes`` the DRAM capacity.
A multi-core NPU (``cores`` on a ``mesh`` of rows x cols) gives each core ``l2_bytes`` of L2
and links neighbours with ``noc_bw`` bytes/s per link and ``noc_hop_cycles`` per hop.
``maestro_noc_bw`` is another network: the on-chip distribution network between the global
buffer and the PEs of MAESTRO's model, in elements per cycle (0: unconstrained); only the
``maestro`` cost model reads it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from npuweave.hardware.energy import EnergySpec


@dataclass(frozen=True, slots=True)
class NPU:
    """A frozen NPU description; build it with ``load_npu`` or ``preset``.

    Examples
    --------
    >>> npu = NPU(name="toy", pe_rows=4, pe_cols=4, clock_hz=1e9, dram_bw=1e9,
    ...           weight_buffer=1 << 20, act_buffer=1 << 20)
    >>> npu.peak_macs_per_s
    16000000000.0
    """

    name: str
    pe_rows: int
    pe_cols: int
    clock_hz: float
    dram_bw: float
    weight_buffer: int
    act_buffer: int
    arrays: int = 1
    cores: int = 1
    mesh: tuple[int, int] = (1, 1)
    extra_act_buffer: int = 0
    dram_latency_cycles: int = 0
    vector_lanes: int = 0
    precision_bits: int = 16
    lmem_bytes: int = 0
    lmem_banks: int = 1
    global_mem_bytes: int = 0
    dataflow: str = "ws"
    description: str = ""
    #: multi-core fields: each core's own L2 buffer (bytes), the bandwidth of one mesh link
    #: (bytes/s) and the latency of one mesh hop (cycles); 0 where the NPU has no mesh
    l2_bytes: int = 0
    noc_bw: float = 0.0
    noc_hop_cycles: int = 0
    #: MAESTRO's NoC between the global buffer and the PEs (``maestro`` cost model only), in
    #: elements per cycle at ``precision_bits``; 0 leaves it unconstrained (the default)
    maestro_noc_bw: int = 0
    #: per-access energies and static power (``npuweave.hardware.energy``); None: the default
    #: table for the NPU's precision, with a note saying so
    energy: EnergySpec | None = None

    @property
    def macs_per_cycle(self) -> int:
        return self.pe_rows * self.pe_cols * self.arrays * self.cores

    @property
    def peak_macs_per_s(self) -> float:
        return self.macs_per_cycle * self.clock_hz

    @property
    def peak_tops(self) -> float:
        """Peak tera-operations per second (one MAC = two operations)."""
        return 2.0 * self.peak_macs_per_s / 1e12

    @property
    def ridge_ops_per_byte(self) -> float:
        """Operations per DRAM byte at which compute and memory time balance."""
        return 2.0 * self.peak_macs_per_s / self.dram_bw

    @property
    def dram_latency_s(self) -> float:
        return self.dram_latency_cycles / self.clock_hz

    @property
    def element_bytes(self) -> int:
        """Bytes per element at the NPU's native arithmetic precision (rounded up)."""
        return (self.precision_bits + 7) // 8

    @property
    def lanes(self) -> int:
        """Vector operations per cycle over the whole NPU (default: one per PE column)."""
        return (self.vector_lanes or self.pe_cols) * self.arrays * self.cores

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["mesh"] = list(self.mesh)
        d["energy"] = self.energy.to_dict() if self.energy is not None else None
        return d


def toy_npu() -> NPU:
    """The toy NPU of the documentation's examples, where every time can be checked by hand:
    one PE at 1 Hz (a ``LayerCost``'s ``compute_s`` is used as given), 10 bytes/s of DRAM (a
    fetch takes ``weight_bytes / 10`` seconds), a 100-byte weight buffer and a 1-byte
    activation buffer.

    Examples
    --------
    >>> npu = toy_npu()
    >>> npu.dram_bw, npu.weight_buffer
    (10.0, 100)
    """
    return NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1.0, dram_bw=10.0, weight_buffer=100,
               act_buffer=1)
