"""Vectorized quantization of NumPy arrays onto a :class:`NumberFormat`'s grid.

The work happens on the bits of a float32 (or float64) view, so no per-element Python runs:

- FLOAT and linear-domain EXP round with the "magic constant" trick: adding ``C = 2^(p + q)``
  (``p`` the working type's fraction width, ``2^q`` the target spacing at that element's
  binade, built per element from the exponent bits) makes the FPU round to a multiple of
  ``2^q`` with its own round-to-nearest-even; subtracting ``C`` back is exact.
- FIXED has one spacing for the whole range: scale, ``rint``, scale back.
- EXP in the log domain (the default) rounds the exponent up when the significand exceeds
  ``sqrt(2)``: an integer compare on the fraction bits.

Inputs are clamped to one grid step beyond the largest value first, so overflow is detected on
the rounded result (``> max_value``) for every rounding mode, then saturated or sent to inf/NaN.
A float32 input stays float32 when the format's grid fits float32's exponent range; otherwise the
work is done in float64 and cast back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np

from npuweave.errors import ConfigError, NpuweaveError
from npuweave.numbers.format import Family, NumberFormat, Specials


class Rounding(str, Enum):
    """How a value between two grid points is resolved."""

    NEAREST_EVEN = "nearest-even"
    NEAREST_AWAY = "nearest-away"
    STOCHASTIC = "stochastic"


class ExpDomain(str, Enum):
    """Where EXP rounds: between 2^k and 2^(k+1) the midpoint is sqrt(2)*2^k (log) or 1.5*2^k."""

    LOG = "log"
    LINEAR = "linear"


class QuantizeError(NpuweaveError):
    """Input the format cannot represent (NaN into a format without a NaN code)."""


@dataclass(frozen=True, slots=True)
class _Work:
    """A working float type's layout: fraction bits, exponent bias, largest normal field."""

    float_t: type
    uint_t: type
    p: int
    bias: int
    max_field: int


_F32 = _Work(np.float32, np.uint32, 23, 127, 254)
_F64 = _Work(np.float64, np.uint64, 52, 1023, 2046)


def quantize(
    x: np.ndarray | float,
    fmt: NumberFormat,
    rounding: Rounding | str = Rounding.NEAREST_EVEN,
    *,
    seed: int | None = None,
    rng: np.random.Generator | None = None,
    exp_domain: ExpDomain | str = ExpDomain.LOG,
) -> np.ndarray:
    """Round every element of ``x`` to the nearest value of ``fmt`` (returns a new array).

    Parameters
    ----------
    x : array_like
        float32 stays float32, float64 stays float64, anything else becomes float64.
    fmt : NumberFormat
    rounding : {"nearest-even", "nearest-away", "stochastic"}
        Stochastic rounding rounds up with probability equal to the distance from the lower
        grid point over the step (unbiased), drawing from ``rng`` or ``default_rng(seed)``.
    exp_domain : {"log", "linear"}
        Only for EXP: the log domain picks the power of two nearest in ``log2|x|``. Between zero
        and the smallest power both domains use the linear midpoint (a tie goes to zero).

    Examples
    --------
    >>> from npuweave.numbers import FIXED
    >>> quantize(np.array([0.3, -0.126, 9.0], np.float32), FIXED(4, 1)).tolist()
    [0.25, -0.125, 0.875]
    """
    rounding = Rounding(rounding)
    arr = np.asarray(x)
    in_t = arr.dtype if arr.dtype in (np.float32, np.float64) else None
    if in_t is None:
        in_t = np.dtype(np.float32) if arr.dtype == np.float16 else np.dtype(np.float64)
    work = _working_type(fmt, in_t)
    xs: np.ndarray = np.asarray(arr, dtype=work.float_t)
    if xs.ndim == 0:
        xs = xs.reshape(1)
    if not fmt.has_nan and xs.size and np.isnan(np.max(xs)):
        bad = np.flatnonzero(np.isnan(xs.ravel()))[:3].tolist()
        raise QuantizeError(
            f"input has NaN (flat index {bad}) but {fmt.describe()} has no NaN code; "
            "clean the data or use a format with specials=ieee or fn"
        )
    if rounding is Rounding.STOCHASTIC and rng is None:
        if seed is not None and not 0 <= seed < 2**63:
            raise ConfigError(f"seed {seed} must be an integer in [0, 2**63)")
        rng = np.random.default_rng(seed)
    # NaN and out-of-range lanes make harmless inf/NaN intermediates; they are resolved below.
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if fmt.family is Family.FIXED:
            r = _fixed(xs, fmt, work, rounding, rng)
        elif fmt.family is Family.BINARY:
            r = np.where(xs < 0, -(2.0**-fmt.bias), 2.0**-fmt.bias).astype(work.float_t)
        elif fmt.family is Family.EXP and ExpDomain(exp_domain) is ExpDomain.LOG:
            r = _exp_log(xs, fmt, work, rounding, rng)
        else:
            r = _floating(xs, fmt, work, rounding, rng)
    r = r.astype(in_t, copy=False)
    return r.reshape(arr.shape)


def _working_type(fmt: NumberFormat, in_t: np.dtype) -> _Work:
    for work in (_F32, _F64) if in_t == np.float32 else (_F64,):
        if _fits(fmt, work):
            return work
    raise ConfigError(
        f"{fmt.describe()} is finer than float64 in part of its range and coarser in another; "
        "it cannot be quantized exactly (use at most 51 fraction bits)"
    )


def _fits(f: NumberFormat, w: _Work) -> bool:
    lo_exp, hi_exp = 1 - w.bias, w.max_field - w.bias  # normal exponents of the working type
    if f.family is Family.BINARY:
        return lo_exp <= -f.bias <= hi_exp
    if f.family is Family.FIXED:
        q = f.emin - f.fraction  # log2 of the step
        return q >= lo_exp and -q <= hi_exp and q + f.fraction + 1 <= hi_exp and f.fraction <= w.p + 1
    top_ok = f.emax + 1 <= hi_exp
    if _is_identity(f, w):
        return top_ok
    if f.family is Family.EXP and f.fraction == 0:
        return top_ok and f.emin - 1 >= lo_exp and f.emax + 1 + w.p <= hi_exp
    return top_ok and f.fraction <= w.p - 1 and f.emin >= lo_exp and (
        f.emax + 1 + w.p - f.fraction <= hi_exp
    )


def _is_identity(f: NumberFormat, w: _Work) -> bool:
    """The grid contains every working-type value below the top (e.g. FLOAT32 on float32)."""
    return (
        f.family is Family.FLOAT
        and f.fraction >= w.p
        and f.emin - f.fraction <= 1 - w.bias - w.p
    )


def _cap(fmt: NumberFormat) -> float:
    """Clamp bound: the max for saturating formats, else the grid point just above it."""
    if fmt.saturate:
        return fmt.max_value
    if fmt.family is Family.EXP:
        return 2.0 ** (fmt.emax + 1)
    return fmt.max_value + 2.0 ** (fmt.emax - fmt.fraction)


def _overflow(r: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    if fmt.saturate:
        return r
    special = np.inf if fmt.specials is Specials.IEEE else np.nan
    return np.where(r > fmt.max_value, r.dtype.type(special), r)


def _magnitude(xs: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    a = np.maximum(xs, 0) if fmt.sign == 0 else np.abs(xs)
    np.minimum(a, a.dtype.type(_cap(fmt)), out=a)
    return a


def _signed(r: np.ndarray, xs: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    if fmt.sign:
        np.copysign(r, xs, out=r)
    return r


def _floating(xs, fmt, w, rounding, rng):
    a = _magnitude(xs, fmt)
    if _is_identity(fmt, w):
        return _signed(_overflow(a, fmt), xs, fmt)
    k = w.p - fmt.fraction
    expmask = w.uint_t(w.max_field + 1 << w.p)
    floor_bits = w.uint_t(fmt.emin + w.bias << w.p)
    c = a.view(w.uint_t) & expmask
    np.maximum(c, floor_bits, out=c)
    c += w.uint_t(k << w.p)
    big = c.view(w.float_t)  # 2^(p + log2(step)) per element
    if rounding is Rounding.NEAREST_EVEN:
        a += big
        a -= big
        r = a
    else:
        step = big * w.float_t(2.0**-w.p)
        r = _round_integer(a / step, rounding, rng) * step
    return _signed(_overflow(r, fmt), xs, fmt)


_SQRT2_FRACTION = {p: math.isqrt(2 ** (2 * p + 1)) - 2**p + 1 for p in (23, 52)}


def _exp_log(xs, fmt, w, rounding, rng):
    if rounding is not Rounding.NEAREST_EVEN:
        # ties cannot occur in the log domain (sqrt(2) is irrational), so nearest-away is
        # nearest-even; stochastic rounding is done linearly to keep it unbiased.
        if rounding is Rounding.STOCHASTIC:
            return _floating(xs, fmt, w, rounding, rng)
    a = _magnitude(xs, fmt)
    bits = a.view(w.uint_t)
    frac_mask = w.uint_t((1 << w.p) - 1)
    up = (bits & frac_mask) >= w.uint_t(_SQRT2_FRACTION[w.p])
    rb = bits & ~frac_mask
    rb += up.astype(w.uint_t) << w.uint_t(w.p)
    r = rb.view(w.float_t)
    smallest = w.float_t(2.0**fmt.emin)
    low = np.where(a > smallest / 2, smallest, w.float_t(0.0))
    r = np.where(a < smallest, low, r)
    if fmt.has_nan:
        r[np.isnan(a)] = np.nan
    return _signed(_overflow(r, fmt), xs, fmt)


def _fixed(xs, fmt, w, rounding, rng):
    step = 2.0 ** (fmt.emin - fmt.fraction)
    top = 2.0**fmt.fraction
    lo = 0.0 if fmt.sign == 0 else (-top if fmt.twos_complement else 1.0 - top)
    t = xs * w.float_t(1.0 / step)
    np.clip(t, w.float_t(lo), w.float_t(top - 1.0), out=t)
    r = _round_integer(t, rounding, rng)
    r *= w.float_t(step)
    if fmt.twos_complement:
        r += w.float_t(0.0)  # no -0 code in two's complement
    return r


def _round_integer(t: np.ndarray, rounding: Rounding, rng: np.random.Generator | None):
    """Round ``t`` (in units of the local step) to an integer, in place where possible."""
    if rounding is Rounding.NEAREST_EVEN:
        return np.rint(t, out=t)
    if rounding is Rounding.NEAREST_AWAY:
        whole = np.trunc(t)
        frac = np.abs(t - whole)
        return whole + np.copysign((frac >= 0.5).astype(t.dtype), t)
    assert rng is not None
    low = np.floor(t)
    u = rng.random(t.shape, dtype=t.dtype)
    return low + (u < t - low).astype(t.dtype)


def quantization_error(x: np.ndarray, q: np.ndarray, fmt: NumberFormat) -> dict[str, float]:
    """Error statistics of ``q = quantize(x, fmt)``: max/mean abs error, RMSE, SQNR, clipping.

    Examples
    --------
    >>> from npuweave.numbers import FIXED
    >>> x = np.array([0.5, 1.0]); s = quantization_error(x, quantize(x, FIXED(3, 1)), FIXED(3, 1))
    >>> s["max_abs_error"], s["saturated"]
    (0.25, 0.5)
    """
    xd = np.asarray(x, np.float64).ravel()
    qd = np.asarray(q, np.float64).ravel()
    finite = np.isfinite(xd) & np.isfinite(qd)
    err = (qd - xd)[finite]
    n = max(int(finite.sum()), 1)
    signal = float(np.sum(xd[finite] ** 2))
    noise = float(np.sum(err**2))
    sqnr = math.inf if noise == 0 else (10 * math.log10(signal / noise) if signal else -math.inf)
    return {
        "count": float(xd.size),
        "max_abs_error": float(np.max(np.abs(err))) if err.size else 0.0,
        "mean_abs_error": float(np.sum(np.abs(err)) / n),
        "rmse": math.sqrt(noise / n),
        "sqnr_db": sqnr,
        "saturated": float(np.mean(np.abs(xd) > fmt.max_value)) if xd.size else 0.0,
        "flushed_to_zero": float(np.mean((qd == 0) & (xd != 0))) if xd.size else 0.0,
    }
