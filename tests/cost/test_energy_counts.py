"""Access counts and layer energy (``npuweave.cost.energy``) against hand work and SCALE-Sim v3.

Golden counts: every number below was worked out by hand from the rules in the module
docstring AND read from SCALE-Sim v3's ``DETAILED_ACCESS_REPORT.csv`` (``scalesim==3.0.0`` in a
scratch venv, ``/tmp/scalesim-venv``, weight stationary, 64 kB SRAMs, ``Bandwidth: 10``, 4x4
array), run on 2026-11-27; SCALE-Sim is not a dependency. The conv rows go through SCALE-Sim's
conv front end (unpadded inputs).
"""

from __future__ import annotations

import pytest

from npuweave.cost import layer_cost, profile_model
from npuweave.cost.energy import (
    Accesses,
    LayerEnergy,
    energy_spec,
    layer_accesses,
    layer_energy,
    line_words,
    ws_accesses,
)
from npuweave.hardware import NPU, preset
from npuweave.hardware.energy import EnergySpec
from npuweave.workload.layer import Layer, LayerKind

# (m, k, n) -> SCALE-Sim's six counters on a 4x4 array with 10-word DRAM lines
SCALESIM_4x4_BW10 = {
    # GEMM topology rows "M, N, K"
    (10, 9, 6): (180, 54, 180, 120, 80, 180),
    (49, 61, 29): (23912, 1769, 22736, 3140, 1960, 22736),
    (1, 300, 100): (7500, 30000, 7500, 300, 30000, 7500),
    (300, 40, 20): (60000, 800, 60000, 12000, 800, 60000),
    # conv rows: 8x8 input, 3x3 kernel, 2 -> 5 channels, stride 1 (m = 6*6, k = 3*3*2)
    (36, 18, 5): (1296, 90, 900, 720, 150, 900),
    # 9x9 input, 3x3 kernel, 3 -> 7 channels, stride 2 (m = 4*4, k = 27)
    (16, 27, 7): (864, 189, 784, 450, 220, 784),
}


@pytest.mark.parametrize("shape", list(SCALESIM_4x4_BW10))
def test_ws_counts_equal_scalesim(shape):
    m, k, n = shape
    got = ws_accesses(1, m, k, n, 4, 4, 10)
    assert tuple(got.to_dict().values()) == SCALESIM_4x4_BW10[shape]


def test_small_gemm_by_hand():
    # (10 x 9) @ (9 x 6) on 4x4: 3 row folds, 2 column folds.
    # ifmap: the 10x9 ifmap streams once per column fold = 180; filter: 54 weights once;
    # ofmap: 10x6 partial sums per row fold = 180; DRAM ifmap: 10 rows x 3 folds x 4 rows of
    # the array = 120 (a multiple of the 10-word line); filter: 9 x 2 folds x 4 = 72 -> 80.
    a = ws_accesses(1, 10, 9, 6, 4, 4, 10)
    assert a == Accesses(180, 54, 180, 120, 80, 180)


def test_small_conv_through_the_layer_and_a_scalesim_cfg(tmp_path):
    topo = tmp_path / "c.csv"
    topo.write_text("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                    "Channels, Num Filter, Strides,\nc1, 8, 8, 3, 3, 2, 5, 1,\n")
    cfg = tmp_path / "a.cfg"
    cfg.write_text("[general]\nrun_name = a\n[architecture_presets]\nArrayHeight: 4\n"
                   "ArrayWidth: 4\nIfmapSramSzkB: 64\nFilterSramSzkB: 64\nOfmapSramSzkB: 64\n"
                   "Bandwidth: 10\nDataflow: ws\n[run_presets]\nInterfaceBandwidth: USER\n")
    prof = profile_model(str(topo), str(cfg))
    assert line_words(prof.npu) == 10
    [acc] = prof.accesses()
    assert tuple(acc.to_dict().values()) == SCALESIM_4x4_BW10[(36, 18, 5)]


def _toy(energy: EnergySpec | None = None, **kw) -> NPU:
    base = dict(name="toy", pe_rows=4, pe_cols=4, clock_hz=1e9, dram_bw=20e9,
                weight_buffer=1 << 20, act_buffer=1 << 20, precision_bits=16, energy=energy)
    return NPU(**{**base, **kw})


FC = Layer("fc", LayerKind.GEMM, ("Gemm",), (1, 10, 9, 6), 540, 0, 54, 90, 60)


def test_layer_energy_by_hand():
    spec = EnergySpec(mac_pj=2.0, ifmap_sram_read_pj_per_byte=1.0,
                      filter_sram_read_pj_per_byte=3.0, ofmap_sram_write_pj_per_byte=5.0,
                      filter_sram_write_pj_per_byte=7.0, dram_pj_per_byte=11.0,
                      static_mw=(("array", 1000.0),))
    npu = _toy(spec)
    cost = layer_cost(FC, npu)
    acc = layer_accesses(FC, npu)
    e = layer_energy(FC, cost, acc, npu, spec)
    assert e.compute_j == pytest.approx(540 * 2.0e-12)
    # 2-byte elements: 180 ifmap reads x 2 B x 1 + 54 x 2 x 3 + 180 x 2 x 5; the 108 weight
    # bytes DRAM brings in are written into the filter SRAM at 7 pJ/B
    assert e.sram_j == pytest.approx((360 * 1 + 108 * 3 + 360 * 5 + 108 * 7) * 1e-12)
    assert e.dram_j == pytest.approx(108 * 11.0e-12)
    assert e.static_j == pytest.approx(1.0 * cost.time_s)


def test_scalesim_dram_counts_option():
    spec = EnergySpec(dram_pj_per_byte=1.0, dram_counts="scalesim")
    npu = _toy(spec)
    acc = layer_accesses(FC, npu)
    e = layer_energy(FC, layer_cost(FC, npu), acc, npu, spec)
    words = acc.dram_ifmap_reads + acc.dram_filter_reads + acc.dram_ofmap_writes
    assert e.dram_j == pytest.approx(2 * words * 1e-12)


def test_roofline_counts_every_operand_once():
    acc = layer_accesses(FC, _toy(), cost_model="roofline")
    assert acc == Accesses(90, 54, 60, 90, 54, 60)


def test_vector_layer_reads_input_and_writes_output_once():
    pool = Layer("pool", LayerKind.VECTOR, ("MaxPool",), None, 0, 1000, 0, 4000, 1000)
    acc = layer_accesses(pool, _toy(), batch=2)
    assert acc == Accesses(ifmap_sram_reads=8000, ofmap_sram_writes=2000)


def test_default_table_is_used_and_said_once():
    spec, note = energy_spec(_toy())
    assert spec.mac_pj > 0 and spec.static_power_w > 0
    assert note is not None and "no 'energy:' section" in note
    assert energy_spec(preset("memory-centric"))[1] is None


def test_every_preset_names_its_source():
    from npuweave.hardware import preset_names

    for name in preset_names():
        spec = preset(name).energy
        assert spec is not None and spec.source and spec.mac_pj > 0, name
        assert spec.dram_pj_per_byte > 0 and spec.static_power_w > 0, name


def test_layer_energy_adds():
    a = LayerEnergy(1.0, 2.0, 3.0, 4.0)
    assert (a + a).total_j == 20.0 and sum([a, a]).total_j == 20.0
