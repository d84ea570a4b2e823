"""AI-MT's decision, written once, and its compiled closed loop.

``choose`` is AI-MT's priority mechanism (``npuweave.schedule.aimt``) over the candidate group
given as two short arrays, the compute and fetch seconds of each candidate's next block (in
tenant order); ``pool_member`` is the pool its random rule draws from. ``AIMT.select`` calls
both as plain Python on the ``Board``'s numbers; ``run_aimt`` calls the same functions in its
loop, which numba compiles when it is installed (``npuweave.schedule.jit``), with the closed
loop's step of ``npuweave.schedule.kernel`` (``dispatch``: ``buffer.commit_in_place``, the
output columns, ``ClosedLoop.reissue``; ``resume`` grows full arrays between calls), so both
paths make the same decisions with the same float operations (property tests in
``tests/schedule/test_aimt_kernel.py``).

The random rule draws as ``random.Random(seed).randrange(n)`` does (CPython's Mersenne Twister
and its rejection sampling, ``randbelow``); the loop starts from the policy's generator state
and hands the final state back, so either path leaves the policy as the other would.

``choose`` also narrows ``box``, the thresholds under which every decision of the run so far
comes out the same: ``low_free`` in ``(box[0], box[1]]`` and ``min_d`` in ``(box[2], box[3]]``.
Another threshold setting inside the box makes the identical schedule (same branches, hence
the same picks and draws), which lets a threshold sweep skip it (``AIMT.same_run``).
"""

from __future__ import annotations

import numpy as np

from npuweave.schedule import jit
from npuweave.schedule.jit import borrow
from npuweave.schedule.kernel import dispatch, flat_board, has_room, loop_end, resume

_N = 624  # MT19937's state words
_M = 397


@jit.kernel(inline=True)
def choose(n, c, f, free, low_free, gap, min_d, box):
    """AI-MT's pick among ``n`` candidates (compute ``c[j]``, fetch ``f[j]`` seconds), or -1:
    draw at random from ``pool_member``'s pool. ``free``: bytes not held at ``t_m``; ``gap``:
    ``t_c - t_m``. Narrows ``box`` (module docstring).

    Examples
    --------
    >>> box = [-1.0, 1e9, -1.0, 1e9]
    >>> choose(2, [4.0, 0.5], [1.0, 4.0], 40, 50.0, 0.0, 1.0, box), box[0]  # free < 50
    (1, 40)
    """
    if n == 1:
        return 0
    if free < low_free:  # little on-chip memory left: the least compute
        if free > box[0]:
            box[0] = free
        best = 0
        for j in range(1, n):
            if c[j] < c[best]:
                best = j
        return best
    if free < box[1]:
        box[1] = free
    if gap < min_d:  # insufficient distance: compute-intensive, largest compute - fetch
        if gap > box[2]:
            box[2] = gap
        best = -1
        top = 0.0
        top_ci = False
        for j in range(n):
            ci = c[j] >= f[j]
            if best < 0 or (ci and not top_ci) or (ci == top_ci and c[j] - f[j] > top):
                best = j
                top = c[j] - f[j]
                top_ci = ci
        return best
    if gap < box[3]:
        box[3] = gap
    return -1


@jit.kernel(inline=True)
def pool_member(n, c, f, r):
    """AI-MT's random pool among ``n`` candidates: the memory-intensive ones (``c < f``), or
    all when there is none. ``r < 0``: its size; else the index of its ``r``-th member.

    Examples
    --------
    >>> pool_member(3, [1.0, 0.5, 2.0], [0.5, 1.0, 3.0], -1), pool_member(3, [1.0, 0.5, 2.0],
    ...                                                                  [0.5, 1.0, 3.0], 1)
    (2, 2)
    """
    m = 0
    for j in range(n):
        if c[j] < f[j]:
            if m == r:
                return j
            m += 1
    if r < 0:
        return m if m > 0 else n
    return r


@jit.kernel
def next_word(mt):
    """The next 32-bit output of CPython's Mersenne Twister; ``mt``: its 624 words, then the
    index (``random.Random.getstate()[1]``), advanced in place."""
    if mt[_N] >= _N:
        for k in range(_N):
            y = (mt[k] & 0x80000000) | (mt[(k + 1) % _N] & 0x7FFFFFFF)
            mt[k] = mt[(k + _M) % _N] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        mt[_N] = 0
    y = mt[mt[_N]]
    mt[_N] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y


@jit.kernel
def randbelow(mt, n):
    """``random.Random.randrange(n)`` for ``0 < n < 2**32`` on the state ``mt``: ``k`` =
    bits of ``n``, draw the top ``k`` bits of a word until one is below ``n``."""
    k = 0
    while (1 << k) <= n:
        k += 1
    r = next_word(mt) >> (32 - k)
    while r >= n:
        r = next_word(mt) >> (32 - k)
    return r


@jit.kernel
def run_aimt(k, off, size, comp, ftime, buf, bw, low_free, min_d, active, pos, req, arrival,
             clock, fl_at, fl_s, fl_c, fl_f, requests, window, has_window, o_int, o_float, n,
             mt, box):
    """Run AI-MT on the flat board from decision ``n`` until it is done or its arrays are
    full; return the new ``n`` (``npuweave.schedule.kernel.run_kernel``'s state, layout,
    closed-loop rule and resumption). Its array arguments are borrowed (``jit.borrow``), as
    ``run_kernel``'s are."""
    cand = np.empty(k, np.int64)
    c = np.empty(k, np.float64)
    f = np.empty(k, np.float64)
    # the caller's arrays, without reference counting (``jit.borrow``; not ``cand/c/f``,
    # which the loop allocates)
    off, size, comp, ftime, active, pos, req, arrival, fl_s, fl_c, fl_f = borrow(
        (off, size, comp, ftime, active, pos, req, arrival, fl_s, fl_c, fl_f))
    o_int, o_float, mt, box = borrow((o_int, o_float, mt, box))
    t_m, t_c = clock[0], clock[1]
    head, tail, used = fl_at[0], fl_at[1], fl_at[2]
    while has_room(n, o_int, fl_s, head, tail):
        m = 0
        for t in range(k):
            if active[t]:
                cand[m] = t
                c[m] = comp[off[t] + pos[t]]
                f[m] = ftime[off[t] + pos[t]]
                m += 1
        if m == 0:
            break
        free = buf - used
        j = choose(m, c, f, free, low_free, t_c - t_m, min_d, box)
        if j < 0:
            j = pool_member(m, c, f, randbelow(mt, pool_member(m, c, f, -1)))
        head, tail, used, t_m, t_c = dispatch(cand[j], n, o_int, o_float, fl_s, fl_c, fl_f,
                                              head, tail, used, t_m, t_c, free, off, size,
                                              comp, ftime, bw, pos, req, arrival, active,
                                              requests, window, has_window)
        n += 1
    clock[0], clock[1] = t_m, t_c
    fl_at[0], fl_at[1], fl_at[2] = head, tail, used
    return n


def run_board_arrays(policy, board, requests: int | None, window_s: float | None,
                     cap: int) -> tuple[np.ndarray, ...]:
    """Run ``board`` (started by ``policy``, an ``AIMT``) to the end on ``run_aimt``; return
    ``tenant, request, unit, fs, fe, cs, ce`` (one row per decision), as
    ``npuweave.schedule.plan.plan_arrays`` does. The policy's generator and ``box`` end as
    the Python loop would leave them."""
    jit.compile()
    b = board
    flat = flat_board(b, cap)
    version, words, gauss = policy.rng.getstate()
    mt = np.array(words, np.int64)
    box = np.array(policy.box, np.float64)
    tables = (flat.k, flat.off, flat.size, flat.comp, flat.ftime, b.buf, b.bw,
              float(policy.low_free), float(policy.min_d), flat.active, flat.pos, flat.req,
              flat.arrival, flat.clock, flat.fl_at)
    loop = loop_end(requests, window_s)
    out = resume(lambda fl, o_int, o_float, n: run_aimt(*tables, *fl, *loop, o_int, o_float,
                                                        n, mt, box), flat, cap)
    policy.rng.setstate((version, tuple(mt.tolist()), gauss))
    policy.box[:] = box.tolist()
    return out
