"""``profile`` of an LLM phase whose weights and KV cache cannot fit the NPU's DRAM is refused,
as ``serve`` refuses a model without room for a KV cache or a request that cannot fit (it used
to print a profile with no word about it, exit 0).

Hand-worked for llama-3-8b (bf16) on tpuv5e-like (16 GiB = 17,179,869,184 B):
weights per block = 4096 x 6144 (QKV) + 4096 x 4096 (O) + 3 x 4096 x 14336 (FFN)
= 218,103,808; x 32 blocks + 2 x 128,256 x 4096 (embedding, head) = 8,029,995,008 elements
= 16,059,990,016 B, leaving 1,119,879,168 B. One token's KV: 32 layers x K,V x 8 heads x 128
x 2 B = 131,072 B; a 16-token block 2,097,152 B; 1,119,879,168 / 2,097,152 = 534 blocks.
A decode batch B at context C needs B x ceil(C / 16) blocks.
"""

from __future__ import annotations

import pytest

from tests.cli.test_schedule_cli import run_cli

NPU = ["--npu", "tpuv5e-like", "--quiet"]


@pytest.mark.parametrize("spec", ["llama-3-8b:phase=decode:batch=4:context=2048",   # 512
                                  "llama-3-8b:phase=decode:batch=4:context=2128",   # 532
                                  "llama-3-8b:phase=prefill:tokens=8192",           # 512
                                  # int8 KV halves a block: 1,068 fit; 8 x 128 = 1,024
                                  "llama-3-8b:phase=decode:batch=8:context=2048:kv=int8"])
def test_fits(spec, capsys):
    code, out, err = run_cli(["profile", spec, *NPU], capsys)
    assert code == 0, err
    assert "memory-bound" in out or "compute-bound" in out


def test_decode_batch_over_dram_is_refused(capsys):
    # 5 x 128 = 640 blocks > 534
    code, out, err = run_cli(["profile", "llama-3-8b:phase=decode:batch=5:context=2048",
                              *NPU], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and not out and len(lines) == 1 and lines[0].startswith("error:"), err
    line = lines[0]
    for words in ("llama-3-8b", "batch 5", "context 2048", "1,342,177,280 B",  # 640 blocks
                  "1,119,879,168 B", "534 blocks", "batch=", "context=", ":kv=int8"):
        assert words in line, (words, line)


def test_block_rounding_counts(capsys):
    # context 2136 is 133.5 blocks: 4 x 134 = 536 > 534 (a block is the unit serve allocates)
    code, _, err = run_cli(["profile", "llama-3-8b:phase=decode:batch=4:context=2136", *NPU],
                           capsys)
    assert code == 2 and "536 blocks" in err


def test_weights_alone_over_dram_is_refused(capsys):
    # 16,059,990,016 B of weights > lmem-16m's 4 GiB: serve says "no room"; so does profile
    code, _, err = run_cli(["profile", "llama-3-8b:phase=prefill:tokens=16", "--npu",
                            "lmem-16m", "--quiet"], capsys)
    assert code == 2 and "no room" in err and len(err.strip().splitlines()) == 1


def test_npu_without_dram_size_is_noted(capsys):
    code, out, err = run_cli(["profile", "llm-tiny:phase=decode:batch=2:context=64", "--npu",
                              "prema", "--quiet"], capsys)
    assert code == 0, err
    assert "global_mem_bytes" in out and "not checked" in out
