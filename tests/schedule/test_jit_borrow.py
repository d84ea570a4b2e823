"""``jit.borrow``: the arrays unchanged in plain Python, usable views of them when compiled."""

from __future__ import annotations

import numpy as np
import pytest

from npuweave.schedule import jit


def test_plain_borrow_is_the_identity():
    a, b = np.zeros(3), np.arange(4)
    out = jit.python("npuweave.schedule.jit.borrow")((a, b))
    assert out[0] is a and out[1] is b


def test_compiled_borrow_reads_and_writes_the_callers_arrays():
    numba = pytest.importorskip("numba")
    assert jit.compile()
    borrow = jit.borrow  # the compiled form, swapped in by compile()

    @numba.njit
    def scaled_sum(x, out):
        x, out = borrow((x, out))
        s = 0.0
        for i in range(x.shape[0]):
            out[i] = 2.0 * x[i]
            s += x[i]
        return s

    x = np.array([1.0, 2.5, 4.0])
    out = np.zeros(3)
    assert scaled_sum(x, out) == 7.5
    assert out.tolist() == [2.0, 5.0, 8.0]  # written through the borrowed view
    assert x.tolist() == [1.0, 2.5, 4.0]  # the caller's arrays are still its own
    with pytest.raises(numba.core.errors.TypingError):  # not a tuple of arrays: refused
        numba.njit(lambda v: borrow(v))(1.0)
