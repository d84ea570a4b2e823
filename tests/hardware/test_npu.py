"""NPU specs: presets reproduce the seeds' numbers; YAML validation reports every bad field."""

import pytest
import yaml

from npuweave.errors import ConfigError, UnknownNameError
from npuweave.hardware import (
    NPU,
    get_npu,
    load_npu,
    npu_from_dict,
    parse_quantity,
    preset,
    preset_names,
)


def test_presets_present():
    assert {"compute-centric", "memory-centric", "prema", "lwplus", "lmem-16m"} <= set(preset_names())


@pytest.mark.parametrize(
    "name, tops, bw",
    [
        # 12 ICEs x 64x64 x 2 ops x 927 MHz = 91.13 TOP/s (Table IV.1 says 92, rounded)
        ("compute-centric", 12 * 64 * 64 * 2 * 927e6 / 1e12, 68e9),
        # 128x128 x 2 x 700 MHz = 22.94 TOP/s (Table IV.1 says 22.5)
        ("memory-centric", 128 * 128 * 2 * 700e6 / 1e12, 225e9),
        ("prema", 128 * 128 * 2 * 700e6 / 1e12, 358e9),
        # 4 x 128x128 x 2 x 976.5625 MHz = 128.0 TOP/s exactly (thesis V.3.A)
        ("lwplus", 128.0, 100e9),
    ],
)
def test_preset_peaks(name, tops, bw):
    npu = preset(name)
    assert npu.peak_tops == pytest.approx(tops, rel=1e-12)
    assert npu.dram_bw == bw


def test_table_iv1_buffers():
    mc = preset("memory-centric")
    assert mc.weight_buffer == 48 * 2**20 and mc.act_buffer == 36 * 2**20
    assert mc.extra_act_buffer == 24 * 2**20
    pr = preset("prema")
    assert (pr.weight_buffer, pr.act_buffer, pr.dram_latency_cycles) == (4 * 2**20, 8 * 2**20, 100)
    assert pr.dram_latency_s == pytest.approx(100 / 700e6)


def test_npu_is_frozen_and_hashable():
    npu = preset("prema")
    with pytest.raises(AttributeError):
        npu.pe_rows = 3  # type: ignore[misc]
    # an equal spec built separately (not the cached preset object) hashes and compares equal
    twin = npu_from_dict(npu.to_dict(), "twin.yaml")
    assert twin is not npu and twin == npu and hash(twin) == hash(npu)
    assert {npu: 1}[twin] == 1


@pytest.mark.parametrize(
    "text, binary, expected",
    [("48 MiB", True, 48 * 2**20), ("48 MB", True, 48 * 2**20), ("225 GB/s", False, 225e9),
     ("700 MHz", False, 700e6), (1024, True, 1024), ("2.5 KiB", False, 2560), ("1e3", False, 1000)],
)
def test_parse_quantity(text, binary, expected):
    assert parse_quantity(text, binary=binary) == expected


def test_yaml_roundtrip(tmp_path):
    p = tmp_path / "mine.yaml"
    p.write_text("pe_rows: 32\npe_cols: 16\nclock_hz: 1 GHz\ndram_bw: 10 GB/s\n"
                 "weight_buffer: 1 MiB\nact_buffer: 2 MiB\n")
    npu = load_npu(p)
    assert npu.name == "mine" and npu.macs_per_cycle == 512 and npu.clock_hz == 1e9
    assert get_npu(str(p)) == npu


def test_validation_reports_every_problem(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("pe_rows: -4\npe_cols: 16\nclock_hz: 1 GHz\ndram_bw: -5 GB/s\n"
                 "weight_buffer: 1 MiB\nact_buffer: 2 MiB\ncolour: red\n")
    with pytest.raises(ConfigError) as exc:
        load_npu(p)
    msg = str(exc.value)
    assert str(p) in msg
    assert "'pe_rows'" in msg and "'dram_bw'" in msg and "'colour'" in msg
    # a signed value is parsed, then rejected for its sign (not as unparseable text)
    assert "field 'dram_bw': must be > 0, got '-5 GB/s'" in msg
    assert "field 'pe_rows': must be >= 1, got -4" in msg
    assert "\n" not in msg


def test_missing_fields_and_mesh_mismatch():
    with pytest.raises(ConfigError, match="missing required field 'clock_hz'.*mesh"):
        npu_from_dict({"pe_rows": 1, "pe_cols": 1, "dram_bw": 1, "weight_buffer": 1,
                       "act_buffer": 1, "cores": 3, "mesh": [2, 2]}, "x.yaml")


def test_invalid_yaml_syntax(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("pe_rows: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML at line"):
        load_npu(p)


def test_unknown_preset_lists_valid():
    with pytest.raises(UnknownNameError, match="memory-centric"):
        preset("tpu-v9")


def test_derived_properties():
    npu = NPU(name="t", pe_rows=8, pe_cols=4, arrays=2, cores=2, clock_hz=1e9, dram_bw=1e9,
              weight_buffer=1, act_buffer=1)
    assert npu.macs_per_cycle == 128
    assert npu.ridge_ops_per_byte == pytest.approx(2 * 128e9 / 1e9)
    assert npu.lanes == 4 * 2 * 2


@pytest.mark.parametrize("value", [".inf", ".nan", "'1e400 B'", "1" + "0" * 400])
def test_non_finite_sizes_and_rates_are_rejected(value):
    base = dict(pe_rows=4, pe_cols=4, clock_hz=1e9, dram_bw=1e9, weight_buffer=1, act_buffer=1)
    raw = yaml.safe_load(f"act_buffer: {value}\ndram_bw: {value}\n")
    with pytest.raises(ConfigError) as exc:
        npu_from_dict({**base, **raw}, "inf.yaml")
    msg = str(exc.value)
    assert "field 'act_buffer': must be a finite number" in msg
    assert "field 'dram_bw': must be a finite number" in msg


def test_binary_file_is_a_config_error(tmp_path):
    p = tmp_path / "blob.yaml"
    p.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(ConfigError, match=r"blob\.yaml: not a text file"):
        load_npu(p)
