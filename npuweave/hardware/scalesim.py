"""SCALE-Sim ``.cfg`` files as NPU specs (read and write).

A SCALE-Sim configuration (INI syntax; ``key: value`` or ``key = value``, keys case-insensitive)
describes one systolic array. npuweave reads:

* ``[general] run_name`` -> the NPU's name;
* ``[architecture_presets] ArrayHeight, ArrayWidth`` -> ``pe_rows, pe_cols``;
* ``FilterSramSzkB`` -> ``weight_buffer``; ``IfmapSramSzkB + OfmapSramSzkB`` -> ``act_buffer``
  (kB = 1024 bytes; SCALE-Sim counts one-byte words, so ``precision_bits`` is 8);
* ``Dataflow``: must be ``ws``; npuweave's array cost models are weight stationary and would
  misprice an ``os`` or ``is`` array;
* ``[run_presets] InterfaceBandwidth``: ``USER`` takes ``Bandwidth`` (words per cycle, the
  first of a comma list) as the DRAM bandwidth; ``CALC`` means "as much as never to stall",
  which we model as ``CALC_BANDWIDTH`` bytes per cycle.

SCALE-Sim has no clock: cycles are its unit. npuweave needs seconds, so the clock is
``DEFAULT_CLOCK_HZ`` (1 GHz: one nanosecond per cycle, so ``compute_cycles`` read as SCALE-Sim's
cycles). An optional ``[npuweave]`` section, which SCALE-Sim ignores, sets any NPU YAML field
(``clock_hz``, ``dram_bw``, ``dram_latency_cycles``, ``description``...) and wins over the rest.
"""

from __future__ import annotations

import configparser
import os
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError
from npuweave.fileio import write_text
from npuweave.hardware.loader import npu_from_dict, parse_quantity
from npuweave.hardware.npu import NPU

DEFAULT_CLOCK_HZ = 1e9
#: Bytes per cycle for ``InterfaceBandwidth: CALC`` (an interface that never stalls the array).
CALC_BANDWIDTH = 1_000_000
_ARCH = "architecture_presets"


def _get(cfg: configparser.ConfigParser, section: str, key: str, problems: list[str]) -> str | None:
    if not cfg.has_option(section, key):
        problems.append(f"[{section}] {key} is missing")
        return None
    return cfg.get(section, key).strip()


def _positive(text: str | None, where: str, problems: list[str]) -> int:
    if text is None:
        return 0
    try:
        value = int(text)
    except ValueError:
        problems.append(f"{where} must be an integer, got {text!r}")
        return 0
    if value < 1:
        problems.append(f"{where} must be >= 1, got {value}")
    return value


def _parse(path: str) -> configparser.ConfigParser:
    cfg = configparser.ConfigParser(inline_comment_prefixes=("#", ";"))
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError) as exc:
        raise ConfigError(f"{path}: cannot read SCALE-Sim config ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file; a SCALE-Sim config is INI text") from None
    try:
        cfg.read_string(text, source=path)
    except configparser.Error as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not a valid SCALE-Sim config ({first})") from None
    return cfg


def load_scalesim_cfg(path: str | os.PathLike[str]) -> NPU:
    """Read a SCALE-Sim ``.cfg`` as an ``NPU`` (see the module docstring for the mapping).

    Examples
    --------
    >>> npu = load_scalesim_cfg("scale.cfg")  # doctest: +SKIP
    >>> npu.pe_rows, npu.weight_buffer        # doctest: +SKIP
    (32, 65536)
    """
    p = str(path)
    cfg = _parse(p)
    problems: list[str] = []
    if not cfg.has_section(_ARCH):
        raise ConfigError(f"{p}: no [{_ARCH}] section; a SCALE-Sim config needs ArrayHeight, "
                          f"ArrayWidth, the SRAM sizes and Dataflow there")
    rows = _positive(_get(cfg, _ARCH, "ArrayHeight", problems), "ArrayHeight", problems)
    cols = _positive(_get(cfg, _ARCH, "ArrayWidth", problems), "ArrayWidth", problems)
    sram = {k: _positive(_get(cfg, _ARCH, k, problems), k, problems)
            for k in ("IfmapSramSzkB", "FilterSramSzkB", "OfmapSramSzkB")}
    dataflow = (_get(cfg, _ARCH, "Dataflow", problems) or "ws").lower()
    if dataflow != "ws":
        problems.append(f"Dataflow {dataflow!r}: npuweave models weight-stationary arrays only; "
                        f"set 'Dataflow : ws'")
    overrides = ({k: _yaml_value(v) for k, v in cfg.items("npuweave")}
                 if cfg.has_section("npuweave") else {})
    try:
        clock = parse_quantity(overrides.get("clock_hz", DEFAULT_CLOCK_HZ), binary=False)
    except ValueError:
        clock = DEFAULT_CLOCK_HZ  # npu_from_dict reports the bad clock_hz below
    raw: dict[str, Any] = {
        "name": cfg.get("general", "run_name", fallback=Path(p).stem).strip(),
        "pe_rows": rows, "pe_cols": cols, "clock_hz": clock, "precision_bits": 8,
        "weight_buffer": sram["FilterSramSzkB"] * 1024,
        "act_buffer": (sram["IfmapSramSzkB"] + sram["OfmapSramSzkB"]) * 1024,
        "dram_bw": _bandwidth(cfg, problems) * clock,
        "description": f"SCALE-Sim config {Path(p).name}",
    }
    if problems:
        raise ConfigError(f"{p}: invalid SCALE-Sim config: " + "; ".join(problems))
    return npu_from_dict({**raw, **overrides}, p)


def _bandwidth(cfg: configparser.ConfigParser, problems: list[str]) -> float:
    """Bytes per cycle of the DRAM interface."""
    mode = cfg.get("run_presets", "InterfaceBandwidth", fallback="CALC").strip().upper()
    if mode == "CALC":
        return float(CALC_BANDWIDTH)
    if mode != "USER":
        problems.append(f"[run_presets] InterfaceBandwidth must be USER or CALC, got {mode!r}")
        return 1.0
    text = cfg.get(_ARCH, "Bandwidth", fallback=None)
    if text is None:
        problems.append("[architecture_presets] Bandwidth is missing (needed with "
                        "InterfaceBandwidth: USER)")
        return 1.0
    return float(_positive(text.split(",")[0].strip(), "Bandwidth", problems) or 1)


def _yaml_value(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def scalesim_cfg_text(npu: NPU) -> str:
    """A SCALE-Sim v3 config for ``npu`` (weight stationary), with an ``[npuweave]`` section
    holding what SCALE-Sim cannot say (clock, exact bandwidth) so reading it back is exact.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> "ArrayHeight: 128" in scalesim_cfg_text(preset("memory-centric"))
    True
    """
    word = max(npu.element_bytes, 1)
    filt_kb = max(npu.weight_buffer // 1024, 1)
    ifmap_kb = max(npu.act_buffer // 2048, 1)
    ofmap_kb = max(npu.act_buffer // 1024 - ifmap_kb, 1)
    bandwidth = max(round(npu.dram_bw / npu.clock_hz / word), 1)
    lines = [
        "[general]", f"run_name = {npu.name}", "",
        "[architecture_presets]", f"ArrayHeight: {npu.pe_rows}", f"ArrayWidth: {npu.pe_cols}",
        f"IfmapSramSzkB: {ifmap_kb}", f"FilterSramSzkB: {filt_kb}", f"OfmapSramSzkB: {ofmap_kb}",
        "IfmapOffset: 0", "FilterOffset: 10000000", "OfmapOffset: 20000000",
        f"Bandwidth: {bandwidth}", "Dataflow: ws", "MemoryBanks: 1",
        "ReadRequestBuffer: 32", "WriteRequestBuffer: 32", "",
        "[layout]", "IfmapCustomLayout: False", "IfmapSRAMBankBandwidth: 10",
        "IfmapSRAMBankNum: 10", "IfmapSRAMBankPort: 2", "FilterCustomLayout: False",
        "FilterSRAMBankBandwidth: 10", "FilterSRAMBankNum: 10", "FilterSRAMBankPort: 2", "",
        "[sparsity]", "SparsitySupport: false", "SparseRep: ellpack_block",
        "OptimizedMapping: false", "BlockSize: 8", "RandomNumberGeneratorSeed: 40", "",
        "[run_presets]", "InterfaceBandwidth: USER", "UseRamulatorTrace: False", "",
        "[npuweave]", f"clock_hz: {npu.clock_hz!r}", f"dram_bw: {npu.dram_bw!r}",
        f"precision_bits: {npu.precision_bits}",
    ]
    return "\n".join(lines) + "\n"


def write_scalesim_cfg(path: str | os.PathLike[str], npu: NPU) -> None:
    """Write ``scalesim_cfg_text(npu)`` atomically."""
    write_text(path, scalesim_cfg_text(npu))
