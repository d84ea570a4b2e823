"""NNP-I's 12 ICEs costed per engine (issue 21): the split, its sums, and pooled vs per-engine.

Hand values from MAESTRO's kcp_ws closed form (docs/COST_MODEL.md): cycles =
ceil(K / clusters) * ceil(C / P) * Yo * Xo * (N*R*S + 1) + 1 with P = 64 rows per cluster.
"""

from __future__ import annotations

from npuweave.cost.maestro import (
    MaestroDims,
    engine_cycles,
    engine_slices,
    maestro_dims,
    maestro_gemm_cycles,
)
from npuweave.hardware import preset
from npuweave.workload import load_layers
from npuweave.workload.layer import Layer, LayerKind

NNPI = preset("compute-centric")  # 12 arrays of 64x64


def macs(d: MaestroDims) -> int:
    yo, xo = d.out_yx
    per = d.n * d.r * d.s * yo * xo * d.c
    return d.runs * per * (1 if d.depthwise else d.k)


def test_split_deals_output_channels_and_sums_to_the_layer():
    d = MaestroDims(n=4, k=1000, c=512)
    parts = engine_slices(d, 12)
    # 1000 = 12 * 83 + 4: four engines get 84 channels, eight get 83
    assert [p.k for p in parts] == [84] * 4 + [83] * 8
    assert sum(p.k for p in parts) == 1000
    assert sum(macs(p) for p in parts) == macs(d) == 4 * 1000 * 512
    dw = MaestroDims(n=1, k=1, c=30, r=3, s=3, y=9, x=9, depthwise=True)
    assert [p.c for p in engine_slices(dw, 12)] == [3] * 6 + [2] * 6
    assert sum(macs(p) for p in engine_slices(dw, 12)) == macs(dw)


def test_per_engine_costs_of_a_small_fc_by_hand():
    # fc 256 -> 10 at batch 1: ten engines of one output channel each, two idle. Each engine:
    # ceil(1/64) * ceil(256/64) * 1 * 1 * (1 + 1) + 1 = 9 cycles; the layer takes 9.
    fc = Layer("fc", LayerKind.GEMM, ("Gemm",), (1, 1, 256, 10), 2560, 0, 2570, 256, 10)
    assert engine_cycles(fc, NNPI) == [9] * 10
    assert maestro_gemm_cycles(fc, NNPI) == 9
    slices = engine_slices(maestro_dims(fc, 1), 12)
    assert sum(macs(s) for s in slices) == fc.macs


def test_per_engine_equals_pooled_on_the_zoo():
    # kcp_ws puts K one per cluster: pooled has 12 x 64 = 768 clusters, an engine 64, and
    # ceil(ceil(K / 12) / 64) == ceil(K / 768) for every integer K (nested ceilings), so the
    # two readings give the same cycles whenever the NoC is unconstrained.
    for name in ("resnet50", "mobilenetv2", "bert-base:seq_len=32"):
        for layer in load_layers(name):
            for batch in (1, 16):
                assert (maestro_gemm_cycles(layer, NNPI, batch)
                        == maestro_gemm_cycles(layer, NNPI, batch, pooled=True)), layer.name


def test_one_array_npu_is_unchanged():
    tpu = preset("memory-centric")
    fc = Layer("fc", LayerKind.GEMM, ("Gemm",), (1, 1, 256, 10), 2560, 0, 2570, 256, 10)
    # one 128x128 array: 128 clusters of 128 -> ceil(10/128) * ceil(256/128) * 2 + 1 = 5
    assert maestro_gemm_cycles(fc, tpu) == maestro_gemm_cycles(fc, tpu, pooled=True) == 5
