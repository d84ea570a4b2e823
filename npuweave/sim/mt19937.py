"""The 32-bit Mersenne Twister (``std::mt19937``) and libstdc++'s exponential draw, in NumPy.

MLPerf LoadGen schedules Server-scenario queries with ``std::mt19937`` and
``std::exponential_distribution<double>``; reproducing its arrival times bit for bit needs the
same generator, the same seed reduction and the same real-number construction, so all three
live here (``docs/ARRIVALS_METRICS.md`` derives them from LoadGen's source).

- Seeding: ``std::mt19937(seed)`` keeps ``seed mod 2**32`` (the engine's word is 32 bits), then
  fills the 624-word state with Knuth's multiplier 1812433253 (a sequential recurrence, 624
  Python integer steps).
- Twisting: each refill of 624 words is done in four NumPy slices. Word ``i`` reads words
  ``i + 1`` (old) and ``i + 397 mod 624``; the latter is old for ``i < 227`` and already new
  after that, so the slices [0, 227), [227, 454), [454, 623) and {623} only read finished words.
- Tempering is element-wise, so it is applied to a whole block at once.
"""

from __future__ import annotations

import math

import numpy as np

_N = 624
_M = 397
_MATRIX_A = np.uint32(0x9908B0DF)
_UPPER = np.uint32(0x80000000)
_LOWER = np.uint32(0x7FFFFFFF)
_TWO32 = 4294967296.0
#: The largest double below 1.0: libstdc++'s ``generate_canonical`` clamps to it.
_BELOW_ONE = math.nextafter(1.0, 0.0)


def seed_state(seed: int) -> np.ndarray:
    """The 624-word state ``std::mt19937(seed)`` starts from (``seed`` taken mod 2**32).

    Examples
    --------
    >>> int(seed_state(5489)[1])
    1301868182
    """
    words = [int(seed) % 2**32]
    for i in range(1, _N):
        prev = words[-1]
        words.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(words, dtype=np.uint32)


def _mix(cur: np.ndarray, nxt: np.ndarray, far: np.ndarray) -> np.ndarray:
    y = (cur & _UPPER) | (nxt & _LOWER)
    return far ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * _MATRIX_A)


def twist(state: np.ndarray) -> np.ndarray:
    """Return the next 624-word state (the generator's refill), without touching ``state``."""
    old = state
    new = np.empty_like(old)
    new[0:227] = _mix(old[0:227], old[1:228], old[397:624])
    new[227:454] = _mix(old[227:454], old[228:455], new[0:227])
    new[454:623] = _mix(old[454:623], old[455:624], new[227:396])
    new[623:624] = _mix(old[623:624], new[0:1], new[396:397])
    return new


def temper(words: np.ndarray) -> np.ndarray:
    """MT19937's output tempering, element-wise on uint32 words."""
    y = words.astype(np.uint32, copy=True)
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


class MT19937:
    """A ``std::mt19937`` stream that hands out its 32-bit outputs in NumPy blocks.

    Examples
    --------
    >>> int(MT19937(5489).next(10000)[-1])      # the C++ standard's check value
    4123659995
    """

    __slots__ = ("_buffer", "_state")

    def __init__(self, seed: int) -> None:
        self._state = seed_state(seed)
        self._buffer = np.empty(0, dtype=np.uint32)

    def next(self, n: int) -> np.ndarray:
        """The next ``n`` outputs as a uint32 array."""
        parts = [self._buffer]
        have = self._buffer.size
        while have < n:
            self._state = twist(self._state)
            block = temper(self._state)
            parts.append(block)
            have += block.size
        out = np.concatenate(parts)
        self._buffer = out[n:]
        return out[:n]


def canonical(words: np.ndarray) -> np.ndarray:
    """libstdc++'s ``generate_canonical<double, 53>`` from pairs of 32-bit words.

    Two words per draw (``ceil(53 / 32)``): ``(w0 + w1 * 2**32) / 2**64``, the sum rounded to a
    double as C++ adds doubles, and a result of exactly 1.0 clamped to the double below 1.
    """
    w = np.asarray(words, dtype=np.uint32)
    total = w[0::2].astype(np.float64) + w[1::2].astype(np.float64) * _TWO32
    u = total / (_TWO32 * _TWO32)
    return np.minimum(u, _BELOW_ONE)


def exponential(words: np.ndarray, rate: float) -> np.ndarray:
    """``std::exponential_distribution<double>(rate)`` draws: ``-log(1 - u) / rate``.

    ``math.log`` is the C library's ``log`` (as ``std::log`` is); NumPy's vectorized ``log`` may
    differ from it in the last bit on some CPUs, and LoadGen's times must match to the bit.
    """
    one_minus = (1.0 - canonical(words)).tolist()
    logs = np.fromiter(map(math.log, one_minus), dtype=np.float64, count=len(one_minus))
    return -logs / float(rate)


def to_nanoseconds(seconds: np.ndarray) -> np.ndarray:
    """``duration_cast<nanoseconds>(duration<double>(s))``: ``s * 1e9`` in double, truncated."""
    return np.trunc(np.asarray(seconds, dtype=np.float64) * 1e9).astype(np.int64)
