"""Number formats: the canonical 4-tuple ``<n_s, n_e, n_f, B>`` and its four families.

A value with sign bit ``S``, exponent field ``E`` and fraction field ``F`` reads (Eq. II.1)::

    (-1)^S * (1 + F / 2^n_f) * 2^(E - B)      if E != 0   (normal)
    (-1)^S * (F / 2^n_f)     * 2^(1 - B)      if E == 0   (subnormal)

FLOAT(N) is ``<1, n_e, n_f, 2^(n_e-1) - 1>``; FIXED(N) is ``<1, 0, N-1, B>`` (only the
subnormal line applies, so ``B`` places the radix point and every value is a multiple of
``2^(1 - B - n_f)`` below ``2^(1 - B)``); EXP(N) is ``<1, N-1, 0, B>`` (powers of two and
zero); BINARY is ``<1, 0, 0, B>`` read with the implicit one, i.e. ``+-2^-B``.

Conventions the thesis leaves open (see docs/LIBNUMBER.md):

- FIXED is sign-magnitude by default (symmetric range, a ``-0`` code), as Eq. II.1 reads;
  ``twos_complement=True`` gives the asymmetric Ristretto/integer-hardware range.
- ``specials``: ``NONE`` (every code is a finite number, the thesis's reading),
  ``IEEE`` (the all-ones exponent holds inf and NaN) or ``FN`` (no infinities; only the
  all-ones code is NaN, as in ``float8_e4m3fn``).
- ``saturate=True`` (default) clamps every out-of-range value, infinities included, to the
  largest finite value; ``saturate=False`` sends overflow to inf (IEEE) or NaN (FN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum

from npuweave.errors import ConfigError


class Family(str, Enum):
    """The number types of Table II.1."""

    FLOAT = "FLOAT"
    FIXED = "FIXED"
    EXP = "EXP"
    BINARY = "BINARY"


class Specials(str, Enum):
    """Which codes, if any, are reserved for infinities and NaN."""

    NONE = "none"
    IEEE = "ieee"
    FN = "fn"


_SHORT = {Family.FLOAT: "F", Family.FIXED: "I", Family.EXP: "E", Family.BINARY: "B"}


@dataclass(frozen=True, slots=True)
class NumberFormat:
    """A concrete number format ``<sign, exponent, fraction, bias>`` of one family.

    Examples
    --------
    >>> FIXED(8, bias=2).max_value
    0.49609375
    >>> FLOAT(16).bits, FLOAT(16).bias
    (16, 15)
    """

    family: Family
    sign: int
    exponent: int
    fraction: int
    bias: int
    specials: Specials = Specials.NONE
    saturate: bool = True
    twos_complement: bool = False

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise ConfigError(f"invalid number format {self.describe()}: " + "; ".join(problems))

    # -- sizes ---------------------------------------------------------------------------
    @property
    def bits(self) -> int:
        """Total bit width ``n_s + n_e + n_f``."""
        return self.sign + self.exponent + self.fraction

    @property
    def canonical(self) -> tuple[int, int, int, int]:
        """The 4-tuple ``(n_s, n_e, n_f, B)``."""
        return (self.sign, self.exponent, self.fraction, self.bias)

    # -- range ---------------------------------------------------------------------------
    @property
    def emin(self) -> int:
        """Exponent of the smallest normal value, ``1 - B`` (the top of FIXED's range)."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite value's binade."""
        if self.family in (Family.FIXED, Family.BINARY):
            return self.emin - 1 if self.family is Family.FIXED else -self.bias
        top = 2**self.exponent - 1
        if self.specials is Specials.IEEE or (self.specials is Specials.FN and self.fraction == 0):
            top -= 1
        return top - self.bias

    @property
    def quantum_min(self) -> float:
        """Spacing of the finest part of the grid (subnormal step; FIXED's only step)."""
        if self.family is Family.BINARY:
            return 2.0**-self.bias
        return math.ldexp(1.0, self.emin - self.fraction)

    @property
    def max_value(self) -> float:
        """Largest finite value."""
        if self.family is Family.BINARY:
            return 2.0**-self.bias
        if self.family is Family.FIXED:
            return (2**self.fraction - 1) * self.quantum_min
        steps = 2 ** (self.fraction + 1) - 1
        if self.specials is Specials.FN and self.fraction > 0:
            steps -= 1  # the all-ones fraction of the top binade is the NaN code
        return math.ldexp(float(steps), self.emax - self.fraction)

    @property
    def min_value(self) -> float:
        """Most negative finite value (``-max_value`` unless two's complement or unsigned)."""
        if self.sign == 0:
            return 0.0
        if self.twos_complement:
            return -(2**self.fraction) * self.quantum_min
        return -self.max_value

    @property
    def min_positive(self) -> float:
        """Smallest positive value."""
        return self.quantum_min if self.family is not Family.EXP else 2.0**self.emin

    @property
    def dynamic_range(self) -> float:
        """``log2(max_value / min_positive)``: the width of the range in binades."""
        return math.log2(self.max_value / self.min_positive)

    @property
    def has_nan(self) -> bool:
        return self.specials is not Specials.NONE

    # -- names ---------------------------------------------------------------------------
    @property
    def short(self) -> str:
        """Compact label used in tuner logs: ``I3(0)``, ``E4(7)``, ``F16(15)``."""
        return f"{_SHORT[self.family]}{self.bits}({self.bias})"

    def describe(self) -> str:
        """Human-readable name, e.g. ``FIXED<1,0,7,2>``."""
        extra = []
        if self.specials is not Specials.NONE:
            extra.append(self.specials.value)
        if not self.saturate:
            extra.append("overflow")
        if self.twos_complement:
            extra.append("twos")
        tail = f"[{','.join(extra)}]" if extra else ""
        return (
            f"{self.family.value}<{self.sign},{self.exponent},{self.fraction},{self.bias}>{tail}"
        )

    def with_bias(self, bias: int) -> NumberFormat:
        return replace(self, bias=bias)


def _problems(f: NumberFormat) -> list[str]:
    p: list[str] = []
    if not isinstance(f.family, Family):
        return [f"family {f.family!r} is not one of {', '.join(x.value for x in Family)}"]
    for field in ("sign", "exponent", "fraction", "bias"):
        v = getattr(f, field)
        if isinstance(v, bool) or not isinstance(v, int):
            p.append(f"{field}={v!r} must be an integer")
    if p:
        return p
    if f.sign not in (0, 1):
        p.append(f"sign={f.sign} must be 0 or 1")
    if f.exponent < 0 or f.fraction < 0:
        p.append("exponent and fraction widths must be >= 0")
    if f.bits == 0:
        p.append("the format has no bits")
    if abs(f.bias) > 16384 or f.exponent > 15:
        p.append("bias or exponent width far outside any float64 range")
    if p:
        return p
    fam = f.family
    if fam is Family.FLOAT and f.exponent < 1:
        p.append("FLOAT needs at least one exponent bit (use FIXED)")
    if fam is Family.FIXED and (f.exponent != 0 or f.fraction < 1):
        p.append("FIXED is <s,0,n_f,B> with n_f >= 1 (FIXED(1) holds only zero; use BINARY)")
    if fam is Family.EXP and (f.fraction != 0 or f.exponent < 1):
        p.append("EXP is <s,n_e,0,B> with n_e >= 1")
    if fam is Family.BINARY and (f.exponent, f.fraction, f.sign) != (0, 0, 1):
        p.append("BINARY is <1,0,0,B>")
    if f.specials is not Specials.NONE and fam in (Family.FIXED, Family.BINARY):
        p.append(f"{fam.value} has no inf/NaN codes; use specials=none")
    if f.twos_complement and (fam is not Family.FIXED or f.sign != 1):
        p.append("twos_complement applies to signed FIXED only")
    if not f.saturate and f.specials is Specials.NONE:
        p.append("saturate=False needs inf or NaN codes to overflow into (specials=ieee or fn)")
    if p:
        return p
    if fam in (Family.FLOAT, Family.EXP) and f.emax + f.bias < 1:
        p.append("the range is empty: the inf/NaN codes leave no normal exponent; add exponent bits")
        return p
    lo = -f.bias if fam is Family.BINARY else f.emin - (0 if fam is Family.EXP else f.fraction)
    hi = f.emax + 1
    if hi > 1024 or lo < -1074:
        p.append(f"the range [2^{lo}, 2^{hi}) does not fit float64; bring the bias nearer 0")
    return p


# -- the families' constructors ------------------------------------------------------------
def default_exponent_bits(n: int) -> int:
    """Exponent width of FLOAT(n): IEEE for 16/32/64, OCP FP8/FP6/FP4 (e4m3, e3m2, e2m1)."""
    for width, ne in ((64, 11), (24, 8), (11, 5), (7, 4), (5, 3), (3, 2)):
        if n >= width:
            return ne
    return 1


def FLOAT(  # noqa: N802 - named after the thesis's types
    n: int,
    bias: int | None = None,
    *,
    exponent: int | None = None,
    specials: Specials | str = Specials.NONE,
    saturate: bool = True,
) -> NumberFormat:
    """N-bit floating point ``<1, n_e, N-1-n_e, 2^(n_e-1)-1>``.

    Examples
    --------
    >>> FLOAT(32).canonical
    (1, 8, 23, 127)
    """
    _check_width("FLOAT", n, 2)
    ne = default_exponent_bits(n) if exponent is None else exponent
    b = 2 ** (ne - 1) - 1 if bias is None else bias
    return NumberFormat(Family.FLOAT, 1, ne, n - 1 - ne, b, Specials(specials), saturate)


def FIXED(n: int, bias: int = 0, *, twos_complement: bool = False) -> NumberFormat:  # noqa: N802
    """N-bit dynamic fixed point ``<1, 0, N-1, B>``: step ``2^(2-B-N)``, magnitude ``< 2^(1-B)``.

    Examples
    --------
    >>> FIXED(15, -3).canonical
    (1, 0, 14, -3)
    """
    _check_width("FIXED", n, 2)
    return NumberFormat(Family.FIXED, 1, 0, n - 1, bias, twos_complement=twos_complement)


def EXP(  # noqa: N802
    n: int, bias: int | None = None, *, specials: Specials | str = Specials.NONE, saturate: bool = True
) -> NumberFormat:
    """N-bit exponent (logarithmic) type ``<1, N-1, 0, 2^(N-2)-1>``: zero and powers of two.

    Examples
    --------
    >>> EXP(8).canonical
    (1, 7, 0, 63)
    """
    _check_width("EXP", n, 2)
    b = 2 ** (n - 2) - 1 if bias is None else bias
    return NumberFormat(Family.EXP, 1, n - 1, 0, b, Specials(specials), saturate)


def BINARY(bias: int = 0) -> NumberFormat:  # noqa: N802
    """One sign bit: the values ``+2^-B`` and ``-2^-B``."""
    return NumberFormat(Family.BINARY, 1, 0, 0, bias)


def make_format(family: Family | str, bits: int, bias: int | None = None) -> NumberFormat:
    """Build ``family(bits, bias)``; ``bias=None`` takes the family's default."""
    fam = _family(family)
    if fam is Family.FLOAT:
        return FLOAT(bits, bias)
    if fam is Family.FIXED:
        return FIXED(bits, 0 if bias is None else bias)
    if fam is Family.EXP:
        return EXP(bits, bias)
    if bits != 1:
        raise ConfigError(f"BINARY has exactly 1 bit, got {bits}")
    return BINARY(0 if bias is None else bias)


def _family(name: Family | str) -> Family:
    try:
        return Family(str(name.value if isinstance(name, Family) else name).upper())
    except ValueError:
        raise ConfigError(
            f"unknown number type {name!r}; choose one of FLOAT, FIXED, EXP, BINARY"
        ) from None


def _check_width(kind: str, n: object, lo: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < lo or n > 64:
        raise ConfigError(f"{kind} bit width must be an integer in [{lo}, 64], got {n!r}")


FLOAT32 = FLOAT(32)
FLOAT16 = FLOAT(16)
