"""The NPU YAML JSON Schema: generated from the spec definition, shipped, and consistent with
the loader (accepts every preset, rejects what the loader rejects)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import tomllib
import yaml
from eco_helpers import run, strict_loads

from npuweave.errors import ConfigError
from npuweave.hardware import NPU, npu_from_dict, preset_names
from npuweave.hardware.schema import npu_schema, schema_text, shipped_schema_text

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(shipped_schema_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_shipped_file_is_the_generated_schema():
    # regenerate with: python -c "from npuweave.hardware.schema import schema_text as t;
    #   open('npuweave/hardware/npu.schema.json', 'w').write(t())"
    assert shipped_schema_text() == schema_text()
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "hardware/npu.schema.json" in data["tool"]["setuptools"]["package-data"]["npuweave"]


def test_schema_covers_every_spec_field():
    props = npu_schema()["$defs"]["npu"]["properties"]
    assert set(props) == set(NPU.__dataclass_fields__)


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_is_valid(validator, name):
    doc = yaml.safe_load((resources.files("npuweave.hardware") / "presets" /
                          f"{name}.yaml").read_text())
    assert list(validator.iter_errors(doc)) == []
    assert list(validator.iter_errors({"npu": doc})) == []  # the wrapped form too


GOOD = {"pe_rows": 16, "pe_cols": 16, "clock_hz": "1 GHz", "dram_bw": "25.6 GB/s",
        "weight_buffer": "2 MiB", "act_buffer": 1048576}


@pytest.mark.parametrize("bad", [
    {"pe_cols": 16, "clock_hz": 1e9, "dram_bw": 1e9, "weight_buffer": 1, "act_buffer": 1},
    {**GOOD, "pe_rows": "many"},
    {**GOOD, "pe_rows": 0},
    {**GOOD, "colour": "blue"},
    {**GOOD, "dram_bw": "fast"},
    {**GOOD, "weight_buffer": 0},
    {**GOOD, "mesh": [1, 2, 3]},
    {**GOOD, "dataflow": "os"},
    {**GOOD, "dram_latency_cycles": -1},
])
def test_bad_specs_fail_schema_and_loader(validator, bad):
    assert list(validator.iter_errors(bad)) != []
    with pytest.raises(ConfigError):
        npu_from_dict(bad, "bad.yaml")


def test_good_spec_passes_both(validator):
    assert list(validator.iter_errors(GOOD)) == []
    assert npu_from_dict(GOOD).pe_rows == 16


def test_npus_schema_prints_it(capsys):
    code, out, _ = run(["npus", "--schema"], capsys)
    assert code == 0 and strict_loads(out) == npu_schema()
