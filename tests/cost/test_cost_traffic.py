"""Shared DRAM traffic: weight widths, tiles, spill, embedding gathers, latency per transfer."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from cost_helpers import conv, gemm, npu, vector

from npuweave.cost import layer_cost
from npuweave.errors import ConfigError
from npuweave.workload.layer import Layer, LayerKind


class Fmt(NamedTuple):
    """Stands in for a libnumber NumberFormat: only ``.bits`` matters to the cost model."""

    name: str
    bits: int


CONV = conv(64, 64, 56, name="conv1")  # 64 * 576 + 64 = 36928 weights


def test_weights_at_npu_precision_by_default():
    c = layer_cost(CONV, npu())
    assert c.weight_bytes == 36928 * 2
    assert c.dram_bytes == c.weight_bytes + c.spill_bytes


@pytest.mark.parametrize("model", ["systolic-ws", "prema", "roofline"])
def test_halving_weight_width_halves_weight_bytes(model):
    toy = npu()
    by_bits = {b: layer_cost(CONV, toy, formats={"conv1.weight": Fmt("x", b)}, model=model)
               for b in (16, 8, 4)}
    assert by_bits[16].weight_bytes == 73856
    assert by_bits[8].weight_bytes == 73856 // 2
    assert by_bits[4].weight_bytes == 73856 // 4
    # only the weights change: activations and MACs stay
    assert by_bits[4].act_bytes == by_bits[16].act_bytes
    assert by_bits[4].macs == by_bits[16].macs


def test_format_lookup_order_and_fallback():
    toy = npu()
    both = {"conv1.weight": Fmt("a", 4), "conv1": Fmt("b", 8)}
    assert layer_cost(CONV, toy, formats=both).weight_bytes == 36928 * 4 // 8
    assert layer_cost(CONV, toy, formats={"conv1": Fmt("b", 8)}).weight_bytes == 36928
    assert layer_cost(CONV, toy, formats={"other.weight": Fmt("c", 4)}).weight_bytes == 73856
    assert layer_cost(CONV, toy, formats=8).weight_bytes == 36928
    assert layer_cost(CONV, toy, formats={"conv1": 2}).weight_bytes == 36928 // 4
    # odd widths round the layer's total up to whole bytes: 36928 * 3 bits = 13848 bytes
    assert layer_cost(CONV, toy, formats=3).weight_bytes == 13848


@pytest.mark.parametrize("bad", [0, -4, {"conv1": "int8"}, {"conv1.weight": Fmt("z", 0)}, [8]])
def test_bad_formats_raise_config_error(bad):
    with pytest.raises(ConfigError, match="format"):
        layer_cost(CONV, npu(), formats=bad)


def test_spill_writes_and_reads_back_the_overflow():
    toy = npu(act_buffer=1000, dram_latency_cycles=100)
    c = layer_cost(vector(400, 400), toy)
    # in + out = 800 + 800 bytes; 600 over the 1000-byte buffer, written then read: 1200
    assert c.act_bytes == 1600
    assert c.spill_bytes == 1200 and c.dram_bytes == 1200 and c.weight_bytes == 0
    # 1200 B at 1 GB/s plus two transfers (write, read back) of 100 ns
    assert c.memory_s == pytest.approx(1.2e-6 + 2e-7)


def test_spill_is_at_most_the_output():
    toy = npu(act_buffer=100)
    big_in = Layer("v", LayerKind.VECTOR, ("GlobalAveragePool",), None, 0, 1000, 0, 1000, 10)
    assert layer_cost(big_in, toy).spill_bytes == 2 * 20  # the 20-byte output, not 1920


def test_no_spill_and_no_latency_when_everything_fits():
    toy = npu(dram_latency_cycles=100)
    c = layer_cost(vector(400, 400), toy)
    assert c.spill_bytes == 0 and c.dram_bytes == 0 and c.memory_s == 0.0


def test_batch_scales_activations_not_weights():
    toy = npu()
    c1, c4 = layer_cost(CONV, toy, batch=1), layer_cost(CONV, toy, batch=4)
    assert c4.weight_bytes == c1.weight_bytes
    assert c4.act_bytes == 4 * c1.act_bytes == 4 * (64 + 64) * 3136 * 2
    assert c4.macs == 4 * c1.macs


def test_split_weights_fetched_once_in_tiles():
    toy = npu(weight_buffer=1000, dram_latency_cycles=100)
    fc = gemm(1, 50, 30)  # 1500 weights = 3000 bytes: 3 tiles of <= 1000 bytes
    c = layer_cost(fc, toy)
    assert c.weight_bytes == 3000
    assert c.memory_s == pytest.approx(3000e-9 + 3 * 100e-9)


def test_recurrent_refetches_split_weights_every_step():
    toy = npu(weight_buffer=1000, dram_latency_cycles=100)
    rnn = gemm(1, 50, 30, count=5, kind=LayerKind.RECURRENT, weights=1500)
    c = layer_cost(rnn, toy)
    assert c.weight_bytes == 5 * 3000
    assert c.memory_s == pytest.approx(15000e-9 + 15 * 100e-9)
    fits = npu(dram_latency_cycles=100)
    assert layer_cost(rnn, fits).weight_bytes == 3000  # re-used across steps


def test_embedding_gathers_at_most_the_table():
    emb = Layer("emb", LayerKind.EMBEDDING, ("Gather",), None, 0, 0, 1000, 1, 64,
                gather_elems=64)
    toy = npu(dram_latency_cycles=100)
    assert layer_cost(emb, toy, batch=4).weight_bytes == 4 * 64 * 2
    assert layer_cost(emb, toy, batch=100).weight_bytes == 1000 * 2  # min(table, 6400)
    c = layer_cost(emb, toy, batch=4)
    assert c.compute_s == 0.0 and c.macs == 0
    assert c.memory_s == pytest.approx(512e-9 + 100e-9)  # one gather stream


def test_attention_has_no_weight_traffic():
    att = gemm(128, 64, 128, count=12, kind=LayerKind.MATMUL)
    c = layer_cost(att, npu())
    assert c.weight_bytes == 0 and c.dram_bytes == 0
