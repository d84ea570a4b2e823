"""Functions for ``test_specialize``: loops with run-constant flag parameters and inline
helpers that test them (kept in a module so that the inliner reads their source)."""

from __future__ import annotations

LOG: list = []


def note(x):
    """An operand with a side effect, recorded in ``LOG``."""
    LOG.append(x)
    return x


# -- callees (the test registers them as inline kernels) --
def clip(x, limit, strict):
    if limit is None:
        return x
    if strict and x > limit:
        return limit
    if not strict and x > 2 * limit:
        return 2 * limit
    return x


def step(total, x, mode, scale):
    if mode == 0:
        return total + x
    elif mode == 1:
        return total - x * scale
    return total * 2 if scale > 1 else total + 1


def first_over(xs, limit, strict):
    for i in range(len(xs)):
        if (xs[i] > limit) if strict else (xs[i] >= limit):
            return i
    return -1


def weight(x, scale=2, on=True):
    return x * scale if on else x


# -- callers: a loop written once for every mode --
def loop(xs, mode, strict, scale, limit):
    LOG.clear()
    total = 0
    for x in xs:
        if mode == 2 and strict:
            continue
        total = step(total, clip(x, limit, strict), mode, scale)
        while strict and mode != 1 and total > 100:
            total -= 100
    hit = first_over(xs, 3 if limit is None else limit, strict)
    return (total, hit, mode and scale, strict or limit, not strict and mode,
            scale if mode else None, weight(total), list(LOG))


def lazy(a, b, flag):
    LOG.clear()
    v = note(a) and flag and note(b)
    w = flag or note(a)
    if note(a) and not flag:
        w = -1
    if flag and note(b) and 0:
        w = -2
    return v, w, list(LOG)


def rebinds(x, flag):
    if x:
        flag = not flag
    return flag


def nested_def(x, flag):
    def inner(flag):
        return flag + 1

    return inner(x) if flag else x


def generator(flag):
    if flag:
        return
    yield 1


def unbound_if_dead(flag):
    if flag:
        y = 1
    return y  # noqa: F821 (unbound without flag)


def identity(a, b, c):
    return a is b, a is c, b is None, a is not None


def unpacked(pol, xs):
    """Run-constant flags packed in a tuple (as ``loop.run_loop`` takes them)."""
    mode, scale = pol
    total = 0
    for x in xs:
        total = step(total, x, mode, scale)
    return total


def late(pol):
    if pol:
        mode = 1
    else:
        mode = 2
    return mode
