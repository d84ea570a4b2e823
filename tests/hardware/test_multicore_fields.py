"""Multi-core NPU fields: per-core L2, mesh link bandwidth and hop latency, validated."""

from __future__ import annotations

import pytest

from npuweave.errors import ConfigError
from npuweave.hardware import npu_from_dict, preset

BASE = {"pe_rows": 8, "pe_cols": 8, "clock_hz": "1 GHz", "dram_bw": "16 GB/s",
        "weight_buffer": "1 MiB", "act_buffer": "1 MiB"}


def test_gemini_like_preset():
    npu = preset("gemini-like")
    assert (npu.cores, npu.mesh, npu.l2_bytes) == (4, (2, 2), 8 * 2**20)
    assert (npu.noc_bw, npu.noc_hop_cycles, npu.dram_bw) == (32e9, 10, 16e9)
    assert npu.pe_rows * npu.pe_cols == 4096


def test_fields_parse_units():
    npu = npu_from_dict({**BASE, "cores": 2, "mesh": [1, 2], "l2_bytes": "2 MiB",
                         "noc_bw": "8 GB/s", "noc_hop_cycles": 3})
    assert (npu.l2_bytes, npu.noc_bw, npu.noc_hop_cycles) == (2 * 2**20, 8e9, 3)


@pytest.mark.parametrize("extra,message", [
    ({"cores": 4, "l2_bytes": "1 MiB"}, "noc_bw"),
    ({"cores": 4, "mesh": [2, 2], "noc_bw": "8 GB/s"}, "l2_bytes"),
    ({"cores": 4, "l2_bytes": "1 MiB", "noc_bw": "8 GB/s"}, "mesh"),
    ({"noc_hop_cycles": -1}, "noc_hop_cycles"),
    ({"noc_bw": "fast"}, "noc_bw"),
    ({"l2_bytes": "-1 MiB"}, "l2_bytes"),
    ({"cores": 3, "mesh": [2, 2]}, "mesh"),
])
def test_bad_multicore_fields(extra, message):
    with pytest.raises(ConfigError, match=message):
        npu_from_dict({**BASE, **extra})
