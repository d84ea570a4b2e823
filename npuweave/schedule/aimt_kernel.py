"""AI-MT's decision, written once, for its Python ``select`` and the one compiled loop.

``choose`` is AI-MT's priority mechanism (``npuweave.schedule.aimt``) over the candidate group
given as two short arrays, the compute and fetch seconds of each candidate's next block (in
tenant order); ``pool_member`` is the pool its random rule draws from. ``AIMT.select`` calls
both as plain Python on the ``Board``'s numbers; ``choose_among`` calls the same functions on
the flat board of ``npuweave.schedule.loop.run_loop`` (policy code ``AIMT``), which numba
compiles when it is installed (``npuweave.schedule.jit``), so both paths make the same
decisions with the same float operations (property tests in
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

from npuweave.schedule import jit

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


@jit.kernel(inline=True)
def choose_among(k, active, seg, pos, comp, ftime, free, gap, aimt):
    """AI-MT's pick among the active tenants of a board of ``k`` (tenant ``t``'s next unit
    is ``seg[t] + pos[t]``): ``choose`` on their next blocks, in tenant order, else the random
    rule's draw from ``pool_member``'s pool. ``aimt``: ``low_free, min_d, box`` and the
    generator state ``mt`` (both updated in place), then the candidate work arrays ``cand,
    c, f`` (``k`` entries each)."""
    low_free, min_d, box, mt, cand, c, f = aimt
    m = 0
    for t in range(k):
        if active[t]:
            u = seg[t] + pos[t]
            cand[m] = t
            c[m] = comp[u]
            f[m] = ftime[u]
            m += 1
    j = choose(m, c, f, free, low_free, gap, min_d, box)
    if j < 0:
        j = pool_member(m, c, f, randbelow(mt, pool_member(m, c, f, -1)))
    return cand[j]
