"""Layerweaver+'s two-mode decision (thesis V.2) as a pure function over a small view.

The policy (``npuweave.schedule.layerweaver_plus``) evaluates every candidate with chapter IV's
arithmetic and hands ``decide`` one ``Candidate`` per request in the candidate group:

* ``idle``: the total idle time chapter IV charges the choice (``Layerweaver.evaluate``);
* ``pool``: whether chapter IV's starvation rule leaves it in the Mode 1 pool;
* ``tie``: chapter IV's own tie-break key (a unit with inherent memory idle last, then the
  largest decoupling distance), compared after the slack;
* ``slack``: ``deadline - max(now, S[t_c])``, the time left before the deadline once the
  already-dispatched computation ends (``inf`` without a deadline);
* ``remaining``: the estimated remaining standalone time of the candidate's request.

Rules. **Mode 2** applies when some request is at risk, i.e. its estimated remaining standalone
time exceeds its slack; the at-risk request with the least slack goes first (ties: lower key).
This follows the prose of V.2 ("when the estimated remaining standalone execution time ...
exceeds the estimated QoS slack time"); the pseudocode's line 23 compares the other way round
(Mode 2 while the slack still exceeds the estimate), which would make Mode 2 the rule rather
than the exception the prose describes, so we do not follow it. The pseudocode also checks only
the least-slack request; we check every candidate ("some request", as the issue puts it), which
is the same whenever the least-slack request is the one at risk. **Mode 1** otherwise: the least
idle time within ``EPS``; among those, the least slack (V.2's tie-breaker), then chapter IV's
tie-break key, then the lower key.
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
    >>> Candidate(key=0, idle=0.0, slack=0.01, remaining=0.002).at_risk
    False
    """

    key: int
    idle: float
    slack: float = math.inf
    remaining: float = 0.0
    tie: tuple[float, ...] = ()
    pool: bool = True

    @property
    def at_risk(self) -> bool:
        """The request would miss its deadline even alone, by the estimate."""
        return self.remaining > self.slack


def decide(cands: Sequence[Candidate]) -> tuple[int, int]:
    """``(key, mode)`` of the candidate Layerweaver+ dispatches next.

    Examples
    --------
    Request 0 has the least idle time, but request 1 needs 3 ms alone with 2 ms of slack:

    >>> a = Candidate(key=0, idle=0.0, slack=0.050, remaining=0.004)
    >>> b = Candidate(key=1, idle=0.001, slack=0.002, remaining=0.003)
    >>> decide([a, b])
    (1, 2)
    >>> decide([a, Candidate(key=1, idle=0.001, slack=0.004, remaining=0.003)])
    (0, 1)
    """
    if not cands:
        raise ValueError("decide needs at least one candidate")
    urgent = None
    for c in cands:
        if c.remaining > c.slack and (urgent is None or (c.slack, c.key) < (urgent.slack,
                                                                             urgent.key)):
            urgent = c
    if urgent is not None:
        return urgent.key, MODE_URGENT
    pool = [c for c in cands if c.pool] or list(cands)
    best = min(c.idle for c in pool)
    ties = [c for c in pool if c.idle <= best + EPS]
    pick = min(ties, key=lambda c: (c.slack, c.tie, c.key))
    return pick.key, MODE_THROUGHPUT
