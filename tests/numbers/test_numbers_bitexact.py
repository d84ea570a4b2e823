"""Bit-exact agreement with independent float casts (NumPy float16, ml_dtypes float8).

Each format is checked on over a million float32 bit patterns: uniformly random words (every
exponent, NaN payloads, infinities, float32 subnormals) plus the targeted edge cases, namely
every grid point of the target, every midpoint (ties), the float32 neighbours of every
midpoint, the overflow boundary, +-0, +-inf and NaN.
"""

import warnings

import numpy as np
import pytest

from npuweave.numbers import FLOAT, decode, encode, quantize

ml_dtypes = pytest.importorskip("ml_dtypes")

CASES = {
    "float16": (FLOAT(16, specials="ieee", saturate=False), np.float16),
    "e4m3fn": (FLOAT(8, exponent=4, specials="fn", saturate=False), ml_dtypes.float8_e4m3fn),
    "e5m2": (FLOAT(8, exponent=5, specials="ieee", saturate=False), ml_dtypes.float8_e5m2),
}


def _patterns(fmt, n_random=1_000_000, seed=0):
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**32, size=n_random, dtype=np.uint64).astype(np.uint32)
    grid = decode(np.arange(2**fmt.bits), fmt).astype(np.float32)
    finite = np.unique(np.abs(grid[np.isfinite(grid)]))
    mids = ((finite[1:].astype(np.float64) + finite[:-1]) / 2).astype(np.float32)
    top = np.float32(fmt.max_value + 2.0 ** (fmt.emax - fmt.fraction) / 2)  # overflow tie
    pos = np.concatenate([finite, mids, np.nextafter(mids, np.float32(0)),
                          np.nextafter(mids, np.float32(np.inf)),
                          [top, np.nextafter(top, np.float32(0)), np.inf, np.nan,
                           fmt.max_value * 4.0, 1e38]]).astype(np.float32)
    special = np.concatenate([pos, -pos, [np.float32(-0.0)]]).astype(np.float32)
    return np.concatenate([words.view(np.float32), special])


def _same(a, b):
    both_nan = np.isnan(a) & np.isnan(b)
    return both_nan | (a.view(np.uint32) == b.view(np.uint32))


@pytest.mark.parametrize("name", sorted(CASES))
def test_quantize_equals_reference_cast(name):
    fmt, ref_t = CASES[name]
    x = _patterns(fmt)
    assert x.size > 1_000_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float16 overflow warning
        ref = x.astype(ref_t).astype(np.float32)
    got = quantize(x, fmt)
    bad = ~_same(got, ref)
    assert not bad.any(), (x[bad][:5], got[bad][:5], ref[bad][:5])


@pytest.mark.parametrize("name", sorted(CASES))
def test_codes_equal_reference_bits(name):
    fmt, ref_t = CASES[name]
    x = _patterns(fmt, n_random=200_000, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref_codes = x.astype(ref_t).view(np.uint16 if fmt.bits == 16 else np.uint8)
    q = quantize(x, fmt)
    keep = ~np.isnan(q)
    assert np.array_equal(encode(q[keep], fmt), ref_codes[keep].astype(np.int64))


@pytest.mark.parametrize("name", sorted(CASES))
def test_decode_matches_reference_for_every_code(name):
    fmt, ref_t = CASES[name]
    codes = np.arange(2**fmt.bits)
    ref = codes.astype(np.uint16 if fmt.bits == 16 else np.uint8).view(ref_t).astype(np.float64)
    ours = decode(codes, fmt)
    assert np.array_equal(np.isnan(ours), np.isnan(ref))
    keep = ~np.isnan(ref)
    assert np.array_equal(ours[keep], ref[keep])
    assert np.array_equal(np.signbit(ours[keep]), np.signbit(ref[keep]))


def test_float64_input_matches_float16_cast():
    fmt = CASES["float16"][0]
    x = np.random.default_rng(3).standard_normal(100_000) * 1e3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = x.astype(np.float16).astype(np.float64)
    got = quantize(x, fmt)
    assert got.dtype == np.float64
    # float64 -> float16 rounds once from float64, as we do
    assert np.array_equal(got, ref)
