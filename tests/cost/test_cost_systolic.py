"""systolic-ws: fold arithmetic against SCALE-Sim v3 and hand-computed layers."""

from __future__ import annotations

import pytest
from cost_helpers import conv, gemm, npu, vector

from npuweave.cost.systolic import gemm_cycles, vector_cycles, ws_fold_cycles, ws_gemm_cycles
from npuweave.hardware import preset
from npuweave.workload.layer import Layer, LayerKind

# "Total Cycles" that scalesim==3.0.0 (dataflow ws, huge SRAMs, no stalls) printed for GEMM
# topologies (M, N, K) on the given arrays; see benchmarks/scalesim_crosscheck.py.
SCALESIM_V3 = [
    # (rows, cols, m, k, n, cycles)  folds = ceil(k/rows) * ceil(n/cols)
    (4, 4, 10, 4, 4, 19),     # 1 fold * (8 + 4 + 10 - 2 = 20) - 1
    (4, 4, 10, 9, 6, 119),    # 3 * 2 folds * 20 - 1
    (4, 4, 1, 2, 3, 10),      # 1 * (8 + 4 + 1 - 2 = 11) - 1: a tiny fold pays full fill/drain
    (4, 4, 7, 5, 9, 101),     # 2 * 3 folds * (8 + 4 + 7 - 2 = 17) - 1
    (8, 4, 49, 61, 29, 4287),  # 8 * 8 folds * (16 + 4 + 49 - 2 = 67) - 1
    (4, 8, 49, 61, 29, 4031),  # 16 * 4 folds * (8 + 8 + 49 - 2 = 63) - 1
    (16, 16, 58, 56, 25, 831),  # 4 * 2 folds * (32 + 16 + 58 - 2 = 104) - 1
    (32, 8, 39, 1, 49, 762),   # 1 * 7 folds * (64 + 8 + 39 - 2 = 109) - 1
    # through SCALE-Sim's conv front end: 16x16x8 input, 3x3, 12 filters -> m = 14*14, k = 72
    (16, 16, 196, 72, 12, 1209),  # 5 * 1 folds * (32 + 16 + 196 - 2 = 242) - 1
    (32, 8, 64, 20, 9, 267),   # 15x15x20, 1x1 stride 2 -> 8*8; 1 * 2 folds * 134 - 1
]


@pytest.mark.parametrize(("rows", "cols", "m", "k", "n", "cycles"), SCALESIM_V3)
def test_gemm_cycles_equal_scalesim_v3(rows, cols, m, k, n, cycles):
    assert ws_gemm_cycles(m, k, n, rows, cols) == cycles
    assert gemm_cycles(gemm(m, k, n), npu(rows, cols)) == cycles


def test_fold_is_fill_stream_skew_drain():
    # 128 weight rows shifted in, 100 activation rows, 127 skew, 127 drain
    assert ws_fold_cycles(100, 128, 128) == 128 + 100 + 127 + 127


def test_conv_on_prema_by_hand():
    layer = conv(64, 64, 56)  # k = 64*9 = 576, n = 64, m = 56*56 = 3136
    prema = preset("prema")
    # ceil(576/128) * ceil(64/128) = 5 folds of 256 + 128 + 3136 - 2 = 3518 cycles, minus one
    assert gemm_cycles(layer, prema) == 5 * 3518 - 1 == 17589
    # fused ReLU: 64 * 3136 ops on 128 lanes = 1568 cycles, after the array
    assert vector_cycles(layer, prema) == 1568


def test_batch_streams_more_rows_through_the_same_folds():
    prema = preset("prema")
    # batch 4: m = 4 * 3136 = 12544; 5 folds * (384 + 12544 - 2) - 1
    assert gemm_cycles(conv(64, 64, 56), prema, batch=4) == 5 * 12926 - 1


def test_depthwise_maps_one_channel_at_a_time():
    dw = conv(32, 32, 112, groups=32)  # count 32, k = 9, n = 1, m = 12544
    # one array: 32 single-fold SCALE-Sim runs of 256 + 128 + 12544 - 2 = 12926 cycles, each -1
    assert gemm_cycles(dw, preset("prema")) == 32 * 12926 - 32 == 413600
    # 12 arrays of 64x64: ceil(32/12) = 3 rounds of 128 + 64 + 12544 - 2 = 12734, minus 3
    assert gemm_cycles(dw, preset("compute-centric")) == 3 * 12734 - 3 == 38199


def test_grouped_conv_counts_groups():
    rx = conv(128, 128, 56, groups=32)  # count 32, k = 4*9 = 36, n = 4, m = 3136
    # 32 folds * (8 + 4 + 3136 - 2 = 3146) - 32 on a 4x4 array
    assert gemm_cycles(rx, npu(4, 4)) == 32 * ceil_div(36, 4) * 3146 - 32


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def test_arrays_share_folds_round_robin():
    layer = gemm(10, 9, 6)  # 3 x 2 = 6 folds of 20 cycles on 4x4
    assert gemm_cycles(layer, npu(arrays=1)) == 6 * 20 - 1
    assert gemm_cycles(layer, npu(arrays=4)) == 2 * 20 - 1   # ceil(6/4) = 2 rounds
    assert gemm_cycles(layer, npu(arrays=6)) == 20 - 1
    assert gemm_cycles(layer, npu(arrays=2, cores=3)) == 20 - 1  # cores multiply arrays


def test_attention_batch_multiplies_heads():
    att = gemm(128, 64, 128, count=12, kind=LayerKind.MATMUL)
    # batch 2: 24 products of one fold each, 256 + 128 + 128 - 2 = 510 cycles, each -1
    assert gemm_cycles(att, preset("prema"), batch=2) == 24 * 510 - 24


def test_recurrent_steps_run_back_to_back():
    lstm = gemm(1, 512, 1024, count=10, kind=LayerKind.RECURRENT, weights=512 * 1024)
    # batch 4 -> m = 4; per step 4 x 8 = 32 folds of 256 + 128 + 4 - 2 = 386; 10 steps
    assert gemm_cycles(lstm, preset("prema"), batch=4) == 320 * 386 - 10


def test_vector_layers_use_lanes():
    assert vector_cycles(vector(1000, 1000), preset("prema"), batch=3) == 24  # ceil(3000/128)
    toy = npu(vector_lanes=7)
    assert vector_cycles(vector(10, 10), toy) == 2  # ceil(10/7)
    assert gemm_cycles(vector(10, 10), toy) == 0


def test_empty_gemm_costs_nothing():
    empty = Layer("e", LayerKind.GEMM, ("Gemm",), (1, 0, 4, 4), 0, 0, 0, 0, 0)
    assert gemm_cycles(empty, npu()) == 0
