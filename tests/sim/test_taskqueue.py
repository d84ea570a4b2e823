"""The compiled task loop's queue (``npuweave.sim.taskqueue``): an indexed binary heap of
request ids by ``(key0, key1, id)``, against a plain sorted list (hypothesis).

Random pushes, removals from anywhere and key changes of queued requests; after each, the
heap's first entry is the least request, every slot's parent comes before it, and each queued
request's recorded position is its slot (-1 once it left).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.schedule import jit
from npuweave.sim import taskqueue as Q

N = 12
push, remove, rekey = (jit.python(f"npuweave.sim.taskqueue.{f}") for f in
                       ("push", "remove", "rekey"))
OPS = st.lists(st.tuples(st.sampled_from(("push", "remove", "rekey")), st.integers(0, N - 1),
                         st.integers(0, 3), st.integers(0, 3)), max_size=60)


def _order(rx: np.ndarray, r: int) -> tuple[float, float, int]:
    return float(rx[r, Q.X_K0]), float(rx[r, Q.X_K1]), r


def _check(hq, ti, rc, rx, queued: set[int]) -> None:
    n = int(ti[Q.T_HN])
    assert sorted(hq[:n].tolist()) == sorted(queued)
    for i in range(n):
        assert rc[hq[i], Q.R_HPOS] == i
        if i:
            assert _order(rx, hq[(i - 1) // 2]) < _order(rx, hq[i])
    if queued:
        assert hq[0] == min(queued, key=lambda r: _order(rx, r))
    for r in set(range(N)) - queued:
        assert rc[r, Q.R_HPOS] == -1


@settings(max_examples=400, deadline=None)
@given(OPS)
def test_the_heap_keeps_the_least_request_first(ops):
    # few distinct keys, so ties on key0 and key1 are common and the id decides
    rc, rx = np.zeros((N, Q.N_RC), np.int64), np.zeros((N, Q.N_RX))
    rc[:, Q.R_HPOS] = -1
    hq, ti = np.zeros(N, np.int64), np.zeros(Q.N_TI, np.int64)
    queued: set[int] = set()
    for op, r, k0, k1 in ops:
        if op == "push" and r not in queued:
            rx[r, Q.X_K0], rx[r, Q.X_K1] = k0, k1
            push(hq, ti, rc, rx, r)
            queued.add(r)
        elif op == "remove" and r in queued:
            remove(hq, ti, rc, rx, r)
            queued.discard(r)
        elif op == "rekey" and r in queued:
            rx[r, Q.X_K0], rx[r, Q.X_K1] = k0, k1
            rekey(hq, ti, rc, rx, r)
        _check(hq, ti, rc, rx, queued)
