"""A toy NPU for hand-worked LLM costs: 16x16 PEs at 1 GHz, 1 GB/s, buffers that never spill."""

import pytest

from npuweave.hardware import NPU
from npuweave.workload.llm import get_llm

TINY = get_llm("llm-tiny")


def toy_npu(kv_blocks: int = 1000) -> NPU:
    """``kv_blocks`` KV blocks of 16 tokens fit beside llm-tiny's 16-bit weights."""
    weights = TINY.weight_bytes(16)
    return NPU(name="toy", pe_rows=16, pe_cols=16, clock_hz=1e9, dram_bw=1e9,
               weight_buffer=1 << 30, act_buffer=1 << 30,
               global_mem_bytes=weights + kv_blocks * 16 * TINY.kv_bytes_per_token(16))


@pytest.fixture
def toy() -> NPU:
    return toy_npu()
