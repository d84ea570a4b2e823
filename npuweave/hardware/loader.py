"""NPU specs from YAML: file -> validation (every problem at once) -> frozen ``NPU``.

Sizes accept integers (bytes) or strings with units (``"48 MiB"``, ``"2.3MB"``); bandwidths
accept bytes/s or strings (``"225 GB/s"``); clocks accept Hz or strings (``"700 MHz"``).
Decimal prefixes (k, M, G, T) are powers of 1000 and binary ones (Ki, Mi, Gi) powers of
1024, except that buffer sizes written with a plain ``MB``/``KB``/``GB`` are taken as binary
(as chip datasheets mean them); bandwidth ``GB/s`` is decimal.
"""

from __future__ import annotations

import dataclasses
import math
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError, unknown_name
from npuweave.fileio import load_yaml, read_user_text
from npuweave.hardware.energy import complete_energy, energy_from_dict, fold_dotted
from npuweave.hardware.npu import NPU

_PRESET_DIR = "presets"
_FIELDS = {f.name: f for f in dataclasses.fields(NPU)}
_REQUIRED = [n for n, f in _FIELDS.items()
             if f.default is dataclasses.MISSING and n != "name"]
_SIZE_FIELDS = {"weight_buffer", "act_buffer", "extra_act_buffer", "lmem_bytes",
                "global_mem_bytes"}
_POSITIVE_INT = {"pe_rows", "pe_cols", "arrays", "cores", "lmem_banks", "precision_bits"}
# bounds checked before any work: the layer-group allocator is quadratic in banks, and the
# cost models' loops grow with the array size
_MAX_INT = {"lmem_banks": 1024, "noc_hop_cycles": 10**9, "pe_rows": 1 << 16, "pe_cols": 1 << 16, "arrays": 1 << 16,
            "precision_bits": 64, "dram_latency_cycles": 10**9, "vector_lanes": 1 << 20}
_NONNEG_INT = {"dram_latency_cycles", "vector_lanes"}
_MAX_BYTES = 1 << 60  # a memory or buffer size (1e30 GiB gave 6.5e34 KV blocks, exit 0)
_SIZE_FIELDS |= {"l2_bytes"}
_NONNEG_INT |= {"noc_hop_cycles"}
_RATE_FIELDS = {"dram_bw", "clock_hz", "noc_bw"}
#: element rates (MAESTRO's distribution NoC): a non-negative integer of elements per cycle
_ELEMENT_RATE = {"maestro_noc_bw"}
_MAX_ELEMENT_RATE = 1 << 30  # MAESTRO holds the bandwidth in a C++ int
_ELEMENTS = re.compile(r"^\s*([0-9]+)\s*(?:elements?|elems?)?\s*/\s*cycles?\s*$")
#: Dataflows the cost models implement.
DATAFLOWS = ("ws",)
_UNIT = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKMGT]?i?)([Bb]|Hz|hz)?(/s)?\s*$")
_DEC = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BIN = {"": 1, "k": 1024, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


_DIMENSION = {**{f: "bytes" for f in _SIZE_FIELDS}, "dram_bw": "bytes/s", "noc_bw": "bytes/s",
              "clock_hz": "Hz"}
_EXAMPLE = {"bytes": "'48 MiB'", "bytes/s": "'225 GB/s'", "Hz": "'700 MHz'"}


def parse_quantity(value: Any, *, binary: bool, dimension: str | None = None) -> float:
    """Parse ``225``, ``"225 GB/s"``, ``"48 MiB"``, ``"700 MHz"`` into a float.

    ``binary`` makes a bare ``M``/``K``/``G`` prefix mean 1024-based (buffer sizes). A lower-case
    ``b`` means bits (divided by 8). ``dimension`` (``"bytes"``, ``"bytes/s"`` or ``"Hz"``)
    rejects a unit of another kind (a bandwidth on a clock, a frequency on a size); a bare
    number or prefix is taken in the field's own unit.

    >>> parse_quantity("48 MB", binary=True) == 48 * 2**20
    True
    >>> parse_quantity("225 GB/s", binary=False)
    225000000000.0
    >>> parse_quantity("800 Gb/s", binary=False, dimension="bytes/s")
    100000000000.0
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    unit = per_s = None
    if isinstance(value, (int, float)):
        number = float(value) if abs(value) < 1e300 else math.inf  # float(10**400) overflows
    elif isinstance(value, str):
        m = _UNIT.match(value)
        if not m:
            raise ValueError(f"cannot parse {value!r}; write e.g. 225, '225 GB/s', '48 MiB', "
                             f"'700 MHz'")
        num, prefix, unit, per_s = m.groups()
        scale = _BIN[prefix[:-1]] if prefix.endswith("i") else (_BIN if binary else _DEC)[prefix]
        number = float(num) * scale / (8 if unit == "b" else 1)
    else:
        raise ValueError(f"expected a number or a string with units, got {value!r}")
    if not math.isfinite(number):  # .inf / .nan in YAML, or 1e400
        raise ValueError(f"must be a finite number, got {value!r}")
    if isinstance(value, str):
        _check_dimension(value, unit, per_s, dimension)
    return number


def _check_dimension(value: str, unit: str | None, per_s: str | None, dimension: str | None) -> None:
    if unit is None and per_s is None:
        return  # a bare number (or prefix) is in the field's own unit
    got = ("Hz" if unit.lower() == "hz" else "bytes") if unit else ""
    got += "/s" if per_s else ""
    if got == "Hz/s" or got == "/s":
        raise ValueError(f"cannot parse {value!r}; write e.g. '225 GB/s', '700 MHz'")
    if dimension is not None and got != dimension:
        raise ValueError(f"{value!r} is in {got}, but this field is in {dimension}; write e.g. "
                         f"{_EXAMPLE[dimension]}")


def _convert(field: str, value: Any) -> Any:
    if field in _SIZE_FIELDS:
        v = parse_quantity(value, binary=True, dimension="bytes")
        if not 0 <= v <= _MAX_BYTES:
            raise ValueError(f"must be from 0 to 1 EiB (2**60 bytes), got {value!r}")
        return int(round(v))
    if field in _RATE_FIELDS:
        v = parse_quantity(value, binary=False, dimension=_DIMENSION[field])
        if not (v > 0 or (field == "noc_bw" and v == 0)):  # noc_bw 0: no mesh
            raise ValueError(f"must be > 0, got {value!r}")
        return v
    if field in _ELEMENT_RATE:
        return _element_rate(value)
    if field in _POSITIVE_INT | _NONNEG_INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be an integer, got {value!r}")
        low = 1 if field in _POSITIVE_INT else 0
        if value < low:
            raise ValueError(f"must be >= {low}, got {value!r}")
        if value > _MAX_INT.get(field, value):
            raise ValueError(f"must be <= {_MAX_INT[field]}, got {value!r} (the limit is "
                             f"npuweave.hardware.loader._MAX_INT[{field!r}]; raise it there "
                             "if you really mean it)")
        return value
    if field == "mesh":
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or not all(type(v) is int and v >= 1 for v in value)):
            raise ValueError(f"must be [rows, cols] of positive integers, got {value!r}")
        return (int(value[0]), int(value[1]))
    if field == "dataflow":
        if value not in DATAFLOWS:
            raise ValueError(f"must be 'ws' (weight stationary), got {value!r}")
        return value
    if field in ("name", "description"):
        return str(value)
    raise AssertionError(field)


def _element_rate(value: Any) -> int:
    """``maestro_noc_bw``: ``64`` or ``"64 elements/cycle"``; 0 means unconstrained."""
    hint = ("write elements per cycle, e.g. 64 or '64 elements/cycle' (0: unconstrained); "
            "this is MAESTRO's network between the global buffer and the PEs, not the "
            "core-to-core mesh link 'noc_bw' in bytes/s")
    if isinstance(value, str):
        m = _ELEMENTS.match(value)
        if not m:
            raise ValueError(f"cannot parse {value!r}; {hint}")
        value = int(m.group(1))
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be a whole number of elements per cycle, got {value!r}; {hint}")
    if not 0 <= value <= _MAX_ELEMENT_RATE:
        raise ValueError(f"must be between 0 and {_MAX_ELEMENT_RATE} elements per cycle, got "
                         f"{value!r}; {hint}")
    return value


#: Fields whose name does not say the unit: in a file, a bare number there is an error
#: (``weight_buffer: 24`` was 24 bytes, silently); from Python it is bytes or bytes/s.
_UNIT_NEEDED = {"weight_buffer": "'24 MiB' (or '24 B' for bytes)",
                "act_buffer": "'24 MiB' (or '24 B' for bytes)",
                "extra_act_buffer": "'24 MiB' (or '24 B' for bytes)",
                "dram_bw": "'225 GB/s'", "noc_bw": "'32 GB/s'"}


def _bare(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value != 0 and math.isfinite(value)  # inf/nan: "must be a finite number"
    return isinstance(value, str) and bool(re.fullmatch(r"\s*[-+]?[0-9.eE+-]+\s*", value)) \
        and value.strip() not in ("0", "0.0")


def npu_from_dict(raw: Any, source: str = "<dict>", units_required: bool = False) -> NPU:
    """Validate a raw mapping and build an ``NPU``; every bad field is reported at once.

    ``units_required`` (files and presets): a bare number in a field whose name does not say
    its unit (``weight_buffer``, ``dram_bw``...) is an error showing the accepted forms."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping of NPU fields, got "
                          f"{type(raw).__name__}; write 'field: value' lines such as "
                          "'pe_rows: 128' (see the README's NPU spec example)")
    problems: list[str] = []
    values: dict[str, Any] = {}
    energy: dict[str, Any] | None = None
    raw = fold_dotted(raw)
    for key, value in raw.items():
        if key == "energy":
            energy = energy_from_dict(value, problems)
            continue
        if key not in _FIELDS:
            problems.append(f"unknown field {key!r} (allowed: {', '.join(sorted(_FIELDS))})")
            continue
        if units_required and key in _UNIT_NEEDED and _bare(value):
            problems.append(f"field {key!r}: {value!r} has no unit; write e.g. "
                            f"{_UNIT_NEEDED[key]}")
            continue
        try:
            values[key] = _convert(key, value)
        except ValueError as exc:
            problems.append(f"field {key!r}: {exc}")
    for key in _REQUIRED:
        if key not in raw:
            problems.append(f"missing required field {key!r}")
    if values.get("weight_buffer") == 0:
        problems.append("field 'weight_buffer': must be > 0 bytes")
    cores, mesh = values.get("cores", 1), values.get("mesh", (1, 1))
    if "mesh" in values and mesh[0] * mesh[1] != cores:
        problems.append(f"field 'mesh': {list(mesh)} holds {mesh[0] * mesh[1]} cores but 'cores' is {cores}")
    problems += _multicore_problems(values)
    if problems:
        raise ConfigError(f"{source}: invalid NPU spec: " + "; ".join(problems))
    values.setdefault("name", Path(source).stem if source != "<dict>" else "custom")
    if energy is not None:
        macs = math.prod(values.get(k, 1) for k in ("pe_rows", "pe_cols", "arrays", "cores"))
        values["energy"] = complete_energy(energy, values.get("precision_bits", 16), macs)
    return NPU(**values)


def _multicore_problems(values: dict[str, Any]) -> list[str]:
    """A mesh of several cores needs its links: ``noc_bw`` > 0 and, per core, ``l2_bytes``."""
    if values.get("cores", 1) <= 1 or not ("noc_bw" in values or "l2_bytes" in values):
        return []
    problems = []
    if values.get("noc_bw", 0) <= 0:
        problems.append("field 'noc_bw': a multi-core NPU with an L2 per core needs the mesh "
                        "link bandwidth, e.g. noc_bw: 32 GB/s")
    if values.get("l2_bytes", 0) <= 0:
        problems.append("field 'l2_bytes': a multi-core NPU with a mesh needs each core's L2 "
                        "size, e.g. l2_bytes: 8 MiB")
    if "mesh" not in values:
        problems.append(f"field 'mesh': say how the {values['cores']} cores are arranged, "
                        "e.g. mesh: [2, 2]")
    return problems


def load_npu(path: str | Path) -> NPU:
    """Load an NPU spec from a YAML file.

    Examples
    --------
    >>> npu = load_npu("my_npu.yaml")  # doctest: +SKIP
    """
    p = Path(path)
    raw = load_yaml(read_user_text(p, "NPU spec"), str(p))
    if isinstance(raw, dict) and "npu" in raw and isinstance(raw["npu"], dict):
        raw = raw["npu"]
    return npu_from_dict(raw, str(p), units_required=True)


def preset_names() -> list[str]:
    root = resources.files("npuweave.hardware") / _PRESET_DIR
    return sorted(f.name[:-5] for f in root.iterdir() if f.name.endswith(".yaml"))


@cache
def preset(name: str) -> NPU:
    """Return a built-in NPU preset by name (see ``preset_names()``)."""
    if name not in preset_names():
        raise unknown_name("NPU preset", name, preset_names())
    text = (resources.files("npuweave.hardware") / _PRESET_DIR / f"{name}.yaml").read_text()
    return npu_from_dict(load_yaml(text, f"preset:{name}"), f"preset:{name}",
                         units_required=True)

