"""The ``energy:`` section of an NPU YAML: units, validation, dotted overrides, the CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from npuweave.errors import ConfigError
from npuweave.hardware import load_npu, npu_from_dict, preset
from npuweave.hardware.energy import parse_energy, parse_power

ROOT = Path(__file__).resolve().parents[2]
BASE = {"pe_rows": 4, "pe_cols": 4, "clock_hz": "1 GHz", "dram_bw": "10 GB/s",
        "weight_buffer": "1 MiB", "act_buffer": "1 MiB"}


def npu_with(energy):
    return npu_from_dict({**BASE, "energy": energy}, "toy.yaml")


def test_units_are_read():
    npu = npu_with({"mac_pj": "0.2 pJ", "dram_pj_per_byte": "3.9 pJ/bit",
                    "ifmap_sram_read_pj_per_byte": "1.25 pJ/B", "vector_op_pj": "100 fJ",
                    "static_mw": {"array": "0.5 W", "sram": 80}, "gating": ["array"],
                    "wake_up_s": "2 us"})
    e = npu.energy
    assert e.mac_pj == 0.2 and e.dram_pj_per_byte == pytest.approx(31.2)
    assert e.vector_op_pj == pytest.approx(0.1) and e.ifmap_sram_read_pj_per_byte == 1.25
    assert dict(e.static_mw) == {"array": 500.0, "sram": 80.0}
    assert e.gating == ("array",) and e.wake_up_s == pytest.approx(2e-6)
    assert e.gated_power_w == pytest.approx(0.5)


@pytest.mark.parametrize("energy, field", [
    ({"mac_pj": -1}, "energy.mac_pj"),
    ({"mac_pj": float("nan")}, "energy.mac_pj"),
    ({"dram_pj_per_byte": ".inf"}, "energy.dram_pj_per_byte"),
    ({"static_mw": {"array": "5 pJ"}}, "energy.static_mw.array"),
    ({"mac_pj": "5 mW"}, "energy.mac_pj"),
    ({"dram_pj_per_byte": "20 pJ"}, "energy.dram_pj_per_byte"),
    ({"static_mw": {"gpu": "5 mW"}}, "energy.static_mw.gpu"),
    ({"gating": ["array", "fan"]}, "energy.gating"),
    ({"sram_pj": 1}, "energy.sram_pj"),
    ({"dram_counts": "exact"}, "energy.dram_counts"),
    ({"wake_up_s": "2 pJ"}, "energy.wake_up_s"),
    # finite but absurd: the run's sums overflowed to inf (printed 'inf mJ', exit 0)
    ({"mac_pj": "1e308 pJ"}, "energy.mac_pj"),
    ({"dram_pj_per_byte": "1e308 pJ/B"}, "energy.dram_pj_per_byte"),
    ({"static_mw": {"array": "1e300 W"}}, "energy.static_mw.array"),
])
def test_bad_values_name_their_field(energy, field):
    with pytest.raises(ConfigError) as err:
        npu_with(energy)
    assert field in str(err.value) and "\n" not in str(err.value)


def test_every_problem_is_reported_at_once():
    with pytest.raises(ConfigError) as err:
        npu_with({"mac_pj": -1, "static_mw": {"array": "5 pJ"}})
    assert "energy.mac_pj" in str(err.value) and "energy.static_mw.array" in str(err.value)


def test_power_given_as_energy_says_so():
    with pytest.raises(ValueError, match="is an energy"):
        parse_power("5 pJ", "static_mw.array")
    with pytest.raises(ValueError, match="is a power"):
        parse_energy("5 mW", "mac_pj", per_byte=False)


def test_dotted_override_and_round_trip():
    raw = preset("memory-centric").to_dict()
    raw["energy.dram_pj_per_byte"] = "10 pJ/B"
    raw["energy.static_mw.array"] = "1 W"
    npu = npu_from_dict(raw, "sweep")
    assert npu.energy.dram_pj_per_byte == 10.0
    assert dict(npu.energy.static_mw)["array"] == 1000.0
    assert npu.energy.mac_pj == preset("memory-centric").energy.mac_pj
    again = npu_from_dict(npu.to_dict(), "again")
    assert again == npu


def test_yaml_file_with_energy_section(tmp_path):
    path = tmp_path / "n.yaml"
    path.write_text("pe_rows: 4\npe_cols: 4\nclock_hz: 1 GHz\ndram_bw: 10 GB/s\n"
                    "weight_buffer: 1 MiB\nact_buffer: 1 MiB\nenergy:\n  mac_pj: 0.5 pJ\n"
                    "  static_mw: {array: 10 mW}\n")
    npu = load_npu(path)
    assert npu.energy.mac_pj == 0.5 and math.isclose(npu.energy.static_power_w, 0.01)


def _cli(args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "npuweave", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_cli_rejects_a_power_given_as_energy_before_work(tmp_path):
    (tmp_path / "n.yaml").write_text(
        "pe_rows: 4\npe_cols: 4\nclock_hz: 1 GHz\ndram_bw: 10 GB/s\nweight_buffer: 1 MiB\n"
        "act_buffer: 1 MiB\nenergy:\n  static_mw: {array: 5 pJ}\n")
    done = _cli(["profile", "ncf", "--npu", "n.yaml", "--json", "p.json"], tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1
    assert lines[0].startswith("error: ") and "energy.static_mw.array" in lines[0]
    assert not (tmp_path / "p.json").exists()


def test_profile_json_contract_in_an_empty_dir(tmp_path):
    """``npuweave profile MODEL --npu SPEC --json p.json``: per layer ``accesses`` with
    SCALE-Sim's counters and ``energy_j``, as the issue's contract for outside checks says."""
    done = _cli(["profile", "resnet50", "--npu", "memory-centric", "--json", "p.json"], tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "p.json").read_text())
    keys = {"ifmap_sram_reads", "filter_sram_reads", "ofmap_sram_writes", "dram_ifmap_reads",
            "dram_filter_reads", "dram_ofmap_writes"}
    conv1 = doc["layers"][0]
    assert set(conv1["accesses"]) == keys
    # conv1 of ResNet-50: m = 112*112, k = 7*7*3, n = 64 on 128x128: 2 row folds, 1 col fold
    assert conv1["accesses"]["ifmap_sram_reads"] == 12544 * 147
    assert conv1["accesses"]["filter_sram_reads"] == 147 * 64
    assert conv1["accesses"]["ofmap_sram_writes"] == 12544 * 64 * 2
    assert all(layer["energy_j"] > 0 for layer in doc["layers"])
    total = doc["energy"]["total_j"]
    assert total == pytest.approx(sum(layer["energy_j"] for layer in doc["layers"]))
    assert "energy" in done.stdout


def test_a_partial_section_takes_the_rest_from_the_default_table_and_says_so():
    from npuweave.cost.energy import energy_spec
    from npuweave.hardware.energy import default_energy

    npu = npu_with({"mac_pj": "0.2 pJ"})
    spec, note = energy_spec(npu)
    table = default_energy(16, 16)  # 4x4 array, 16-bit
    assert spec.mac_pj == 0.2 and spec.dram_pj_per_byte == table.dram_pj_per_byte
    assert spec.static_mw == table.static_mw
    assert note is not None and "dram_pj_per_byte" in note and "mac_pj" not in note


def test_source_must_be_text():
    with pytest.raises(ConfigError, match="energy.source"):
        npu_with({"source": ["Horowitz"]})
