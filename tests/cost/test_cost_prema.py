"""prema: PREMA Algorithm 1 against hand-computed tile times."""

from __future__ import annotations

import pytest
from cost_helpers import gemm, npu

from npuweave.cost import layer_cost
from npuweave.cost.prema import PREMA_ACC, prema_cycles, tile_cycles
from npuweave.hardware import preset

PREMA = preset("prema")  # 128x128, 700 MHz, 358 GB/s = 511.43 bytes per cycle


def test_inner_tile_on_prema_npu_is_compute_bound():
    # C1 = ACC + SH + 2 SW = 2048 + 128 + 256 = 2432
    # M1 = (128*128*2 + 128*2048*2) bytes / 511.43 = 557056 / 511.43 = 1089.2
    assert PREMA_ACC == 2048
    assert tile_cycles(2048, PREMA, 16) == 2432


def test_small_fc_is_two_outer_tiles():
    fc = gemm(1, 256, 10)
    # weight tiles: ceil(10/128) * ceil(256/128) = 2; n = 1 < ACC: only an outer tile of 1 column
    # C2 = 1 + 128 + 256 = 385 > M2 = (32768 + 256) / 511.43 = 64.6
    assert prema_cycles(fc, PREMA, 1, 16) == 2 * 385


def test_inner_and_outer_tiles_add_up():
    layer = gemm(5000, 128, 128)  # one weight tile; 5000 = 2 * 2048 + 904
    # 2 inner tiles of 2432 + outer C2 = 904 + 384 = 1288 (M2 = 264192 / 511.43 = 516.6)
    assert prema_cycles(layer, PREMA, 1, 16) == 2 * 2432 + 1288
    # batch 2 -> n = 10000 = 4 * 2048 + 1808: outer C2 = 1808 + 384 = 2192
    assert prema_cycles(layer, PREMA, 2, 16) == 4 * 2432 + 2192


def test_memory_bound_tiles_wait_for_the_fetch():
    toy = npu()  # 4x4, 1 byte per cycle
    layer = gemm(20, 4, 4)  # ACC 8: 2 inner + outer of 4 columns
    # inner: C1 = 8 + 4 + 8 = 20, M1 = 4*4*2 + 4*8*2 = 96 -> 96
    # outer: C2 = 4 + 12 = 16, M2 = 32 + 4*4*2 = 64 -> 64
    assert prema_cycles(layer, toy, 1, 16, acc=8) == 2 * 96 + 64
    # 4-bit weights: M1 = 8 + 64 = 72, M2 = 8 + 32 = 40
    assert prema_cycles(layer, toy, 1, 4, acc=8) == 2 * 72 + 40


def test_arrays_split_tiles_and_share_bandwidth():
    layer = gemm(8, 8, 4)  # 2 weight tiles on 4x4, one inner tile each (ACC 8)
    # one array: 2 rounds of max(20, 96)
    assert prema_cycles(layer, npu(), 1, 16, acc=8) == 2 * 96
    # two arrays: 1 round, but both fetches share the 1 B/cycle: max(20, 2 * 96)
    assert prema_cycles(layer, npu(arrays=2), 1, 16, acc=8) == 192


def test_prema_layer_cost_seconds():
    c = layer_cost(gemm(1, 256, 10), PREMA, model="prema")
    assert c.compute_s == pytest.approx(770 / 700e6)
