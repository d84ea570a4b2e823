"""Layerweaver+'s two-mode decision (thesis V.2) as a pure function over a small view.

The policy (``npuweave.schedule.layerweaver_plus``) evaluates every candidate with chapter IV's
arithmetic and hands ``decide`` one ``Candidate`` per request in the candidate group:

* ``idle``: the total idle time chapter IV charges the choice (``Layerweaver.evaluate``);
* ``pool``: whether chapter IV's starvation rule leaves it in the Mode 1 pool;
* ``tie``: chapter IV's own tie-break key (a unit with inherent memory idle last, then the
  largest decoupling distance), compared after the slack;
* ``deadline``: the request's absolute deadline (``inf`` without one);
* ``end``: ``S'[t_c]``, the predicted compute end if this candidate is dispatched now;
* ``remaining``: the estimated remaining standalone time of the candidate's request.

Rules. **Mode 1** picks the least idle time within ``EPS``; among those the least slack
(V.2's tie-breaker; the slack ``deadline - S[t_c]`` of every candidate is measured from the
same ``S[t_c]``, so the least slack is the earliest deadline), then chapter IV's key, then the
lower key. **Mode 2** overrides that pick when some request is at risk: its estimated remaining
standalone time exceeds its slack once the Mode 1 pick is dispatched, ``deadline - S_thput[t_c]``
(the pseudocode's line 23 measures from the state after the throughput pick, ``S_thput``; for
the pick itself the slack is measured from the current ``S[t_c]``, since dispatching it does
not delay it). The at-risk request with the least slack goes next (ties: lower key).

The direction follows the prose of V.2 (Mode 2 when the estimated remaining standalone time
exceeds the slack); the pseudocode's line 23 compares the other way
round (Mode 2 while the slack still exceeds the estimate), which would make Mode 2 the rule
rather than the exception the prose describes, so we do not follow it there. The pseudocode
checks only the least-slack request; we check every candidate ("some request", as the issue
puts it), which is the same whenever the least-slack request is the one at risk.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from npuweave.schedule.base import EPS

MODE_THROUGHPUT = 1
MODE_URGENT = 2


@dataclass(frozen=True, slots=True)
class Candidate:
    """One request's next unit as ``decide`` sees it (seconds; see the module docstring).

    Examples
    --------
    >>> Candidate(key=0, idle=0.0, deadline=0.015, end=0.010, remaining=0.002).key
    0
    """

    key: int
    idle: float
    deadline: float = math.inf
    end: float = 0.0
    remaining: float = 0.0
    tie: tuple[float, ...] = ()
    pool: bool = True


def mode1_pick(cands: Sequence[Candidate]) -> Candidate:
    """Mode 1: least idle (within ``EPS``), then earliest deadline, chapter IV's key, key."""
    pool = [c for c in cands if c.pool] or list(cands)
    best = min(c.idle for c in pool)
    return min((c for c in pool if c.idle <= best + EPS),
               key=lambda c: (c.deadline, c.tie, c.key))


def at_risk(c: Candidate, pick: Candidate, t_c: float) -> bool:
    """Whether ``c`` would miss by the estimate once ``pick`` is dispatched (``t_c``:
    the current ``S[t_c]``, from which the pick's own slack is measured)."""
    start = t_c if c is pick else pick.end
    return c.remaining > c.deadline - start


def decide(cands: Sequence[Candidate], t_c: float) -> tuple[int, int]:
    """``(key, mode)`` of the candidate Layerweaver+ dispatches next; ``t_c`` is ``S[t_c]``.

    Examples
    --------
    Request 0 wins Mode 1 (no idle) and would end its unit at 5 ms; request 1 needs 3 ms
    alone and its deadline is 7.5 ms: after the pick only 2.5 ms would be left -> Mode 2.

    >>> a = Candidate(key=0, idle=0.0, deadline=0.050, end=0.005, remaining=0.004)
    >>> b = Candidate(key=1, idle=0.001, deadline=0.0075, end=0.004, remaining=0.003)
    >>> decide([a, b], t_c=0.001)
    (1, 2)
    >>> decide([a, Candidate(key=1, idle=0.001, deadline=0.0085, end=0.004,
    ...                      remaining=0.003)], t_c=0.001)
    (0, 1)
    """
    if not cands:
        raise ValueError("decide needs at least one candidate")
    pick = mode1_pick(cands)
    urgent = None
    for c in cands:
        if at_risk(c, pick, t_c) and (urgent is None or (c.deadline, c.key) < (urgent.deadline,
                                                                               urgent.key)):
            urgent = c
    if urgent is not None:
        return urgent.key, MODE_URGENT
    return pick.key, MODE_THROUGHPUT
