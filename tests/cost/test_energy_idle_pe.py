"""Idle PE-cycles (``pe_idle_pj``): the array costs every PE every cycle it runs.

Golden numbers are worked by hand from SCALE-Sim v3's weight-stationary fold formula
(``2R + C + m - 2`` cycles per fold, minus one per GEMM), not taken from npuweave's output.
"""

from __future__ import annotations

import pytest

from npuweave.cost import layer_cost
from npuweave.cost.energy import idle_pe_cycles, layer_accesses, layer_energy
from npuweave.errors import ConfigError
from npuweave.hardware import NPU, npu_from_dict
from npuweave.hardware.energy import EnergySpec, default_energy
from npuweave.workload.layer import Layer, LayerKind

# (10 x 4) @ (4 x 4): 160 MACs, one fold on a 4x4 and on an 8x8 array
GEMM = Layer("g", LayerKind.GEMM, ("Gemm",), (1, 10, 4, 4), 160, 0, 16, 40, 40)
SPEC = EnergySpec(mac_pj=2.0, pe_idle_pj=0.5)


def _array(size: int) -> NPU:
    return NPU(name=f"a{size}", pe_rows=size, pe_cols=size, clock_hz=1e9, dram_bw=20e9,
               weight_buffer=1 << 20, act_buffer=1 << 20, precision_bits=16, energy=SPEC)


@pytest.mark.parametrize(("size", "idle"), [
    (4, 16 * (2 * 4 + 4 + 10 - 2 - 1) - 160),   # 16 PEs x 19 cycles - 160 MACs = 144
    (8, 64 * (2 * 8 + 8 + 10 - 2 - 1) - 160),   # 64 PEs x 31 cycles - 160 MACs = 1824
])
def test_idle_pe_energy_scales_with_the_pes(size, idle):
    npu = _array(size)
    cost = layer_cost(GEMM, npu)
    assert idle_pe_cycles(GEMM, cost, npu) == idle
    e = layer_energy(GEMM, cost, layer_accesses(GEMM, npu), npu, SPEC)
    # the useful MACs cost the same on both arrays; the idle PE-cycles grow with the PEs
    assert e.compute_j == pytest.approx((160 * 2.0 + idle * 0.5) * 1e-12)


def test_a_full_array_has_no_idle_pes_but_the_pipeline():
    # 4x4 array, k = n = 4: every PE holds a weight; idle PE-cycles are fill, skew and drain only
    npu = _array(4)
    cost = layer_cost(GEMM, npu)
    assert idle_pe_cycles(GEMM, cost, npu) == 16 * 19 - 160
    no_idle = EnergySpec(mac_pj=2.0)
    e = layer_energy(GEMM, cost, layer_accesses(GEMM, npu), npu, no_idle)
    assert e.compute_j == pytest.approx(160 * 2.0e-12)


def test_vector_layers_have_no_idle_pes():
    pool = Layer("pool", LayerKind.VECTOR, ("MaxPool",), None, 0, 1000, 0, 4000, 1000)
    npu = _array(8)
    assert idle_pe_cycles(pool, layer_cost(pool, npu), npu) == 0


def test_default_table_and_static_power_scale_with_the_pes():
    small, large = default_energy(16, 32 * 32), default_energy(16, 128 * 128)
    assert small.pe_idle_pj == small.mac_pj == 1.5  # ungated: an idle PE-cycle costs a MAC
    assert dict(large.static_mw)["array"] == pytest.approx(16 * dict(small.static_mw)["array"],
                                                            rel=1e-3)


def test_pe_idle_units_are_checked():
    base = {"pe_rows": 4, "pe_cols": 4, "clock_hz": "1 GHz", "dram_bw": "10 GB/s",
            "weight_buffer": "1 MiB", "act_buffer": "1 MiB"}
    npu = npu_from_dict({**base, "energy": {"pe_idle_pj": "80 fJ"}}, "toy.yaml")
    assert npu.energy is not None and npu.energy.pe_idle_pj == pytest.approx(0.08)
    for bad in ("5 mW", -1, float("nan")):
        with pytest.raises(ConfigError, match="energy.pe_idle_pj"):
            npu_from_dict({**base, "energy": {"pe_idle_pj": bad}}, "toy.yaml")
