"""Platform and network descriptors (Table III.2), read from YAML or the thesis's Python form.

A platform descriptor maps a device name to the formats it supports; ``DEVICE.weight`` and
``DEVICE.activation`` entries override the list for one kind of data::

    supported_formats:
      FPGA: ["FLOAT 32", "FLOAT 16", "FIXED 2-32", "EXP 2-9"]
      FPGA.activation: ["FLOAT 32", "FIXED 2-16"]

A network descriptor names the target layers and the tuning goal (see ``NetworkDescriptor``).
``load_network``/``load_platform`` read ``.yaml``/``.yml`` or ``.py`` files (a Python file's
top-level variables are the fields). Every problem is collected and reported in one error.
"""

from __future__ import annotations

import os
import re
import runpy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError
from npuweave.fileio import load_yaml, read_user_text
from npuweave.numbers.config import parse_format
from npuweave.numbers.format import NumberFormat

KINDS = ("weight", "activation")
DEFAULT_REGEX = r"Accuracy: (\S+)"


class LayerwiseOpt(str, Enum):
    """Which kind of data may use a different (type, width) in every layer."""

    BOTH = "BOTH"
    WGT_ONLY = "WGT-ONLY"
    ACT_ONLY = "ACT-ONLY"
    NONE = "NONE"

    def per_layer(self, kind: str) -> bool:
        if kind == "weight":
            return self in (LayerwiseOpt.BOTH, LayerwiseOpt.WGT_ONLY)
        return self in (LayerwiseOpt.BOTH, LayerwiseOpt.ACT_ONLY)


@dataclass(frozen=True, slots=True)
class PlatformDescriptor:
    """``device[.weight|.activation] -> supported formats`` (widths expanded, default biases)."""

    supported_formats: Mapping[str, tuple[NumberFormat, ...]]
    source: str = "<platform>"

    def devices(self) -> list[str]:
        return sorted({k.rsplit(".", 1)[0] if k.endswith(_SUFFIXES) else k
                       for k in self.supported_formats})

    def formats(self, device: str, kind: str) -> tuple[NumberFormat, ...]:
        """Formats ``device`` supports for ``kind`` ("weight" or "activation")."""
        for key in (f"{device}.{kind}", device):
            if key in self.supported_formats:
                return self.supported_formats[key]
        raise ConfigError(
            f"{self.source}: device {device!r} is not in supported_formats; "
            f"choose one of {', '.join(self.devices()) or '(none)'}"
        )


_SUFFIXES = (".weight", ".activation")


@dataclass(frozen=True, slots=True)
class NetworkDescriptor:
    """The auto-tuner's network parameters (Table III.2), one entry per target layer.

    ``err_margin`` is relative: the accuracy threshold is ``baseline * (1 - err_margin)``.
    ``quantize`` (an extension) restricts tuning to ``weight`` or ``activation`` data; the other
    kind stays FLOAT(32) (or ``fixed_formats`` if given, e.g. Stripes' FIXED(16) weights).
    """

    platform: str
    layer_name: tuple[str, ...]
    err_margin: float = 0.07
    f_obj: str | Callable[..., float] = "default"
    sub_layer_name: tuple[tuple[str, ...], ...] = ()
    layerwise_opt: LayerwiseOpt = LayerwiseOpt.BOTH
    wgt_size: tuple[int, ...] = ()
    act_size: tuple[int, ...] = ()
    wgt_max_abs: tuple[float, ...] = ()
    act_max_abs: tuple[float, ...] = ()
    cmd_smallset: str = ""
    cmd_fullset: str = ""
    get_result_regex: str = DEFAULT_REGEX
    quantize: tuple[str, ...] = KINDS
    config_path: str = "number_config.txt"
    eval_timeout_s: float = 600.0
    source: str = field(default="<network>", compare=False)

    def size(self, kind: str, index: int) -> int:
        sizes = self.wgt_size if kind == "weight" else self.act_size
        return sizes[index] if sizes else 1

    def max_abs(self, kind: str, index: int) -> float | None:
        values = self.wgt_max_abs if kind == "weight" else self.act_max_abs
        return values[index] if values else None

    def object_names(self, index: int, kind: str) -> list[str]:
        """Config keys of layer ``index``'s ``kind`` (the layer and its sub-layers)."""
        suffix = "weight" if kind == "weight" else "input"
        subs = self.sub_layer_name[index] if self.sub_layer_name else ()
        return [f"{n}.{suffix}" for n in (self.layer_name[index], *subs)]


_NETWORK_FIELDS = set(NetworkDescriptor.__dataclass_fields__) - {"source"}


def load_platform(path: str | os.PathLike[str]) -> PlatformDescriptor:
    """Read and validate a platform descriptor file."""
    raw, src = _load(path)
    return platform_from_dict(raw, src)


def load_network(path: str | os.PathLike[str]) -> NetworkDescriptor:
    """Read and validate a network descriptor file."""
    raw, src = _load(path)
    return network_from_dict(raw, src)


def platform_from_dict(raw: Mapping[str, Any], source: str = "<platform>") -> PlatformDescriptor:
    entries = raw.get("supported_formats") if isinstance(raw, Mapping) else None
    if not isinstance(entries, Mapping) or not entries:
        raise ConfigError(f"{source}: needs a non-empty 'supported_formats' mapping of "
                          "device name -> list of formats")
    problems: list[str] = []
    table: dict[str, tuple[NumberFormat, ...]] = {}
    for device, specs in entries.items():
        if not isinstance(specs, list | tuple) or not specs:
            problems.append(f"supported_formats.{device}: expected a non-empty list of formats")
            continue
        found: list[NumberFormat] = []
        for i, spec in enumerate(specs):
            try:
                found.extend(_expand(str(spec)))
            except ConfigError as err:
                problems.append(f"supported_formats.{device}[{i}] ({spec!r}): {err}")
        table[str(device)] = tuple(dict.fromkeys(found))
    if problems:
        raise ConfigError(f"{source}: " + "; ".join(problems))
    return PlatformDescriptor(table, source)


_RANGE = re.compile(r"^(\d+)\s*(?:-|\.\.)\s*(\d+)$")


def _expand(spec: str) -> list[NumberFormat]:
    """``"FIXED 2-32"`` -> FIXED(2) ... FIXED(32); otherwise a single format."""
    tokens = spec.split()
    m = _RANGE.match(tokens[1]) if len(tokens) >= 2 else None
    if not m:
        return [parse_format(tokens)]
    lo, hi = int(m.group(1)), int(m.group(2))
    if lo > hi:
        raise ConfigError(f"width range {lo}-{hi} is empty; write low-high")
    return [parse_format([tokens[0], str(n), *tokens[2:]]) for n in range(lo, hi + 1)]


def network_from_dict(raw: Mapping[str, Any], source: str = "<network>") -> NetworkDescriptor:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: expected a mapping of network parameters; write "
                          "'key: value' lines (example: docs/examples/numbers/net.yaml)")
    p: list[str] = []
    unknown = sorted(set(raw) - _NETWORK_FIELDS)
    if unknown:
        p.append(f"unknown field(s) {unknown}; valid: {', '.join(sorted(_NETWORK_FIELDS))}")
    for req in ("platform", "layer_name"):
        if req not in raw:
            p.append(f"missing required field {req!r}")
    names = _str_list(raw.get("layer_name", []), "layer_name", p)
    if "layer_name" in raw and not names:
        p.append("layer_name must list at least one target layer")
    if len(set(names)) != len(names):
        p.append("layer_name has duplicates")
    n = len(names)
    kw: dict[str, Any] = {"layer_name": tuple(names), "source": source}
    if callable(raw.get("f_obj")):
        kw["f_obj"] = raw["f_obj"]
    for key in ("platform", "f_obj", "cmd_smallset", "cmd_fullset", "get_result_regex",
                "config_path"):
        if key in raw and key not in kw:
            if not isinstance(raw[key], str):
                p.append(f"{key} must be a string, got {raw[key]!r}")
            else:
                kw[key] = raw[key]
    if "err_margin" in raw:
        m = raw["err_margin"]
        if isinstance(m, bool) or not isinstance(m, int | float) or not 0 <= m < 1:
            p.append(f"err_margin must be a number in [0, 1) (relative to baseline), got {m!r}")
        else:
            kw["err_margin"] = float(m)
    if "eval_timeout_s" in raw:
        t = raw["eval_timeout_s"]
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t <= 86400:
            p.append(f"eval_timeout_s must be seconds in (0, 86400] (how long one evaluation "
                     f"command may run), got {t!r}")
        else:
            kw["eval_timeout_s"] = float(t)
    if "layerwise_opt" in raw:
        try:
            kw["layerwise_opt"] = LayerwiseOpt(str(raw["layerwise_opt"]).upper().replace("_", "-"))
        except ValueError:
            p.append(f"layerwise_opt={raw['layerwise_opt']!r}; choose BOTH, WGT-ONLY, ACT-ONLY "
                     "or NONE")
    for key, kind in (("wgt_size", int), ("act_size", int), ("wgt_max_abs", float),
                      ("act_max_abs", float)):
        if key in raw:
            kw[key] = _numbers(raw[key], key, kind, n, p)
    if "sub_layer_name" in raw:
        subs = raw["sub_layer_name"]
        if not isinstance(subs, list | tuple) or len(subs) != n:
            p.append(f"sub_layer_name must be a list of {n} lists (one per layer), got {subs!r}")
        else:
            kw["sub_layer_name"] = tuple(
                tuple(_str_list(s, f"sub_layer_name[{i}]", p)) for i, s in enumerate(subs))
    if "quantize" in raw:
        q = raw["quantize"]
        q = [q] if isinstance(q, str) else q
        if q == ["both"]:
            q = list(KINDS)
        if not isinstance(q, list | tuple) or not q or not set(q) <= set(KINDS):
            p.append(f"quantize must be 'both', 'weight' or 'activation', got {raw['quantize']!r}")
        else:
            kw["quantize"] = tuple(k for k in KINDS if k in q)
    regex = kw.get("get_result_regex", DEFAULT_REGEX)
    try:
        if re.compile(regex).groups < 1:
            p.append(f"get_result_regex {regex!r} needs one (group) around the accuracy")
    except re.error as err:
        p.append(f"get_result_regex {regex!r} is not a valid regular expression ({err})")
    if p:
        raise ConfigError(f"{source}: " + "; ".join(p))
    return NetworkDescriptor(**kw)


def _str_list(value: Any, key: str, problems: list[str]) -> list[str]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        problems.append(f"{key} must be a list of names, got {value!r}")
        return []
    return list(value)


def _numbers(value: Any, key: str, kind: type, n: int, problems: list[str]) -> tuple:
    if not isinstance(value, list | tuple) or len(value) != n:
        problems.append(f"{key} must list {n} values (one per layer_name), got {value!r}")
        return ()
    out = []
    for i, v in enumerate(value):
        ok = not isinstance(v, bool) and isinstance(v, int | float) and v > 0
        if kind is int:
            ok = ok and float(v).is_integer()
        if not ok:
            problems.append(f"{key}[{i}] must be a positive {kind.__name__}, got {v!r}")
            continue
        out.append(kind(v))
    return tuple(out)


def _load(path: str | os.PathLike[str]) -> tuple[Any, str]:
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"descriptor file {str(p)!r} not found; check the path")
    if not p.is_file():
        raise ConfigError(f"{p}: not a regular file; a descriptor is a .yaml (or .py) file")
    if p.suffix == ".py":
        try:
            ns = runpy.run_path(str(p))
        except Exception as err:  # the user's Python file failed; report it as config
            raise ConfigError(f"{p}: running the descriptor failed: {err!r}") from err
        return {k: v for k, v in ns.items() if not k.startswith("_") and not isinstance(v, type(os))
                and (k == "f_obj" or not callable(v))}, str(p)
    return load_yaml(read_user_text(p, "descriptor"), str(p)) or {}, str(p)
