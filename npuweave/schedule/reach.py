"""A run's reach, folded span by span: what the closed-loop metrics read of a run.

Per request slot: whether it did some work (a busy span of positive length), its earliest
start and its latest end; per run: its busy seconds added in run order, whether its spans come
in (start, end) order and whether none has a negative or NaN length; for the PE run also each
slot's first unit's start and last unit's end. These steps are the one definition of that
bookkeeping: ``npuweave.sim.runwork`` folds a finished run with them, and
``npuweave.schedule.fetchparts`` folds the PE run and the DMA parts while it replays them (one
pass over the decisions instead of three). Kernels (``inline=True``: copied into each loop
when compiled, and by the inliner without numba).
"""

from __future__ import annotations

from npuweave.schedule.jit import kernel as _jit


@_jit(inline=True)
def fold_span(x, y, busy, any_work, exact, first, end, in_order, s0, e0):
    """Fold busy span ``[x, y]`` into its run (``busy`` seconds, ``exact``: no span of
    negative or NaN length, ``in_order``: each span at or after ``(s0, e0)``, the run's
    previous one) and into its slot's registers (``any_work``, ``first``, ``end``); returns
    them in this order, then ``x, y`` (the run's new previous span)."""
    d = y - x
    busy += d
    if d > 0:
        any_work = True
    elif not d >= 0:
        exact = False
    if x < first:
        first = x
    if y > end:
        end = y
    if x < s0 or (x == s0 and y < e0):
        in_order = False
    return busy, any_work, exact, first, end, in_order, x, y


@_jit(inline=True)
def note_slot(k, any_work, first, last, worked, lo, hi):
    """Fold slot ``k``'s registers (some positive length, earliest start, latest end) into
    ``worked``, ``lo``, ``hi`` (nothing for ``k < 0``)."""
    if k >= 0:
        if any_work:
            worked[k] = True
        if first < lo[k]:
            lo[k] = first
        if last > hi[k]:
            hi[k] = last


@_jit(inline=True)
def note_ends(unit, last, k, x, y, start_s, finish_s):
    """A PE span ``[x, y]`` of unit ``unit`` of slot ``k`` (``last``: its tenant's last unit
    index): the slot's first computation starts at ``x`` when it is unit 0, its last one
    ends at ``y`` when it is the last unit."""
    if unit == 0:
        start_s[k] = x
    if unit == last:
        finish_s[k] = y
