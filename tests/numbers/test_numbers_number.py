"""The Number ADT (Table III.1): registry, set_name, assignment, mixed-format arithmetic."""

import numpy as np
import pytest

from npuweave.numbers import (
    EXP,
    FIXED,
    FLOAT,
    FLOAT32,
    Number,
    clear_registry,
    parse_config,
    registered_format,
    result_format,
    set_name,
)


@pytest.fixture(autouse=True)
def _clean_registry():
    clear_registry()
    yield
    clear_registry()


def test_parse_config_fills_registry_and_set_name_binds():
    parse_config("fc1.weight FIXED 15 -3\nfc1.input FLOAT 32\nconv1.weight EXP 8")
    assert registered_format("fc1.weight").canonical == (1, 0, 14, -3)
    assert registered_format("missing") == FLOAT32  # lookup failure -> FLOAT(32)
    w = Number([0.3, 9.0, -100.0]).set_name("conv1.weight")
    assert w.fmt == EXP(8)
    assert w.as_float().tolist() == [0.25, 8.0, -128.0]  # log-domain nearest powers of two


def test_pure_parse_leaves_registry_alone():
    parse_config("a.weight FIXED 8", register=False)
    assert registered_format("a.weight") == FLOAT32


def test_set_name_on_arrays_of_numbers():
    parse_config("x.input FIXED 4 1")
    items = [Number(0.3), Number(0.6)]
    set_name(items, "x.input")
    assert [float(n) for n in items] == [0.25, 0.625]
    arr = Number(np.array([0.3, 0.6]))
    set_name(arr, "x.input")
    assert arr.as_float().tolist() == [0.25, 0.625]


def test_assignment_copies_value_and_format():
    a = Number(0.3, FIXED(4, 1))
    b = Number(0.0, EXP(4))
    b.assign(a)
    assert b.fmt == FIXED(4, 1) and float(b) == 0.25
    b.assign(0.3)  # native RHS takes FLOAT(32)
    assert b.fmt == FLOAT32 and float(b) == np.float32(0.3)


def test_same_format_ops_round_the_exact_result():
    f = FIXED(4, 1)
    a, b = Number(0.375, f), Number(0.5, f)
    assert float(a + b) == 0.875
    assert float(a * b) == 0.25  # 0.1875 = 1.5 steps of 1/8: the tie goes to the even 2/8
    assert (a * b).fmt == f


def test_mixed_format_rule():
    fx, ex, fl = FIXED(8, 2), EXP(5), FLOAT(16)
    assert result_format(fx, ex) == ex  # EXP has the wider dynamic range
    assert result_format(ex, fl) == fl  # FLOAT is favoured over EXP
    assert result_format(fl, ex) == fl
    r = Number(0.25, fx) * Number(4.0, ex)
    assert r.fmt == ex and float(r) == 1.0
    assert (Number(0.25, fx) * 2.0).fmt == FLOAT32  # native operands count as FLOAT(32)


def test_as_int_truncates_like_c():
    assert Number([2.75, -2.75], FIXED(8, -2)).as_int().tolist() == [2, -2]
