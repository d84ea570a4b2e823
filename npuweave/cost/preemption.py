"""What preempting a running request costs: a pure function of the mechanism and the state.

Mechanisms (``npuweave.schedule.protocol.Mechanism`` names them; here they are plain strings
so the cost stage does not import the scheduler):

* ``checkpoint``: store the live on-chip state of the request to DRAM, restore it on resume.
  Live state at a boundary after unit ``i``:

  - a whole layer (or its last weight tile) finished: its output activations, which the next
    layer reads: ``out_elems * batch * element_bytes``;
  - a weight tile of a layer split across the buffer finished, more tiles to come: the
    layer's input activations (the remaining tiles read them again) plus the accumulators of
    its partial sums, ``out_elems * batch * ACCUMULATOR_BYTES``.

  Each direction is one DMA stream: ``latency + bytes / bandwidth``.
* ``kill``: nothing is stored; the request restarts from its first unit, so the PE time of
  the work done so far is lost (``lost_s``).
* ``drain``: nothing is stored or lost; the request runs to its end before the switch (the
  waiting is the cost, and the simulator measures it in the latency of the preempting one).

Granularity: npuweave preempts at *unit* boundaries, that is at layer boundaries, or at
weight-tile boundaries for layers split because their weights exceed the weight buffer
(``npuweave.schedule.tiling``); no cost model exposes finer tiles to the simulator.

Examples
--------
>>> from npuweave.hardware import NPU
>>> npu = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1e9, dram_bw=1e9,
...           weight_buffer=1 << 20, act_buffer=1 << 20, dram_latency_cycles=100)
>>> c = preemption_cost("checkpoint", 4000, npu)
>>> c.store_s, c.restore_s  # 100 ns latency + 4000 B at 1 GB/s, each way
(4.1e-06, 4.1e-06)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from npuweave.errors import ConfigError
from npuweave.hardware.npu import NPU

MECHANISMS = ("checkpoint", "kill", "drain")
ACCUMULATOR_BYTES = 4  # 32-bit partial sums


@dataclass(frozen=True, slots=True)
class PreemptionCost:
    """Price of one preemption: DMA bytes and seconds each way, and PE work thrown away."""

    mechanism: str
    store_bytes: int = 0
    store_s: float = 0.0
    restore_bytes: int = 0
    restore_s: float = 0.0
    lost_s: float = 0.0

    @property
    def overhead_s(self) -> float:
        """DMA time added by the mechanism (store plus restore)."""
        return self.store_s + self.restore_s

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def live_bytes(out_elems: int, in_elems: int, batch: int, element_bytes: int,
               tile_done: bool = True) -> int:
    """Bytes of on-chip state live after a unit: outputs when its layer is done, else the
    layer's inputs plus its accumulators (see the module docstring).

    Examples
    --------
    >>> live_bytes(1000, 500, 2, 2)                   # layer done: 1000 * 2 * 2
    4000
    >>> live_bytes(1000, 500, 2, 2, tile_done=False)  # 500*2*2 inputs + 1000*2*4 partial sums
    10000
    """
    if tile_done:
        return out_elems * batch * element_bytes
    return in_elems * batch * element_bytes + out_elems * batch * ACCUMULATOR_BYTES


def transfer_s(nbytes: int, latency_s: float, bw: float) -> float:
    """One DMA stream of ``nbytes``: ``latency_s`` plus bytes over ``bw`` bytes/s (0 for 0
    bytes). The serving simulator charges its checkpoints with it too (``TenantUnits``).

    Examples
    --------
    >>> transfer_s(4000, 100e-9, 1e9), transfer_s(0, 100e-9, 1e9)
    (4.1e-06, 0.0)
    """
    return latency_s + nbytes / bw if nbytes > 0 else 0.0


def preemption_cost(mechanism: str, state_bytes: int, npu: NPU,
                    done_compute_s: float = 0.0) -> PreemptionCost:
    """Cost of preempting a request whose live state is ``state_bytes`` and which has done
    ``done_compute_s`` PE seconds of work in its current pass.

    Examples
    --------
    >>> from npuweave.hardware import toy_npu
    >>> npu = toy_npu()
    >>> preemption_cost("kill", 40, npu, done_compute_s=3.0).lost_s
    3.0
    >>> preemption_cost("drain", 40, npu).overhead_s
    0.0
    """
    if mechanism not in MECHANISMS:
        raise ConfigError(f"unknown preemption mechanism {mechanism!r}; choose one of: "
                          f"{', '.join(MECHANISMS)}")
    if isinstance(state_bytes, bool) or not isinstance(state_bytes, int) or state_bytes < 0:
        raise ConfigError(f"preemption state must be a whole number of bytes >= 0, got "
                          f"{state_bytes!r}")
    if mechanism == "checkpoint":
        t = transfer_s(state_bytes, npu.dram_latency_s, npu.dram_bw)
        return PreemptionCost(mechanism, state_bytes, t, state_bytes, t)
    if mechanism == "kill":
        return PreemptionCost(mechanism, lost_s=float(done_compute_s))
    return PreemptionCost(mechanism)
