"""LoadGen Server-scenario arrivals: ``loadgen_server`` against a reference written here.

The reference follows the algorithm read from LoadGen 6.0.x ``loadgen/loadgen.cc``
(``GenerateQueries`` and ``ScheduleDistribution<Server>``) and libstdc++, written as a plain
word-by-word loop (unlike the block-wise NumPy code under test):

- ``std::mt19937 schedule_rng(schedule_rng_seed)``: the seed is taken mod 2**32;
- ``exponential_distribution<double>(qps)``: ``-log(1 - u) / qps`` with
  ``u = generate_canonical<double, 53>`` = (first word + second word * 2**32) / 2**64, as one
  correctly rounded double (clamped below 1);
- ``duration_cast<nanoseconds>(duration<double>(x))``: truncation of ``x * 1e9``;
- the first query at 0, each next one at the previous stamp plus the truncated gap.

``benchmarks/loadgen_crosscheck.py`` compares the same code with the real LoadGen wheel.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from npuweave.errors import ConfigError
from npuweave.sim.arrivals import loadgen_schedule_ns, loadgen_server
from npuweave.sim.mt19937 import MT19937, canonical


class RefMT:
    """Textbook MT19937 (Matsumoto & Nishimura's mt19937ar.c), one word at a time."""

    def __init__(self, seed: int) -> None:
        self.mt = [seed & 0xFFFFFFFF]
        for i in range(1, 624):
            prev = self.mt[i - 1]
            self.mt.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
        self.index = 624

    def __call__(self) -> int:
        if self.index >= 624:
            for i in range(624):
                y = (self.mt[i] & 0x80000000) | (self.mt[(i + 1) % 624] & 0x7FFFFFFF)
                self.mt[i] = self.mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            self.index = 0
        y = self.mt[self.index]
        self.index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y


def reference_schedule_ns(seed: int, qps: float, count: int) -> list[int]:
    gen = RefMT(seed % 2**32)
    stamps = [0]
    while len(stamps) < count:
        low, high = gen(), gen()
        u = min(float(low + (high << 32)) / 2.0**64, math.nextafter(1.0, 0.0))
        gap = -math.log(1.0 - u) / qps
        stamps.append(stamps[-1] + int(gap * 1e9))
    return stamps


def test_reference_mt_matches_the_standard_check_value():
    # C++ [rand.predef]: the 10000th invocation of a default-constructed mt19937 (seed 5489)
    gen = RefMT(5489)
    outputs = [gen() for _ in range(10000)]
    assert outputs[0] == 3499211612
    assert outputs[-1] == 4123659995


def test_vectorized_mt_matches_the_standard_check_value():
    words = MT19937(5489).next(10000)
    assert int(words[0]) == 3499211612
    assert int(words[-1]) == 4123659995


@pytest.mark.parametrize("seed", [0, 1, 42, 2**31 + 7])
def test_vectorized_mt_equals_reference_and_numpy_legacy_seeding(seed):
    ours = MT19937(seed)
    got = np.concatenate([ours.next(1), ours.next(700), ours.next(1300)])  # uneven blocks
    ref = RefMT(seed)
    assert got.tolist() == [ref() for _ in range(2001)]
    # a third, independent implementation: NumPy's own MT19937 with init_genrand seeding
    key = np.random.RandomState(seed).get_state()[1]
    legacy = np.random.MT19937()
    legacy.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 624}}
    assert got.tolist() == legacy.random_raw(2001).tolist()


def test_numpy_mt19937_legacy_state_equals_ours():
    rs = np.random.RandomState(1234)
    key = rs.get_state()[1]
    from npuweave.sim.mt19937 import seed_state

    assert np.array_equal(seed_state(1234), key)


@pytest.mark.parametrize("seed", [0, 1, 2**32 + 5])
@pytest.mark.parametrize("qps", [3.0, 300.0, 12345.6])
def test_first_10000_arrivals_equal_the_reference(seed, qps):
    ref = reference_schedule_ns(seed, qps, 10000)
    got = loadgen_schedule_ns(qps, 1e-9, seed, min_query_count=10000)
    assert got.dtype == np.int64
    assert got[:10000].tolist() == ref
    arr = loadgen_server(("m",), (qps,), 1e-9, seed, min_query_count=10000)
    assert arr.time_s[:10000].tolist() == [s / 1e9 for s in ref]


def test_seed_is_reduced_mod_2_pow_32():
    assert np.array_equal(loadgen_schedule_ns(50.0, 2.0, 2**32 + 5), loadgen_schedule_ns(50.0, 2.0, 5))
    assert not np.array_equal(loadgen_schedule_ns(50.0, 2.0, 6), loadgen_schedule_ns(50.0, 2.0, 5))


def test_first_gap_worked_by_hand():
    # seed 0: the first two words are 2357136044 and 2546248239, so
    # u = (2357136044 + 2546248239 * 2**32) / 2**64 = 0.5928446165166826
    # -log(1 - u) = 0.8985603887977784; at 10 QPS the gap is 0.08985603887977784 s,
    # truncated to 89856038 ns
    gen = RefMT(0)
    assert (gen(), gen()) == (2357136044, 2546248239)
    u = (2357136044 + 2546248239 * 2**32) / 2**64
    assert u == pytest.approx(0.5928446165166826, abs=1e-16)
    assert -math.log(1 - u) == pytest.approx(0.8985603887977784, abs=1e-15)
    assert loadgen_schedule_ns(10.0, 0.05, seed=0).tolist() == [0, 89856038]


def test_count_follows_loadgen_stopping_rule():
    # LoadGen keeps generating while the previous stamp is below the duration, so the last
    # query is the first one at or past it
    stamps = loadgen_schedule_ns(100.0, 1.0, seed=3)
    assert stamps[-2] < 1_000_000_000 <= stamps[-1]
    assert loadgen_schedule_ns(100.0, 1.0, seed=3, min_query_count=500).size == 500


def test_generate_canonical_rounds_the_sum_once_and_clamps():
    top = np.array([0xFFFFFFFF, 0xFFFFFFFF], dtype=np.uint32)
    assert canonical(top)[0] == math.nextafter(1.0, 0.0)  # the sum rounds to 2**64
    assert canonical(np.array([1, 0], dtype=np.uint32))[0] == 2.0**-64
    # 1 + 2**63: the low word is lost to rounding, exactly as in a C++ double sum
    w = np.array([1, 0x80000000], dtype=np.uint32)
    assert canonical(w)[0] == float(1 + (0x80000000 << 32)) / 2.0**64


def test_several_models_use_consecutive_seeds():
    arr = loadgen_server(("a", "b"), (40.0, 7.0), 3.0, seed=11, priority=(1, 9),
                         deadline_s=(0.015, 0.13))
    a = arr.time_s[arr.model == 0]
    b = arr.time_s[arr.model == 1]
    assert (a * 1e9).round().astype(np.int64).tolist() == loadgen_schedule_ns(40.0, 3.0, 11).tolist()
    assert (b * 1e9).round().astype(np.int64).tolist() == loadgen_schedule_ns(7.0, 3.0, 12).tolist()
    assert set(arr.priority[arr.model == 1].tolist()) == {9}
    assert set(arr.deadline_s[arr.model == 0].tolist()) == {0.015}
    assert np.all(np.diff(arr.time_s) >= 0)


@pytest.mark.parametrize("qps,duration", [(0.0, 1.0), (-3.0, 1.0), (math.inf, 1.0), (5.0, 0.0),
                                          (5.0, math.inf), (5.0, math.nan)])
def test_bad_rates_and_durations(qps, duration):
    with pytest.raises(ConfigError):
        loadgen_schedule_ns(qps, duration, 0)
