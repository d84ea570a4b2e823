"""Quantization: hand-computed values, rounding modes, overflow, properties, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError, NpuweaveError
from npuweave.numbers import (
    BINARY,
    EXP,
    FIXED,
    FLOAT,
    FLOAT32,
    QuantizeError,
    decode,
    encode,
    quantization_error,
    quantize,
)


def q(values, fmt, **kw):
    return quantize(np.array(values, np.float32), fmt, **kw).tolist()


def test_fixed_by_hand():
    f = FIXED(4, 1)  # step 2^(2-1-4) = 1/8, max 7/8
    assert q([0.3, 0.0625, 0.1875, -0.126, 0.9, -5.0], f) == [0.25, 0.0, 0.25, -0.125, 0.875,
                                                              -0.875]


def test_fixed_twos_complement_range():
    f = FIXED(4, 1, twos_complement=True)  # -8/8 .. 7/8
    assert q([-5.0, 5.0, -0.0], f) == [-1.0, 0.875, 0.0]
    assert not np.signbit(quantize(np.float32(-0.01), f))  # no -0 code


def test_ties_even_vs_away():
    f = FIXED(4, 1)
    ties = [0.0625, 0.1875, -0.0625, -0.1875]  # halfway between multiples of 1/8
    assert q(ties, f) == [0.0, 0.25, -0.0, -0.25]
    assert q(ties, f, rounding="nearest-away") == [0.125, 0.25, -0.125, -0.25]
    g = FLOAT(8)  # e4m3: between 1 and 1.125 the tie is 1.0625
    assert q([1.0625, 1.1875], g) == [1.0, 1.25]
    assert q([1.0625, 1.1875], g, rounding="nearest-away") == [1.125, 1.25]


def test_exp_log_vs_linear_domain():
    e = EXP(4, 3)  # powers 2^-2 .. 2^4 and 0
    # 1.45 is above sqrt(2) (log domain -> 2) but below 1.5 (linear -> 1)
    assert q([1.45, 1.40], e) == [2.0, 1.0]
    assert q([1.45, 1.55], e, exp_domain="linear") == [1.0, 2.0]
    # below the smallest power 0.25 both domains use the linear midpoint; the tie goes to 0
    assert q([0.125, 0.13, 0.1], e) == [0.0, 0.25, 0.0]
    assert q([100.0, -100.0], e) == [16.0, -16.0]


def test_binary_is_sign():
    assert q([0.3, -2.0, 0.0], BINARY(1)) == [0.5, -0.5, 0.5]


def test_overflow_modes():
    sat = FLOAT(16, specials="ieee")
    assert q([1e6, -np.inf, np.nan][:2], sat) == [65504.0, -65504.0]
    assert np.isnan(quantize(np.float32(np.nan), sat))
    ovf = FLOAT(16, specials="ieee", saturate=False)
    assert q([65519.0, 65520.0, -1e6], ovf) == [65504.0, np.inf, -np.inf]
    fn = FLOAT(8, exponent=4, specials="fn", saturate=False)
    out = quantize(np.array([464.0, 465.0, np.inf], np.float32), fn)
    assert out[0] == 448.0 and np.isnan(out[1:]).all()
    plain = FLOAT(16)  # thesis reading: no specials, saturating, the top binade is finite
    assert q([1e9, 65536.0], plain) == [131008.0, 65536.0]


def test_subnormals_of_the_target():
    h = FLOAT(16)
    tiny = 2.0**-24
    assert q([tiny, tiny * 0.5, tiny * 0.75, tiny * 1.5], h) == [tiny, 0.0, tiny, 2 * tiny]


def test_nan_into_format_without_nan_code_names_the_index():
    with pytest.raises(QuantizeError, match=r"flat index \[2\]"):
        quantize(np.array([0.0, 1.0, np.nan], np.float32), FIXED(8))
    with pytest.raises(NpuweaveError):
        quantize(np.array([np.nan]), BINARY())


def test_inf_input_saturates():
    assert q([np.inf, -np.inf], FIXED(8, 2)) == [127 / 256, -127 / 256]


def test_dtypes_and_shapes():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    assert quantize(x, FIXED(8, 0)).shape == (3, 4)
    assert quantize(x, FIXED(8)).dtype == np.float32
    assert quantize(x.astype(np.float64), FIXED(8)).dtype == np.float64
    assert quantize(np.arange(4), FIXED(8, -2)).dtype == np.float64
    assert quantize(1.3, FIXED(8, 0)).shape == ()
    assert np.array_equal(quantize(x, FLOAT32), x)  # FLOAT(32) is the identity on float32


def test_wide_formats_go_through_float64():
    f = FLOAT(16, 200, exponent=9)  # grid below float32's range
    x = np.array([2.0**-150, 3 * 2.0**-160], np.float64)
    assert quantize(x, f).tolist() == [2.0**-150, 3 * 2.0**-160]
    wide = FIXED(32, 0)
    assert quantize(np.float64(0.1), wide) == round(0.1 * 2**30) / 2**30


def test_stochastic_rounding_is_seeded_and_unbiased():
    f = FIXED(4, 1)
    x = np.full(200_000, 0.3, np.float32)  # between 0.25 and 0.375, p(up) = 0.4
    a = quantize(x, f, "stochastic", seed=7)
    b = quantize(x, f, "stochastic", seed=7)
    assert np.array_equal(a, b)
    assert set(np.unique(a).tolist()) == {0.25, 0.375}
    assert abs(a.mean() - 0.3) < 0.002
    g = FLOAT(8)
    y = np.full(100_000, 1.3, np.float32)  # grid 1.25, 1.375
    assert abs(quantize(y, g, "stochastic", rng=np.random.default_rng(1)).mean() - 1.3) < 0.002


def test_error_statistics_by_hand():
    x = np.array([0.5, 1.0, 0.1])
    f = FIXED(3, 1)  # step 0.25, max 0.75
    s = quantization_error(x, quantize(x, f), f)
    assert s["max_abs_error"] == 0.25 and s["saturated"] == pytest.approx(1 / 3)
    assert s["flushed_to_zero"] == pytest.approx(1 / 3)  # 0.1 -> 0
    assert s["rmse"] == pytest.approx(np.sqrt((0.25**2 + 0.1**2) / 3))


def test_unquantizable_format_is_reported():
    weird = FLOAT(60, 500, exponent=7)  # 52 fraction bits, coarser than float64 near 2^-550
    with pytest.raises(ConfigError, match="cannot be quantized"):
        quantize(np.float64(1e-160), weird)


# -- properties ---------------------------------------------------------------------------
def _formats():
    floats = st.builds(
        lambda n, e, b: FLOAT(n, b, exponent=min(e, n - 2)),
        st.integers(4, 16), st.integers(2, 6), st.integers(-4, 20))
    fixed = st.builds(lambda n, b, t: FIXED(n, b, twos_complement=t),
                      st.integers(2, 20), st.integers(-8, 12), st.booleans())
    exps = st.builds(lambda n, b: EXP(n, b), st.integers(2, 7), st.integers(-2, 40))
    return st.one_of(floats, fixed, exps)


values = st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(_formats(), values)
def test_idempotent_monotone_and_on_grid(fmt, xs):
    x = np.array(sorted(xs), np.float32)
    y = quantize(x, fmt)
    assert np.array_equal(quantize(y, fmt), y)
    assert np.all(np.diff(y.astype(np.float64)) >= 0)
    assert np.array_equal(decode(encode(y, fmt), fmt), y.astype(np.float64))


@settings(max_examples=150, deadline=None)
@given(_formats(), values)
def test_nearest_grid_point(fmt, xs):
    """No grid point (checked against the full decoded grid) is closer than the result."""
    if fmt.bits > 12:
        fmt = FIXED(8, fmt.bias if fmt.family.value == "FIXED" else 0)
    x = np.array(xs, np.float64).astype(np.float32).astype(np.float64)
    grid = decode(np.arange(2**fmt.bits), fmt)
    grid = grid[np.isfinite(grid)]
    y = quantize(x, fmt, exp_domain="linear").astype(np.float64)
    best = np.min(np.abs(grid[None, :] - x[:, None]), axis=1)
    assert np.all(np.abs(y - x) <= best)
