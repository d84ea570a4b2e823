"""Parsers of the serving CLI options: values, units, and one-line errors naming the flag."""

from __future__ import annotations

import math

import pytest

from npuweave.errors import ConfigError
from npuweave.fileio.flags import (
    ArrivalSpec,
    Batching,
    parse_arrivals,
    parse_batching,
    parse_deadlines,
    parse_duration,
    parse_priorities,
    parse_qps,
    parse_seconds,
)


@pytest.mark.parametrize("text,seconds", [
    ("0", 0.0), ("2s", 2.0), ("15ms", 0.015), ("250us", 0.00025), ("40ns", 4e-8),
    ("1.5e-3s", 0.0015), (" 3 ms ", 0.003), ("infs", math.inf), (".5s", 0.5),
])
def test_parse_seconds(text, seconds):
    assert parse_seconds(text, "--x") == pytest.approx(seconds)


# a bare number has no unit (issue 25: '--duration 200' ran 200 s), nor do digits that
# are not ASCII
@pytest.mark.parametrize("text", ["", "ms", "3 hours", "1,5ms", "2 m", "nan", "abc", "2",
                                  "1.5e-3", "\u00b2s", "9" * 5000 + "s"])
def test_parse_seconds_rejects(text):
    with pytest.raises(ConfigError, match="--x"):
        parse_seconds(text, "--x")


def test_lists_per_model():
    assert parse_qps("300,80", 2) == (300.0, 80.0)
    assert parse_deadlines("15ms,130ms", 2) == (0.015, 0.13)
    assert parse_deadlines("none", 1) == (math.inf,)
    assert parse_priorities("1, 9", 2) == (1, 9)


@pytest.mark.parametrize("call,flag", [
    (lambda: parse_qps("300", 2), "--qps: 1 values"),
    (lambda: parse_qps("300,80,5", 2), "--qps: 3 values"),
    (lambda: parse_qps("300,0", 2), "--qps: '0'"),
    (lambda: parse_qps("-3", 1), "--qps: '-3'"),
    (lambda: parse_qps("inf", 1), "--qps: 'inf'"),
    (lambda: parse_qps("fast", 1), "--qps: 'fast'"),
    (lambda: parse_qps("300,", 2), "--qps: empty entry"),
    (lambda: parse_deadlines("0", 1), "--deadline: '0'"),
    (lambda: parse_deadlines("0ms,1s", 2), "--deadline: '0ms'"),
    (lambda: parse_deadlines("-5ms", 1), "--deadline"),
    (lambda: parse_deadlines("15ms", 2), "--deadline: 1 values"),
    (lambda: parse_deadlines("15 parsecs", 1), "--deadline"),
    (lambda: parse_priorities("0", 1), "--priority: 0 is out of range"),
    (lambda: parse_priorities("1.5", 1), "--priority"),
    (lambda: parse_priorities("1,2,3", 2), "--priority: 3 values"),
    (lambda: parse_duration("0"), "--duration"),
    (lambda: parse_duration("0s"), "--duration"),
    (lambda: parse_duration("inf"), "--duration"),
    (lambda: parse_duration("-2s"), "--duration"),
    (lambda: parse_arrivals("uniform"), "--arrivals"),
    (lambda: parse_arrivals("trace:"), "--arrivals: 'trace' needs a file"),
    (lambda: parse_arrivals("poisson:3"), "--arrivals"),
    (lambda: parse_batching("window:2ms"), "--batching"),
    (lambda: parse_batching("window:2ms:max0"), "--batching max: 0"),
    (lambda: parse_batching("window:2ms:max100000000"), "from 1 to 1024"),
    (lambda: parse_batching("window:infs:max4"), "--batching window"),
    (lambda: parse_batching("window:-1ms:max4"), "--batching window"),
    (lambda: parse_batching("window:2 lightyears:max4"), "--batching window"),
    (lambda: parse_batching("always"), "--batching"),
])
def test_bad_options_name_the_flag(call, flag):
    with pytest.raises(ConfigError) as info:
        call()
    assert flag in str(info.value) and "\n" not in str(info.value)


def test_duration_arrivals_batching():
    assert parse_duration("2s") == 2.0
    assert parse_arrivals("poisson") == ArrivalSpec("poisson")
    assert parse_arrivals("loadgen-server") == ArrivalSpec("loadgen-server")
    assert parse_arrivals("closed") == ArrivalSpec("closed")
    assert parse_arrivals("trace:dir/requests.csv") == ArrivalSpec("trace", "dir/requests.csv")
    assert parse_batching("none") is None
    assert parse_batching("window:2ms:max16") == Batching(0.002, 16)
    assert parse_batching("window:0:max1") == Batching(0.0, 1)
