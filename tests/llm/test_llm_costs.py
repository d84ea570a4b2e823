"""Hand-worked LLM costs on the toy NPU (roofline: MACs / 256 + vector ops / 16 cycles at 1 GHz;
DRAM bytes / 1 GB/s), for llm-tiny: 2 layers, hidden 256, 4 heads of 64, 2 KV heads, gated
FFN 512, vocabulary 1000, 16-bit weights and KV."""

import pytest

from npuweave.sim.llm import StepCosts
from npuweave.workload.llm import get_llm


def test_kv_bytes_by_hand():
    tiny, llama = get_llm("llm-tiny"), get_llm("llama-3-8b")
    assert tiny.kv_bytes_per_token_layer(16) == 2 * 2 * 64 * 2  # K and V, 2 heads of 64, 2 B
    assert tiny.kv_bytes_per_token(16) == 2 * 512
    assert llama.kv_bytes_per_token(16) == 32 * 2 * 8 * 128 * 2 == 131072
    assert llama.kv_bytes_per_token(8) == 65536
    # 8.03 B parameters, as Meta publishes for Llama 3 8B
    assert llama.weight_elems == pytest.approx(8.03e9, rel=1e-3)


# one block's dense weights: qkv 256x512, o 256x256, ffn up+gate 256x1024, down 512x256
BLOCK_WEIGHT_BYTES = 2 * (256 * 512 + 256 * 256 + 256 * 1024 + 512 * 256)  # 1,179,648
HEAD_BYTES = 2 * 256 * 1000  # LM head, 512,000 B: 5.12e-4 s


def test_prefill_of_16_tokens_by_hand(toy):
    sc = StepCosts("llm-tiny", toy, cost_model="roofline")
    cost = sc.iteration([(16, 0)], [])
    # every dense layer is memory-bound here (e.g. qkv: 9,216 cycles = 9.2 us < 262 us)
    dense = 2 * BLOCK_WEIGHT_BYTES / 1e9            # 2.359296e-3
    embed = 16 * 256 * 2 / 1e9                      # gather 16 rows: 8.192e-6
    # attention per layer: K and V of 16 tokens x 2 heads x 64 x 2 B = 4096 B each
    attention = 2 * (4096 + 4096) / 1e9             # 1.6384e-5 (memory > 1.66 us compute)
    head = HEAD_BYTES / 1e9                         # one sequence emits a token
    assert cost.time_s == pytest.approx(dense + embed + attention + head, rel=1e-12)
    assert cost.time_s == pytest.approx(2.895872e-3, rel=1e-12)
    # compute: qkv 9216 + o 4352 + ffn_up 19456 + ffn_down 8448 cycles per block;
    # attention 832 per layer; head 1064
    assert cost.compute_s == pytest.approx((2 * (9216 + 4352 + 19456 + 8448) + 2 * 832 + 1064)
                                           / 1e9, rel=1e-12)


def test_decode_step_of_two_contexts_by_hand(toy):
    sc = StepCosts("llm-tiny", toy, cost_model="roofline")
    cost = sc.iteration([], [16, 32])
    dense = 2 * BLOCK_WEIGHT_BYTES / 1e9
    embed = 2 * 256 * 2 / 1e9
    # KV read per layer: (16 + 32) tokens x 512 B; two layers
    attention = 2 * (16 + 32) * 512 / 1e9           # 4.9152e-5
    head = HEAD_BYTES / 1e9                         # 2 x 256 x 1000 MACs: 2,128 cycles < 512 us
    assert cost.time_s == pytest.approx(dense + embed + attention + head, rel=1e-12)
    assert cost.time_s == pytest.approx(2.921472e-3, rel=1e-12)
    # attention compute: ctx 16 -> 52 cycles, ctx 32 -> 104 cycles, per layer
    assert cost.compute_s - sc.dense(2)[1] - sc.head(2)[1] == pytest.approx(2 * 156 / 1e9)


def test_decode_contexts_round_up_to_a_block(toy):
    sc = StepCosts("llm-tiny", toy, cost_model="roofline")
    assert sc.iteration([], [17]).time_s == sc.iteration([], [32]).time_s
    assert sc.iteration([], [17]).time_s > sc.iteration([], [16]).time_s


def test_decode_grows_with_context_and_prefill_is_compute_bound_on_tpuv5e():
    from npuweave.hardware import preset

    sc = StepCosts("llama-3-8b", preset("tpuv5e-like"))
    short, long = sc.iteration([], [512] * 32), sc.iteration([], [4096] * 32)
    assert long.memory_s - short.memory_s == pytest.approx(
        32 * (4096 - 512) * 131072 / 819e9, rel=1e-3)
    pre = sc.iteration([(512, 0)], [])
    assert pre.compute_s > pre.memory_s and short.memory_s > short.compute_s
