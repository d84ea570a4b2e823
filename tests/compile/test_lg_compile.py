"""Whole compiles on hand-built chains: golden DRAM bytes and cycles, slicing, bad input.

Shared arithmetic: ``chain(2, c=8, h=16)`` is two 3x3 convs (pad 1) on 8x16x16 maps, 2 bytes
per element. Each activation is 8*16*16*2 = 4096 B (256 B per row); each weight is
(8*8*9 + 8)*2 = 1168 B. Compute is 1 us per sample for a whole 8x16x16 output (a slice of
``r`` rows: r/16 us), DMA 1 GB/s, so 1 byte = 1 ns = 1 cycle at 1 GHz.
"""

import dataclasses
import json

import pytest
from lg_builders import chain, conv, fc, toy_npu

from npuweave.compile.layergroup import GroupStatus, compile_groups, plan_to_dict
from npuweave.errors import ConfigError, InfeasibleError, UnknownNameError
from npuweave.workload.layer import Layer, LayerKind


def unit_compute(layer, npu, n):
    return 1e-6 * n * layer.out_elems / (8 * 16 * 16)  # the layer arrives cut to its slice


def compile2(lmem, banks=1, batch=1, method="dp"):
    return compile_groups(chain(2, c=8, h=16), toy_npu(lmem, banks), batch=batch,
                          method=method, cost_model=unit_compute)


@pytest.mark.parametrize("method", ["dp", "greedy"])
def test_two_convs_one_unsliced_group(method):
    plan = compile2(1 << 20, method=method)
    (g,) = plan.groups
    assert (g.layers, g.n_slices, g.h_slices) == (("c0", "c1"), 1, 1)
    # group: input 4096 + weights 2*1168 + output 4096 = 10528 B
    # group: fill (4096 + 1168) ns + max(2 us compute, 1168 ns weight) + drain 4096 ns
    #        = 5264 + 2000 + 4096 = 11360 cycles at 1 GHz; sliced it only gets slower
    #        (2 H slices: 11552, see test_two_convs_sliced_along_h)
    # alone, each layer takes its fastest run (load/compute/store overlap):
    #   1 slice:  fill 4096 + 1168, max(1000, 0), drain 4096           = 10360
    #   2 slices: rows [0,8) / [8,16) read input [0,9) / [7,16): 9 rows = 2304 B each,
    #             store 8 rows = 2048 B, compute 500 ns each
    #             fill 2304 + 1168, max(500, 2304), max(500, 2048), drain 2048 = 9872
    #   3 slices: rows 5/5/6 read 6/7/7 input rows (1536/1792/1792 B), store 1280/1280/1536
    #             fill 1536 + 1168, max(., 1792), max(., 1792 + 1280), max(., 1280),
    #             drain 1536                                             = 10384
    #   4 slices: inputs 5/6/6/5 rows, stores 4 rows: 2448 + 1536 + 2560 + 2304 + 1024
    #             + 1024                                                 = 10896
    #   streaming its weights (they load during its compute, not before it):
    #             fill 4096, max(1000, 1168), drain 4096                = 9360
    # so it streams: DRAM 4096 + 1168 + 4096 = 9360 B and 9360 cycles per layer
    assert (plan.dram_bytes, plan.baseline_dram_bytes) == (10528, 2 * 9360)
    assert g.dram_saved == 2 * 9360 - 10528
    assert (plan.cycles, plan.baseline_cycles) == (11360, 2 * 9360)


def test_two_convs_sliced_along_h():
    # 8 KiB LMEM. Unsliced, step 1 holds input 4096 + w 1216 + c0 4096 + scratch 512 + the
    # prefetched w 1216 = 11136 B > 8192, so H is cut in 2: c1 rows [0,8) need c0 rows
    # [0,9) and input rows [0,10); slice 1 mirrors it. Peak: 2560+1216+2304+512+1216 = 7808.
    plan = compile2(8192)
    (g,) = plan.groups
    assert (g.n_slices, g.h_slices, g.lmem_peak) == (1, 2, 7808)
    # DRAM: input 10+10 rows * 256 = 5120, weights 2336, output 16 rows * 256 = 4096
    assert plan.dram_bytes == 11552
    # alone each layer streams its weights (9360 cycles, 9360 B; its sliced runs cost more,
    # see test_two_convs_one_unsliced_group)
    assert plan.baseline_dram_bytes == 2 * 9360
    # per slice: compute 9/16 + 8/16 us = 1062.5 ns, load 2560, store 2048 B
    # fill (2560 + 1168) + max(1062.5, 2560 + 1168) + max(1062.5, 2048) + drain 2048
    #  = 3728 + 3728 + 2048 + 2048 = 11552 cycles
    assert plan.cycles == 11552


def test_batch_sliced_along_n_first():
    # batch 2 in 16 KiB: both samples at once need 19840 B at step 1; one sample per slice
    # with resident weights needs 11136 B, so N is cut in 2 and H is left whole.
    plan = compile2(16384, batch=2)
    (g,) = plan.groups
    assert (g.n_slices, g.n_per_slice, g.h_slices) == (2, 1, 1)
    assert plan.dram_bytes == 2 * (4096 + 4096) + 2336


def test_lmem_too_small_names_layer_and_bytes():
    # smallest slice of c0 without weights: 1 output row (256) from 3 input rows (768)
    # plus one row of 32-bit partial sums (8*16*4 = 512) = 1536 B
    with pytest.raises(InfeasibleError, match=r"'c0' needs at least 1536 bytes"):
        compile2(1024)


def test_weights_too_big_stream_ungrouped():
    layers = [conv("c", ("",), 8, 8, 16, 3), fc("big", ("c",), 16 * 64, 1024)]
    plan = compile_groups(layers, toy_npu(1 << 20), cost_model=unit_compute)
    big = plan.groups[-1]
    assert big.status is GroupStatus.UNGROUPED and "stream" in big.reason
    # weights (1024*1024 + 1024)*2 + input 1024*2 + output 1024*2 bytes
    assert big.dram_bytes == (1024 * 1024 + 1024) * 2 + 2048 + 2048


def test_unsupported_layer_runs_ungrouped_and_is_reported():
    rnn = Layer("rnn", LayerKind.RECURRENT, ("LSTM",), (4, 1, 16, 32), 2048, 0, 512, 8 * 64,
                8 * 64, inputs=("c1",))
    layers = chain(2, c=8, h=8) + [rnn, conv("c2", ("rnn",), 8, 8, 8)]
    plan = compile_groups(layers, toy_npu(1 << 20), cost_model=unit_compute)
    assert [g.layers for g in plan.groups] == [("c0", "c1"), ("rnn",), ("c2",)]
    assert plan.groups[1].reason == "recurrent layers have no layer-group rule"
    d = plan_to_dict(plan)
    # c2 (8x8x8, 1024 B in and out, 1168 B weights, 250 ns) streams: 1024 + max(250, 1168)
    # + 1024 = 3216 cycles, against 1024 + 1168 + 250 + 1024 = 3466 unsliced in LMEM
    assert d["totals"]["ungrouped_layers"] == ["rnn", "c2"]
    assert plan.groups[2].reason.startswith("streaming its weights is faster")
    assert plan.groups[2].seconds == pytest.approx(3216e-9)
    assert d["groups"][1]["status"] == "ungrouped"


def test_bad_npu_and_options():
    with pytest.raises(ConfigError, match="lmem_banks must be > 0"):
        compile_groups(chain(1), dataclasses.replace(toy_npu(), lmem_banks=0))
    with pytest.raises(ConfigError, match="no local memory"):
        compile_groups(chain(1), dataclasses.replace(toy_npu(), lmem_bytes=0))
    with pytest.raises(ConfigError, match="batch"):
        compile_groups(chain(1), toy_npu(), batch=0)
    with pytest.raises(UnknownNameError, match="dp, greedy"):
        compile_groups(chain(1), toy_npu(), method="beam")
    with pytest.raises(UnknownNameError, match="cost model"):
        compile_groups(chain(1), toy_npu(), cost_model="no-such-model")


def test_json_format():
    plan = compile2(8192)
    d = json.loads(json.dumps(plan_to_dict(plan)))
    assert d["format"] == "npuweave.layergroup/1"
    assert d["totals"] == {"layers": 2, "groups": 1, "ungrouped_layers": [],
                           "dram_bytes": 11552, "baseline_dram_bytes": 18720,
                           "cycles": 11552, "baseline_cycles": 18720}
    (g,) = d["groups"]
    assert (g["layers"], g["h_slices"], g["lmem_peak_bytes"]) == (["c0", "c1"], 2, 7808)
    assert g["inputs"] == ["@input"] and g["outputs"] == ["c1"]
    kinds = sorted({b["kind"] for b in g["buffers"]})
    assert kinds == ["activation", "scratch", "weight"]
    assert all(b["banks"] == [0, 0] for b in g["buffers"])  # one bank
