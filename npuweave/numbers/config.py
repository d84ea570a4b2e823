"""The Number configuration file: one ``object-name TYPE bits [bias] [key=value ...]`` per line.

::

    # produced by the auto-tuner
    conv1.weight   EXP   8            # <1,7,0,63>: EXP's default bias
    conv1.input    EXP   6
    fc1.weight     FIXED 15 -3        # <1,0,14,-3>
    fc1.input      FLOAT 32
    fc2.weight     FLOAT 8 7 exponent=4 specials=fn saturate=no
    fc2.input      FIXED <1,0,7,2>    # the canonical 4-tuple is accepted too

Names are free-form (``layer.weight`` and ``layer.input`` by the thesis's convention;
``layer.activation`` is accepted as a synonym by :meth:`NumberConfig.activation`). Optional
keys: ``exponent=`` (FLOAT's exponent width), ``specials=none|ieee|fn``, ``saturate=yes|no``,
``twos_complement=yes|no`` (FIXED). Every malformed line is reported, with its number, at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from npuweave.errors import ConfigError
from npuweave.fileio import read_user_text, write_text
from npuweave.numbers.format import (
    EXP,
    FIXED,
    FLOAT,
    Family,
    NumberFormat,
    Specials,
    _family,
    default_exponent_bits,
)


class NumberConfig(Mapping[str, NumberFormat]):
    """An immutable, ordered, hashable ``object name -> NumberFormat`` mapping.

    Examples
    --------
    >>> cfg = parse_config("fc1.weight FIXED 15 -3\\nfc1.input FLOAT 32", register=False)
    >>> cfg["fc1.weight"].canonical, cfg.weight("fc1").bits
    ((1, 0, 14, -3), 15)
    """

    __slots__ = ("_items", "_map")

    def __init__(self, items: Mapping[str, NumberFormat] | None = None) -> None:
        self._map: dict[str, NumberFormat] = dict(items or {})
        self._items = tuple(self._map.items())

    def __getitem__(self, name: str) -> NumberFormat:
        return self._map[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __hash__(self) -> int:
        return hash(frozenset(self._items))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NumberConfig):
            return self._map == other._map
        return NotImplemented

    def __repr__(self) -> str:
        return f"NumberConfig({', '.join(f'{k}={v.short}' for k, v in self._items)})"

    def weight(self, layer: str) -> NumberFormat | None:
        return self._map.get(f"{layer}.weight")

    def activation(self, layer: str) -> NumberFormat | None:
        return self._map.get(f"{layer}.input", self._map.get(f"{layer}.activation"))

    def replace(self, **changes: NumberFormat) -> NumberConfig:
        return NumberConfig({**self._map, **changes})

    def to_text(self) -> str:
        """The file form; ``parse_config(cfg.to_text()) == cfg``."""
        width = max((len(k) for k in self._map), default=0)
        return "".join(f"{k:<{width}}  {format_spec(v)}\n" for k, v in self._items)


def format_spec(fmt: NumberFormat) -> str:
    """The ``TYPE bits [bias] [key=value]`` text of one format (inverse of ``parse_format``)."""
    parts = [fmt.family.value, str(fmt.bits)]
    default = _default_bias(fmt)
    extra = []
    if fmt.family is Family.FLOAT and fmt.exponent != default_exponent_bits(fmt.bits):
        extra.append(f"exponent={fmt.exponent}")
        default = 2 ** (fmt.exponent - 1) - 1
    if fmt.sign == 0:
        return f"{fmt.family.value} <{','.join(map(str, fmt.canonical))}>" + _keys(fmt)
    if fmt.bias != default or extra:
        parts.append(str(fmt.bias))
    return " ".join(parts + extra) + _keys(fmt)


def _keys(fmt: NumberFormat) -> str:
    out = ""
    if fmt.specials is not Specials.NONE:
        out += f" specials={fmt.specials.value}"
    if not fmt.saturate:
        out += " saturate=no"
    if fmt.twos_complement:
        out += " twos_complement=yes"
    return out


def _default_bias(fmt: NumberFormat) -> int:
    if fmt.family in (Family.FLOAT, Family.EXP):
        return 2 ** (fmt.exponent - 1) - 1
    return 0


_TUPLE = re.compile(r"^<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>$")
_BOOL = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False}


def parse_format(spec: str | list[str]) -> NumberFormat:
    """Parse ``"FIXED 15 -3"``, ``"FLOAT 8 exponent=5 specials=ieee"`` or ``"EXP <1,3,0,3>"``.

    Examples
    --------
    >>> parse_format("EXP 8").canonical
    (1, 7, 0, 63)
    """
    tokens = spec.split() if isinstance(spec, str) else list(spec)
    if len(tokens) < 2:
        raise ConfigError(f"format {' '.join(tokens)!r} needs a type and a bit width, e.g. FIXED 8")
    fam = _family(tokens[0])
    keys = dict(t.split("=", 1) for t in tokens[2:] if "=" in t)
    positional = [t for t in tokens[2:] if "=" not in t]
    unknown = set(keys) - {"exponent", "specials", "saturate", "twos_complement"}
    if unknown:
        raise ConfigError(
            f"unknown key(s) {sorted(unknown)}; use exponent=, specials=, saturate=, twos_complement="
        )
    if len(positional) > 1:
        raise ConfigError(f"too many fields {positional}; expected TYPE bits [bias] [key=value]")
    opts = _options(keys)
    m = _TUPLE.match(tokens[1].replace(" ", ""))
    if m:
        if positional:
            raise ConfigError("a canonical <s,e,f,b> tuple takes no separate bias; put the "
                              "bias inside the tuple")
        s, e, f, b = (int(g) for g in m.groups())
        return NumberFormat(fam, s, e, f, b, **opts)
    bits = _int(tokens[1], "bit width")
    bias = _int(positional[0], "bias") if positional else None
    if fam is Family.FLOAT:
        return FLOAT(bits, bias, exponent=opts.get("exponent"), specials=opts.get(
            "specials", Specials.NONE), saturate=opts.get("saturate", True))
    if "exponent" in keys:
        raise ConfigError(f"exponent= applies to FLOAT only, not {fam.value}; remove it")
    if fam is Family.FIXED:
        fixed = FIXED(bits, 0 if bias is None else bias)
        return NumberFormat(Family.FIXED, 1, 0, fixed.fraction, fixed.bias,
                            opts.get("specials", Specials.NONE), opts.get("saturate", True),
                            opts.get("twos_complement", False))
    if fam is Family.EXP:
        return EXP(bits, bias, specials=opts.get("specials", Specials.NONE),
                   saturate=opts.get("saturate", True))
    if bits != 1:
        raise ConfigError(f"BINARY has exactly 1 bit, got {bits}; write BINARY 1")
    return NumberFormat(Family.BINARY, 1, 0, 0, 0 if bias is None else bias)


def _options(keys: dict[str, str]) -> dict:
    opts: dict = {}
    for key, raw in keys.items():
        if key == "exponent":
            opts[key] = _int(raw, "exponent")
        elif key == "specials":
            try:
                opts[key] = Specials(raw.lower())
            except ValueError:
                raise ConfigError(f"specials={raw!r}; choose none, ieee or fn") from None
        else:
            if raw.lower() not in _BOOL:
                raise ConfigError(f"{key}={raw!r}; use yes or no")
            opts[key] = _BOOL[raw.lower()]
    return opts


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{what} must be an integer, got {text!r}") from None


def parse_config(src: str | os.PathLike[str], *, register: bool = True) -> NumberConfig:
    """Read a Number configuration file (a path, or the text itself).

    Like the thesis's ``Number::parseConfig`` it also installs the formats in the global
    registry used by :meth:`Number.set_name`; pass ``register=False`` for a pure parse.

    Examples
    --------
    >>> parse_config("conv1.weight EXP 8", register=False)["conv1.weight"].short
    'E8(63)'
    """
    text, origin = _read(src)
    formats: dict[str, NumberFormat] = {}
    first_line: dict[str, int] = {}
    problems: list[str] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, *rest = line.split(None, 1)
        spec = rest[0] if rest else ""
        where = f"{origin} line {lineno}"
        if name in first_line:
            problems.append(f"{where}: {name!r} already set on line {first_line[name]}")
            continue
        try:
            formats[name] = parse_format(spec)
            first_line[name] = lineno
        except ConfigError as err:
            problems.append(f"{where} ({raw.strip()!r}): {err}")
    if problems:
        raise ConfigError("; ".join(problems))
    cfg = NumberConfig(formats)
    if register:
        from npuweave.numbers.number import register_formats

        register_formats(cfg)
    return cfg


def _read(src: str | os.PathLike[str]) -> tuple[str, str]:
    if isinstance(src, os.PathLike) or ("\n" not in src and " " not in src.strip()):
        path = Path(src)
        if not path.exists():
            raise ConfigError(f"number config file {str(path)!r} not found; check the path")
        try:
            return read_user_text(path, "number config file"), str(path)
        except ConfigError as err:
            if "UTF-8" not in str(err):
                raise
            raise ConfigError(f"{path}: not a text file; a number config file has lines like "
                              f"'conv1.weight FIXED 8 4'") from None
    return src, "<config text>"


def write_config(config: Mapping[str, NumberFormat], path: str | os.PathLike[str],
                 header: str = "") -> None:
    """Write ``config`` atomically in the file form (``header`` lines become comments)."""
    cfg = config if isinstance(config, NumberConfig) else NumberConfig(config)
    head = "".join(f"# {line}\n" for line in header.splitlines())
    write_text(path, head + cfg.to_text())
