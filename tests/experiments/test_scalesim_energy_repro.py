"""``npuweave reproduce scalesim-v3-energy``: SCALE-Sim v3's ViT-base statements beside ours."""

from __future__ import annotations

import pytest

from npuweave.cost.systolic import gemm_cycles
from npuweave.experiments.scalesim_energy import PUBLISHED, array_npu, reproduce
from npuweave.workload import load_layers


def test_rows_and_statements():
    rows, claims = reproduce()
    assert [r["array"] for r in rows] == ["32x32", "64x64", "128x128"]
    # runtime is the sum of the array layers' SCALE-Sim cycles
    npu = array_npu(32)
    expected = sum(gemm_cycles(la, npu) for la in load_layers("vit-base") if la.gemm)
    assert rows[0]["cycles"] == expected
    assert rows[0]["cycles"] > rows[1]["cycles"] > rows[2]["cycles"]
    # the same useful MACs on every array; every PE spends every cycle the array runs, so the
    # idle PE-cycles are PEs x cycles - MACs (SCALE-Sim v3's Accelergy accounting)
    macs = sum(la.macs for la in load_layers("vit-base") if la.gemm)
    for row, size in zip(rows, (32, 64, 128)):
        assert row["idle_pe_cycles"] == size * size * row["cycles"] - macs
    useful = [r["compute_j"] - r["idle_pe_j"] for r in rows]
    assert useful[0] == pytest.approx(useful[2]) == pytest.approx(macs * 1.5e-12)
    assert rows[0]["idle_pe_j"] < rows[1]["idle_pe_j"] < rows[2]["idle_pe_j"]
    by = {c["statement"]: c for c in claims}
    assert by["128x128 speedup over 32x32"]["theirs"] == PUBLISHED["speedup_128_over_32"] == 6.53
    assert by["128x128 speedup over 32x32"]["ours"] == pytest.approx(
        rows[0]["cycles"] / rows[2]["cycles"])
    assert by["32x32 energy efficiency over 128x128"]["theirs"] == 2.86
    assert by["best EDP"]["theirs"] == "64x64"
    assert by["best EDP"]["ours"] == min(rows, key=lambda r: r["edp_js"])["array"]


def test_static_power_scales_with_the_array_only():
    small, large = array_npu(32).energy, array_npu(128).energy
    assert dict(large.static_mw)["array"] == pytest.approx(16 * dict(small.static_mw)["array"])
    assert dict(large.static_mw)["sram"] == dict(small.static_mw)["sram"]
