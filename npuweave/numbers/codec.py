"""Bit patterns of a format: ``decode`` reads codes with Eq. II.1, ``encode`` writes them.

``decode`` is a direct transcription of the canonical interpretation and shares no code with
:mod:`npuweave.numbers.quantize`, so the tests use it as an independent reference: every code
decodes to a grid point that quantization must leave unchanged.
"""

from __future__ import annotations

import numpy as np

from npuweave.errors import NpuweaveError
from npuweave.numbers.format import Family, NumberFormat, Specials


def decode(codes: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    """Values (float64) of the ``fmt.bits``-bit codes ``S | E | F`` (sign bit highest).

    Examples
    --------
    >>> from npuweave.numbers import FLOAT
    >>> decode(np.array([0x3C00, 0x0001, 0x7C00]), FLOAT(16, specials="ieee")).tolist()
    [1.0, 5.960464477539063e-08, inf]
    """
    c = np.asarray(codes, dtype=np.int64)
    ne, nf, n = fmt.exponent, fmt.fraction, fmt.bits
    if np.any((c < 0) | (c >= 2**n)):
        raise NpuweaveError(f"codes must lie in [0, 2^{n}) for {fmt.describe()}")
    mag_bits = c & ((1 << (ne + nf)) - 1)
    s = (c >> (ne + nf)) & 1 if fmt.sign else np.zeros_like(c)
    e = mag_bits >> nf
    f = (mag_bits & ((1 << nf) - 1)).astype(np.float64)
    if fmt.family is Family.BINARY:
        return np.where(s == 1, -1.0, 1.0) * 2.0**-fmt.bias
    if fmt.family is Family.FIXED and fmt.twos_complement:
        signed = np.where(c >= 2 ** (n - 1), c - 2**n, c)
        return signed * fmt.quantum_min
    normal = (1.0 + f * 2.0**-nf) * np.exp2((e - fmt.bias).astype(np.float64))
    subnormal = f * 2.0**-nf * 2.0 ** (1 - fmt.bias)
    v = np.where(e != 0, normal, subnormal)
    top = (1 << ne) - 1
    if fmt.specials is Specials.IEEE:
        v = np.where(e == top, np.where(f == 0, np.inf, np.nan), v)
    elif fmt.specials is Specials.FN:
        v = np.where((e == top) & (f == 2**nf - 1), np.nan, v)
    return np.where(s == 1, -v, v)


def encode(values: np.ndarray, fmt: NumberFormat) -> np.ndarray:
    """Codes of values that lie on ``fmt``'s grid (quantize first); NaN gets the positive NaN.

    Examples
    --------
    >>> from npuweave.numbers import FIXED
    >>> encode(np.array([0.25, -0.25]), FIXED(4, 1)).tolist()
    [2, 10]
    """
    v = np.asarray(values, dtype=np.float64)
    ne, nf, n = fmt.exponent, fmt.fraction, fmt.bits
    neg = np.signbit(v) & (fmt.sign == 1)
    m = np.abs(v)
    if fmt.family is Family.BINARY:
        return neg.astype(np.int64)
    if fmt.family is Family.FIXED:
        k = np.rint(v / fmt.quantum_min).astype(np.int64)
        if fmt.twos_complement:
            codes = np.where(k < 0, k + 2**n, k)
        else:
            codes = np.abs(k) | (neg.astype(np.int64) << nf)
        _check(decode(codes, fmt), v, fmt)
        return codes
    fin = np.isfinite(m) & (m > 0)
    mant, ex = np.frexp(np.where(fin, m, 1.0))  # m = mant * 2^ex, mant in [0.5, 1)
    e_unb = ex - 1
    is_norm = fin & (e_unb >= fmt.emin)
    e_field = np.where(is_norm, e_unb + fmt.bias, 0)
    f_norm = (mant * 2.0 - 1.0) * 2.0**nf
    f_sub = np.where(fin, m, 0.0) / fmt.quantum_min
    f_field = np.rint(np.where(is_norm, f_norm, f_sub)).astype(np.int64)
    top = (1 << ne) - 1
    e_field = np.where(np.isinf(m), top, e_field)
    f_field = np.where(np.isinf(m), 0, f_field)
    nan_f = (1 << nf) - 1 if fmt.specials is Specials.FN else max(1 << (nf - 1), 1) if nf else 0
    e_field = np.where(np.isnan(m), top, e_field)
    f_field = np.where(np.isnan(m), nan_f, f_field)
    codes = (neg.astype(np.int64) << (ne + nf)) | (e_field << nf) | f_field
    codes = np.where(np.isnan(m), codes & ((1 << (ne + nf)) - 1), codes)
    _check(decode(codes, fmt), v, fmt)
    return codes


def _check(got: np.ndarray, want: np.ndarray, fmt: NumberFormat) -> None:
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if not np.all(same):
        bad = want[~same][:3].tolist()
        raise NpuweaveError(
            f"values {bad} are not on the grid of {fmt.describe()}; quantize them first"
        )
