"""Formats: the canonical tuples of Table II.1 and Fig. III.2, ranges by hand, bad input."""

import math

import pytest

from npuweave.errors import ConfigError
from npuweave.numbers import BINARY, EXP, FIXED, FLOAT, Family, NumberFormat, Specials


@pytest.mark.parametrize(
    ("fmt", "canonical"),
    [
        (FLOAT(32), (1, 8, 23, 127)),
        (FLOAT(16), (1, 5, 10, 15)),
        (FIXED(16), (1, 0, 15, 0)),
        (FIXED(15, -3), (1, 0, 14, -3)),  # fc1.weight FIXED 15 -3 (Fig. III.2)
        (EXP(8), (1, 7, 0, 63)),  # conv1.weight EXP 8
        (EXP(6), (1, 5, 0, 15)),  # conv1.input EXP 6
        (EXP(4, 3), (1, 3, 0, 3)),  # LogQuant4
        (BINARY(), (1, 0, 0, 0)),
    ],
)
def test_canonical_tuples_from_the_thesis(fmt, canonical):
    assert fmt.canonical == canonical
    assert fmt.bits == sum(canonical[:3])


def test_float_ranges_by_hand():
    h = FLOAT(16)  # thesis reading: no specials, the top exponent holds numbers
    assert h.max_value == (2 - 2**-10) * 2.0**16
    ieee = FLOAT(16, specials="ieee")
    assert ieee.max_value == 65504.0
    assert ieee.min_positive == 2.0**-24
    fn = FLOAT(8, exponent=4, specials="fn")
    assert fn.max_value == 448.0 and fn.min_positive == 2.0**-9


def test_fixed_radix_point_by_bias():
    f = FIXED(8, 2)  # step 2^(2-2-8) = 2^-8, magnitude < 2^(1-2) = 0.5
    assert f.quantum_min == 2.0**-8
    assert f.max_value == 127 * 2.0**-8
    assert f.min_value == -f.max_value
    t = FIXED(8, 2, twos_complement=True)
    assert t.min_value == -128 * 2.0**-8 and t.max_value == f.max_value


def test_exp_values_are_zero_and_powers_of_two():
    e = EXP(4, 3)  # E in 1..7 -> 2^(E-3): 2^-2 .. 2^4
    assert e.min_positive == 0.25 and e.max_value == 16.0
    assert math.isclose(e.dynamic_range, 6.0)


def test_default_float_splits():
    assert FLOAT(8).canonical == (1, 4, 3, 7)  # e4m3
    assert FLOAT(6).canonical == (1, 3, 2, 3)  # e3m2
    assert FLOAT(4).canonical == (1, 2, 1, 1)  # e2m1


def test_frozen_and_hashable():
    f = FIXED(8, 2)
    with pytest.raises(AttributeError):
        f.bias = 3  # type: ignore[misc]
    assert {f: 1}[FIXED(8, 2)] == 1
    assert f.short == "I8(2)"


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: NumberFormat(Family.FLOAT, 0, 0, 0, 0), "no bits"),
        (lambda: NumberFormat(Family.FLOAT, 1, -2, 5, 0), ">= 0"),
        (lambda: FIXED(1), "FIXED"),
        (lambda: FIXED(8, 5000), "float64"),
        (lambda: EXP(3, 10**6), "float64"),
        (lambda: FLOAT(0), "bit width"),
        (lambda: NumberFormat(Family.FIXED, 1, 0, -3, 0), ">= 0"),  # negative fraction width
        (lambda: NumberFormat(Family.FIXED, 2, 0, 3, 0), "sign=2"),
        (lambda: NumberFormat(Family.FIXED, 1, 0, 7, 0, Specials.IEEE), "inf/NaN"),
        (lambda: NumberFormat(Family.FLOAT, 1, 5, 2, 15, saturate=False), "saturate"),
        (lambda: NumberFormat(Family.FLOAT, 1, 1, 0, 0, Specials.IEEE), "empty"),
        (lambda: NumberFormat(Family.FLOAT, 1, 5.0, 2, 15), "integer"),
    ],
)
def test_bad_formats_raise_config_error(make, words):
    with pytest.raises((ConfigError, TypeError)) as info:
        make()
    assert words in str(info.value)
