"""Energy spec of an NPU: per-access energies, static power per component, optional gating.

The ``energy:`` section of an NPU YAML (or of a preset) holds:

* ``mac_pj``: energy of one multiply-accumulate, ``"1.5 pJ"`` (a bare number is pJ);
* ``vector_op_pj``: one vector-unit operation (pooling, activation, norm element), pJ;
* ``pe_idle_pj``: one PE for one array cycle in which it does no useful MAC (a fold that maps
  fewer rows or columns than the array has, pipeline fill and drain), pJ: an ungated PE is
  clocked and latches the operands passing through whether its MAC counts or not, so the array
  costs ``PEs x cycles`` PE-cycles, of which the useful MACs are priced at ``mac_pj``;
* ``<buffer>_sram_<read|write>_pj_per_byte`` for ``ifmap``, ``filter`` and ``ofmap``:
  ``"12.5 pJ/B"`` (``pJ/bit`` is multiplied by 8; a bare number is pJ/B);
* ``dram_pj_per_byte``: one byte read or written in DRAM, pJ/B;
* ``static_mw``: static (leakage and clock) power per component, a mapping of ``array``,
  ``vector``, ``sram``, ``other`` to ``"120 mW"`` (``W`` and ``uW`` accepted; a bare number is mW);
* ``gating``: components that are power-gated while the NPU idles, e.g. ``[array, vector]``;
  ``wake_up_s``: the wake-up time of a gated component (``"2 us"``), paid at full static power
  (the wake is hidden by a predictive controller: it never delays work);
* ``dram_counts``: ``traffic`` (default: DRAM energy follows the cost model's DRAM bytes, the
  traffic the time model moves) or ``scalesim`` (SCALE-Sim v3's DRAM counters: each layer reads
  its ifmap and filter from DRAM and writes every fold's partial sums, as a single-layer run does);
* ``source``: free text naming where the numbers come from (paper or tool, technology node).

Every value is checked before any work: negative or non-finite numbers, an energy given as a
power (``"5 mW"`` for ``mac_pj``) or a power given as an energy (``"5 pJ"`` for a static power),
and unknown fields or components are reported together, each naming its field.

A spec without the section gets ``DEFAULT_ENERGY`` at its precision (``default_energy``) and the
energy code says so in one note.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from typing import Any

#: Components that draw static power (``static_mw`` keys, ``gating`` entries).
COMPONENTS = ("array", "vector", "sram", "other")
BUFFERS = ("ifmap", "filter", "ofmap")
DRAM_COUNTS = ("traffic", "scalesim")

_NUM = r"([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
_QTY = re.compile(rf"^\s*{_NUM}\s*([a-zA-Zµ]*)\s*(?:/\s*([A-Za-z]+))?\s*$")
_ENERGY_PREFIX = {"fJ": 1e-3, "pJ": 1.0, "nJ": 1e3, "uJ": 1e6, "µJ": 1e6, "mJ": 1e9, "J": 1e12}
_POWER_PREFIX = {"uW": 1e-3, "µW": 1e-3, "mW": 1.0, "W": 1e3, "kW": 1e6}
_TIME_PREFIX = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12}
_PER_BYTE = {"B": 1.0, "byte": 1.0, "bytes": 1.0, "bit": 8.0, "b": 8.0}
_PER_ACCESS = {"MAC": 1.0, "mac": 1.0, "op": 1.0, "access": 1.0}


@dataclass(frozen=True, slots=True)
class EnergySpec:
    """Per-access energies (pJ, pJ/B), static power (mW) and gating of one NPU.

    Examples
    --------
    >>> spec = EnergySpec(mac_pj=1.5, dram_pj_per_byte=31.2, static_mw=(("array", 100.0),))
    >>> spec.static_power_w
    0.1
    """

    mac_pj: float = 0.0
    vector_op_pj: float = 0.0
    #: energy of one PE-cycle without a useful MAC while the array runs (see the module docstring)
    pe_idle_pj: float = 0.0
    ifmap_sram_read_pj_per_byte: float = 0.0
    ifmap_sram_write_pj_per_byte: float = 0.0
    filter_sram_read_pj_per_byte: float = 0.0
    filter_sram_write_pj_per_byte: float = 0.0
    ofmap_sram_read_pj_per_byte: float = 0.0
    ofmap_sram_write_pj_per_byte: float = 0.0
    dram_pj_per_byte: float = 0.0
    #: ``(component, mW)`` pairs, in ``COMPONENTS`` order
    static_mw: tuple[tuple[str, float], ...] = ()
    gating: tuple[str, ...] = ()
    wake_up_s: float = 0.0
    dram_counts: str = "traffic"
    source: str = ""
    #: fields the YAML left out, taken from ``default_energy`` (not compared, not written out)
    defaulted: tuple[str, ...] = field(default=(), compare=False)

    @property
    def static_power_w(self) -> float:
        """Static power of every component together, in watts."""
        return sum(mw for _, mw in self.static_mw) / 1e3

    @property
    def gated_power_w(self) -> float:
        """Static power of the gated components, in watts."""
        return sum(mw for c, mw in self.static_mw if c in self.gating) / 1e3

    def sram_pj(self, buffer: str, action: str) -> float:
        """pJ/B of one ``read`` or ``write`` of ``buffer`` (``ifmap``, ``filter``, ``ofmap``)."""
        return float(getattr(self, f"{buffer}_sram_{action}_pj_per_byte"))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)
                               if f.name != "defaulted"}
        out["static_mw"] = dict(self.static_mw)
        out["gating"] = list(self.gating)
        return out


#: Per-access field name -> ("energy" | "per_byte" | "time" | "enum" | "text" | ...)
_KIND = {f.name: ("per_byte" if f.name.endswith("_per_byte") else "energy")
         for f in fields(EnergySpec) if f.name.endswith(("_pj", "_per_byte"))}
_KIND.update(static_mw="static", gating="gating", wake_up_s="time", dram_counts="enum",
             source="text")


def _split(value: Any, field: str) -> tuple[float, str, str | None]:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"expected a number or a string with units, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value), "", None
    m = _QTY.match(value)
    if not m:
        raise ValueError(f"cannot parse {value!r}; write e.g. {_example(field)}")
    return float(m.group(1)), m.group(2), m.group(3)


def _example(field: str) -> str:
    kind = _KIND.get(field, "static")
    return {"energy": "'1.5 pJ'", "per_byte": "'12.5 pJ/B'", "time": "'2 us'"}.get(kind,
                                                                                "'120 mW'")


#: upper bounds far above any physical value (DRAM costs ~10-100 pJ/B, a chip ~10-500 W):
#: a larger number is a typo or a wrong unit, and would overflow the run's sums to inf
MAX_PJ = 1e6
MAX_MW = 1e9
MAX_WAKE_S = 1e3


def _finite_nonneg(number: float, value: Any, limit: float = math.inf,
                   limit_text: str = "") -> float:
    if not math.isfinite(number):
        raise ValueError(f"must be a finite number, got {value!r}")
    if number < 0:
        raise ValueError(f"must be >= 0, got {value!r}")
    if number > limit:
        raise ValueError(f"{value!r} is over the limit {limit_text}; check the value and its "
                         "unit")
    return number


def parse_energy(value: Any, field: str, *, per_byte: bool) -> float:
    """``"1.5 pJ"`` -> 1.5 (pJ); ``"31 pJ/B"`` or ``"3.9 pJ/bit"`` -> pJ per byte.

    Examples
    --------
    >>> parse_energy("3.9 pJ/bit", "dram_pj_per_byte", per_byte=True)
    31.2
    >>> parse_energy("0.2 nJ", "mac_pj", per_byte=False)
    200.0
    """
    number, unit, per = _split(value, field)
    if unit in _POWER_PREFIX:
        raise ValueError(f"{value!r} is a power, but this field is an energy per "
                         f"{'byte' if per_byte else 'access'}; write e.g. {_example(field)}")
    if unit and unit not in _ENERGY_PREFIX:
        raise ValueError(f"unknown unit {unit!r} in {value!r}; write e.g. {_example(field)}")
    scale = _ENERGY_PREFIX.get(unit, 1.0)
    if per_byte:
        if unit and per is None:
            raise ValueError(f"{value!r} has no '/B'; this field is an energy per byte, "
                             f"write e.g. {_example(field)}")
        if per is not None and per not in _PER_BYTE:
            raise ValueError(f"'/{per}' in {value!r}: write per byte ('/B') or per bit ('/bit')")
        scale *= _PER_BYTE.get(per or "B", 1.0)
    elif per is not None and per not in _PER_ACCESS:
        raise ValueError(f"'/{per}' in {value!r}: this field is an energy per access, "
                         f"write e.g. {_example(field)}")
    return _finite_nonneg(number * scale, value, MAX_PJ, "1e6 pJ (1 uJ)")


def parse_power(value: Any, field: str) -> float:
    """``"120 mW"``, ``"0.12 W"`` or ``120`` -> 120.0 (mW); an energy is refused.

    Examples
    --------
    >>> parse_power("0.5 W", "static_mw.array")
    500.0
    """
    number, unit, per = _split(value, field)
    if unit in _ENERGY_PREFIX:
        raise ValueError(f"{value!r} is an energy, but a static power is in watts; write "
                         f"e.g. '120 mW'")
    if (unit and unit not in _POWER_PREFIX) or per is not None:
        raise ValueError(f"cannot read {value!r} as a power; write e.g. '120 mW'")
    return _finite_nonneg(number * _POWER_PREFIX.get(unit, 1.0), value, MAX_MW, "1 MW")


def parse_time(value: Any, field: str) -> float:
    """``"2 us"`` -> 2e-06 seconds; a bare number is seconds."""
    number, unit, per = _split(value, field)
    if (unit and unit not in _TIME_PREFIX) or per is not None:
        raise ValueError(f"cannot read {value!r} as a time; write e.g. '2 us'")
    return _finite_nonneg(number * _TIME_PREFIX.get(unit, 1.0), value, MAX_WAKE_S, "1000 s")


def _components(value: Any, where: str, problems: list[str]) -> list[str]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)):
        problems.append(f"field '{where}': expected a list of components "
                        f"({', '.join(COMPONENTS)}), got {value!r}")
        return []
    bad = [n for n in names if n not in COMPONENTS]
    for n in bad:
        problems.append(f"field '{where}': unknown component {n!r} (allowed: "
                        f"{', '.join(COMPONENTS)})")
    return [n for n in names if n in COMPONENTS]


def _static(value: Any, problems: list[str]) -> tuple[tuple[str, float], ...]:
    if not isinstance(value, dict):
        problems.append(f"field 'energy.static_mw': expected a mapping such as "
                        f"{{array: 120 mW, sram: 80 mW}}, got {value!r}")
        return ()
    out = {}
    for key, v in value.items():
        if key not in COMPONENTS:
            problems.append(f"field 'energy.static_mw.{key}': unknown component (allowed: "
                            f"{', '.join(COMPONENTS)})")
            continue
        try:
            out[key] = parse_power(v, f"static_mw.{key}")
        except ValueError as exc:
            problems.append(f"field 'energy.static_mw.{key}': {exc}")
    return tuple((c, out[c]) for c in COMPONENTS if c in out)


def _convert(key: str, value: Any, problems: list[str]) -> Any:
    kind = _KIND[key]
    if kind == "static":
        return _static(value, problems)
    if kind == "gating":
        return tuple(_components(value, "energy.gating", problems))
    if kind == "enum":
        if value not in DRAM_COUNTS:
            raise ValueError(f"must be one of {', '.join(DRAM_COUNTS)}, got {value!r}")
        return value
    if kind == "text":
        if not isinstance(value, str):
            raise ValueError(f"must be text (the paper or tool and its technology node), "
                             f"got {value!r}")
        return value
    if kind == "time":
        return parse_time(value, key)
    return parse_energy(value, key, per_byte=kind == "per_byte")


def energy_from_dict(raw: Any, problems: list[str]) -> dict[str, Any] | None:
    """Validate an ``energy:`` mapping into converted fields (``complete_energy`` fills the
    rest); append one message per bad field to ``problems``.

    Examples
    --------
    >>> problems: list[str] = []
    >>> energy_from_dict({"mac_pj": "5 mW"}, problems) is None, len(problems)
    (True, 1)
    """
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append(f"field 'energy': expected a mapping of energy fields (mac_pj, "
                        f"dram_pj_per_byte, static_mw, ...), got {raw!r}")
        return None
    before = len(problems)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _KIND:
            problems.append(f"unknown field 'energy.{key}' (allowed: {', '.join(_KIND)})")
            continue
        try:
            values[key] = _convert(key, value, problems)
        except ValueError as exc:
            problems.append(f"field 'energy.{key}': {exc}")
    if len(problems) > before:
        return None
    return values


def complete_energy(given: dict[str, Any], precision_bits: int, macs_per_cycle: int) -> EnergySpec:
    """The spec with ``given`` fields over the default table; the rest are listed in
    ``defaulted`` (the energy code prints them in its note).

    Examples
    --------
    >>> spec = complete_energy({"mac_pj": 0.2}, 16, 16384)
    >>> spec.mac_pj, spec.dram_pj_per_byte, "mac_pj" in spec.defaulted
    (0.2, 31.2, False)
    """
    base = default_energy(precision_bits, macs_per_cycle)
    missing = tuple(f.name for f in fields(EnergySpec)
                    if f.name not in given and f.name not in ("defaulted", "source", "gating",
                                                                  "wake_up_s", "dram_counts"))
    return replace(base, **{"source": base.source if missing else "", **given,
                            "defaulted": missing})


def fold_dotted(raw: dict[str, Any]) -> dict[str, Any]:
    """Move ``energy.<field>`` (and ``energy.static_mw.<component>``) keys into ``energy``.

    Sweeps override one field at a time (``npu.energy.dram_pj_per_byte``).

    Examples
    --------
    >>> fold_dotted({"energy": {"mac_pj": 1}, "energy.dram_pj_per_byte": 30})
    {'energy': {'mac_pj': 1, 'dram_pj_per_byte': 30}}
    """
    dotted = [k for k in raw if isinstance(k, str) and k.startswith("energy.")]
    if not dotted:
        return raw
    out = {k: v for k, v in raw.items() if k not in dotted}
    energy = dict(out.get("energy") or {})
    for key in dotted:
        parts = key.split(".")[1:]
        if len(parts) == 2 and parts[0] == "static_mw":
            energy["static_mw"] = {**dict(energy.get("static_mw") or {}), parts[1]: raw[key]}
        else:
            energy[".".join(parts)] = raw[key]
    out["energy"] = energy
    return out


#: Where ``default_energy`` takes its numbers from (also the note a spec without ``energy:`` gets).
DEFAULT_SOURCE = ("default table: MAC and SRAM from Horowitz, ISSCC 2014 (45 nm: FP16 mult "
                  "1.1 + add 0.4 pJ; int8 mult 0.2 + int32 add 0.1 pJ; 1 MB SRAM 100 pJ per "
                  "64-bit read), an idle PE-cycle priced as a MAC (ungated PEs, as SCALE-Sim v3's "
                  "Accelergy action counts charge every PE a random-data MAC every cycle), DRAM from O'Connor et al., MICRO 2017 (HBM2 3.9 pJ/bit), "
                  "static power scaled by MAC count from TPUv1's 28 W idle die (Jouppi et al., "
                  "ISCA 2017, 28 nm, 65,536 MACs), split 40/40/5/15 % array/sram/vector/other")
#: Static mW per MAC unit (TPUv1: 28 W idle over 65,536 MACs) and its split over components.
_MW_PER_MAC = 28e3 / 65536
_SPLIT = (("array", 0.40), ("vector", 0.05), ("sram", 0.40), ("other", 0.15))


def default_energy(precision_bits: int, macs_per_cycle: int) -> EnergySpec:
    """The default table for an NPU of ``precision_bits`` with ``macs_per_cycle`` MAC units.

    Examples
    --------
    >>> spec = default_energy(16, 16384)
    >>> spec.mac_pj, spec.pe_idle_pj, spec.dram_pj_per_byte, round(spec.static_power_w, 2)
    (1.5, 1.5, 31.2, 7.0)
    """
    narrow = precision_bits <= 8
    sram = 100.0 / 8
    static = tuple((c, round(_MW_PER_MAC * macs_per_cycle * share, 3)) for c, share in _SPLIT)
    mac = 0.3 if narrow else 1.5
    return EnergySpec(
        mac_pj=mac, pe_idle_pj=mac, vector_op_pj=0.03 if narrow else 0.4,
        ifmap_sram_read_pj_per_byte=sram, ifmap_sram_write_pj_per_byte=sram,
        filter_sram_read_pj_per_byte=sram, filter_sram_write_pj_per_byte=sram,
        ofmap_sram_read_pj_per_byte=sram, ofmap_sram_write_pj_per_byte=sram,
        dram_pj_per_byte=3.9 * 8, static_mw=static, source=DEFAULT_SOURCE)
