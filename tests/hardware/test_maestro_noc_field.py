"""``maestro_noc_bw``: MAESTRO's distribution NoC in elements per cycle, validated by the loader."""

from __future__ import annotations

import pytest

from npuweave.errors import ConfigError
from npuweave.hardware import npu_from_dict, preset, preset_names

BASE = {"pe_rows": 8, "pe_cols": 8, "clock_hz": "1 GHz", "dram_bw": "16 GB/s",
        "weight_buffer": "1 MiB", "act_buffer": "1 MiB"}


def test_default_is_unconstrained_on_every_preset() -> None:
    assert all(preset(p).maestro_noc_bw == 0 for p in preset_names())


@pytest.mark.parametrize("value, expected", [
    (64, 64), ("64 elements/cycle", 64), ("1 element/cycle", 1), ("16 elem/cycle", 16),
    ("8/cycle", 8), (0, 0), (32.0, 32),
])
def test_parses_elements_per_cycle(value: object, expected: int) -> None:
    assert npu_from_dict({**BASE, "maestro_noc_bw": value}).maestro_noc_bw == expected


@pytest.mark.parametrize("value, message", [
    ("32 GB/s", "not the core-to-core mesh link 'noc_bw'"),
    (-1, "between 0 and"),
    (1 << 31, "between 0 and"),
    (2.5, "whole number"),
    (True, "whole number"),
    ("fast", "cannot parse 'fast'"),
    ([64], "whole number"),
])
def test_bad_values_name_the_field_and_the_unit(value: object, message: str) -> None:
    with pytest.raises(ConfigError, match="maestro_noc_bw") as err:
        npu_from_dict({**BASE, "maestro_noc_bw": value})
    assert message in str(err.value) and "elements per cycle" in str(err.value)


def test_mesh_noc_bw_is_a_different_field() -> None:
    npu = npu_from_dict({**BASE, "noc_bw": "8 GB/s", "maestro_noc_bw": 16})
    assert (npu.noc_bw, npu.maestro_noc_bw) == (8e9, 16)
