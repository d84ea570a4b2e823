"""JSON Schema of the NPU YAML, generated from the one spec definition.

The fields come from the ``NPU`` dataclass and their rules from the loader's field sets
(sizes, rates, integer ranges, the unit pattern, the dataflows), so the schema cannot drift
from what ``load_npu`` accepts. The package ships it as ``npuweave/hardware/npu.schema.json``
(``npuweave npus --schema`` prints it) for editors: put

    # yaml-language-server: $schema=<path or URL of npu.schema.json>

at the top of an NPU YAML for completion and checks in VS Code and other YAML-LSP editors.
A test regenerates the file and compares, and validates every preset against it.
"""

from __future__ import annotations

import dataclasses
from importlib import resources
from typing import Any

from npuweave.fileio import json_text
from npuweave.hardware import loader
from npuweave.hardware.npu import NPU

SCHEMA_FILE = "npu.schema.json"

_DESCRIPTIONS = {
    "name": "Name of the NPU (default: the file name).",
    "pe_rows": "Rows of each systolic array (the reduction dimension of a weight fold).",
    "pe_cols": "Columns of each systolic array (output channels of a weight fold).",
    "clock_hz": "Clock: Hz or a string such as '700 MHz'.",
    "dram_bw": "DRAM bandwidth: bytes/s or a string such as '225 GB/s' (decimal).",
    "weight_buffer": "Weight buffer size: bytes or '48 MiB' (plain MB/KB are binary).",
    "act_buffer": "Activation buffer size: bytes or '36 MiB'.",
    "arrays": "Systolic arrays per core.",
    "cores": "Cores sharing DRAM and buffers.",
    "mesh": "Core mesh [rows, cols]; rows x cols must equal cores.",
    "extra_act_buffer": "Extra activation buffer: bytes or a size string.",
    "dram_latency_cycles": "DRAM latency per transfer, in cycles.",
    "vector_lanes": "Vector operations per cycle per array (0: one per PE column).",
    "precision_bits": "Native arithmetic precision in bits.",
    "lmem_bytes": "Local memory for the layer-group compiler: bytes or a size string.",
    "lmem_banks": "Local-memory banks.",
    "global_mem_bytes": "DRAM capacity: bytes or a size string.",
    "dataflow": "Array dataflow.",
    "description": "Free text shown by 'npuweave npus'.",
    "l2_bytes": "Per-core L2 buffer of a multi-core NPU: bytes or a size string.",
    "noc_bw": "Core-to-core link bandwidth: bytes/s or '32 GB/s' (0: no mesh).",
    "noc_hop_cycles": "Cycles per mesh hop of a core-to-core transfer.",
    "energy": "Per-access energies (pJ, pJ/B), static power per component (mW) and power "
              "gating; see npuweave.hardware.energy (absent: the default table, with a note).",
    "maestro_noc_bw": "MAESTRO's NoC between the global buffer and the PEs ('maestro' cost "
                      "model): elements per cycle or '64 elements/cycle' (0: unconstrained).",
}


def _quantity(minimum: dict[str, float]) -> dict[str, Any]:
    return {"anyOf": [{"type": "number", **minimum},
                      {"type": "string", "pattern": loader._UNIT.pattern}]}


def _field_schema(name: str) -> dict[str, Any]:
    if name in loader._SIZE_FIELDS:
        out = _quantity({"exclusiveMinimum": 0} if name == "weight_buffer" else {"minimum": 0})
    elif name in loader._RATE_FIELDS:  # noc_bw 0 means no mesh
        out = _quantity({"minimum": 0} if name == "noc_bw" else {"exclusiveMinimum": 0})
    elif name in loader._ELEMENT_RATE:
        out = {"anyOf": [{"type": "integer", "minimum": 0,
                          "maximum": loader._MAX_ELEMENT_RATE},
                         {"type": "string", "pattern": loader._ELEMENTS.pattern}]}
    elif name in loader._POSITIVE_INT:
        out = {"type": "integer", "minimum": 1}
    elif name in loader._NONNEG_INT:
        out = {"type": "integer", "minimum": 0}
    elif name == "mesh":
        out = {"type": "array", "items": {"type": "integer", "minimum": 1},
               "minItems": 2, "maxItems": 2}
    elif name == "energy":
        out = {"type": ["object", "null"]}
    elif name == "dataflow":
        out = {"enum": list(loader.DATAFLOWS)}
    else:
        out = {"type": "string"}
    out["description"] = _DESCRIPTIONS.get(name, name)
    field = next(f for f in dataclasses.fields(NPU) if f.name == name)
    if field.default is not dataclasses.MISSING and name != "name":
        default = field.default
        out["default"] = list(default) if isinstance(default, tuple) else default
    return out


def npu_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an NPU YAML file, built from the spec definition.

    Examples
    --------
    >>> schema = npu_schema()
    >>> schema["$defs"]["npu"]["required"][:2]
    ['pe_rows', 'pe_cols']
    """
    spec = {
        "type": "object",
        "properties": {f.name: _field_schema(f.name) for f in dataclasses.fields(NPU)},
        "required": list(loader._REQUIRED),
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "npuweave NPU spec",
        "description": "An NPU for npuweave: the fields themselves, or under a top-level 'npu' key.",
        "$defs": {"npu": spec},
        "anyOf": [
            {"$ref": "#/$defs/npu"},
            {"type": "object", "properties": {"npu": {"$ref": "#/$defs/npu"}},
             "required": ["npu"], "additionalProperties": False},
        ],
    }


def schema_text() -> str:
    """``npu_schema()`` as the JSON text the package ships (sorted keys, two-space indent)."""
    return json_text(npu_schema(), indent=2, sort_keys=True)


def shipped_schema_text() -> str:
    """The schema file installed with the package."""
    return (resources.files("npuweave.hardware") / SCHEMA_FILE).read_text(encoding="utf-8")
