"""Functions for ``test_inliner``: small callees and callers that exercise each rewrite.

Kept in their own module so that the inliner reads their source as written (and so that
``k`` below is a module global that a caller's local of the same name must not capture).
"""

from __future__ import annotations

k = 3  # a global read by a callee; ``clash`` has a local of the same name
LOG: list = []


def note(x):
    """An argument with a side effect: recorded in ``LOG``."""
    LOG.append(x)
    return x


# -- callees (the test registers them as inline kernels) --
def sq(x):
    return x * x


def twice(x):
    return x + x


def add_k(x):
    y = x + k
    return y


def first_neg(xs):
    for i in range(len(xs)):
        if xs[i] < 0:
            return i
    return -1


def find(grid, v):
    for i in range(len(grid)):
        for j in range(len(grid[i])):
            if grid[i][j] == v:
                return i * 100 + j
        if v < 0:
            break
    return -1


def norm2(a, b):
    s = sq(a)
    s += sq(b)
    return s


def pos_or_none(x):
    if x > 0:
        return x


def swap_inc(a, b):
    a += 1
    return b, a


def bump(a, b):
    a += 10
    b += 1
    return a + b


def lerp(a, b, t=0.5):
    return a + (b - a) * t


def count_down(n, out):
    while n > 0:
        out.append(n)
        if n == 3:
            return n
        n -= 1
    else:
        out.append(-1)
    return 0


def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


def guarded(x):
    try:
        return 1 / x
    except ZeroDivisionError:
        return 0.0


# -- callers --
def firsts(rows):
    out = []
    for r in rows:
        out.append(first_neg(r))
    return out


def clash(k, y):
    total = add_k(k) + y
    return total, k, y


def nested(a, b):
    return norm2(sq(a), b) + norm2(b, a)


def ordered(a, b, c):
    LOG.clear()
    r = note(a) + twice(note(b)) - note(c)
    return r, list(LOG)


def lazy(flag, x):
    LOG.clear()
    v = flag and sq(note(x)) > 4
    w = sq(note(x + 1)) if not flag else -1
    i = 0
    while i < 10 and sq(i) < x:
        i += 1
    return v, w, i, list(LOG)


def direct(y, z):
    y = pos_or_none(y)  # falls off the end for y <= 0: None
    v = 0 if y is None else y
    a, b = swap_inc(z, v)
    a, b = swap_inc(a, b)  # works on the caller's a; b, a = a, b needs the tuple
    w = z
    w = bump(w, w)  # w passed twice: the callee's own copies
    return y, a, b, w, z


def loops(grid, v, n):
    out: list = []
    got = count_down(n, out)
    return find(grid, v), got, out


def keywords(a, b):
    return lerp(a, b), lerp(a, t=0.25, b=b), lerp(b=a, a=b)


def dropped(xs):
    first_neg(xs)
    total = 0
    total += sq(len(xs))
    return total


def calls_fact(n):
    return fact(n)


def calls_guarded(x):
    return guarded(x)
