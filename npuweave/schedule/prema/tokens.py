"""PREMA's token arithmetic (Algorithm 2) as pure functions.

A task enters the ready queue with the token of its priority level (1/3/9 for low/medium/high
by default, Table II). At each scheduling period every waiting task gains
``priority * idle / Time_isolated`` tokens, ``idle`` being how long it sat in the ready queue
since the last update and ``Time_isolated`` its *estimated* isolated time (the scheduler knows
no other). The threshold is the largest token rounded *down* to a priority token value; the
candidates are the tasks whose token reaches it; the shortest estimated job among them runs.

Examples
--------
>>> accrue(1.0, 1.0, idle_s=0.25e-3, est_s=0.25e-3)  # one period idle, job as long as a period
2.0
>>> threshold(8.0)  # rounded down: 9 would leave no candidate
3.0
>>> select([8.0, 3.0, 2.0], [5e-3, 1e-3, 0.5e-3])  # candidates 0 and 1; 1 is shorter
1
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from npuweave.errors import ConfigError

LEVELS: tuple[str, ...] = ("low", "medium", "high")
"""Priority levels, lowest first."""

DEFAULT_TOKENS: tuple[float, ...] = (1.0, 3.0, 9.0)
"""Initial tokens per level (PREMA Table II)."""


def priority_value(level: str | int, tokens: Sequence[float] = DEFAULT_TOKENS) -> float:
    """The user-defined priority (= initial token) of a level name or index.

    Examples
    --------
    >>> priority_value("medium"), priority_value(2)
    (3.0, 9.0)
    """
    if isinstance(level, str):
        key = level.lower()
        if key not in LEVELS:
            raise ConfigError(f"priority {level!r} is not a level; use one of "
                              f"{', '.join(LEVELS)}")
        index = LEVELS.index(key)
    else:
        index = int(level)
        if not 0 <= index < len(tokens):
            raise ConfigError(f"priority level {level} is outside 0..{len(tokens) - 1} "
                              f"({', '.join(LEVELS)})")
    return float(tokens[index])


def initial_token(level: str | int, tokens: Sequence[float] = DEFAULT_TOKENS) -> float:
    """Algorithm 2 line 3: a new task's token is its priority value."""
    return priority_value(level, tokens)


def accrue(token: float, priority: float, idle_s: float, est_s: float) -> float:
    """Algorithm 2 line 7: ``token + priority * idle / est``.

    ``idle_s`` is the ready-queue time being credited (the last period's, or whatever the
    chosen reading credits); ``est_s`` is the task's estimated isolated time.
    """
    if est_s <= 0:
        raise ConfigError(f"estimated isolated time must be > 0 s, got {est_s}")
    if idle_s < 0:
        raise ConfigError(f"idle time must be >= 0 s, got {idle_s}")
    return token + priority * idle_s / est_s


def closed_form(priority: float, waited_s: float, est_s: float) -> float:
    """``priority * (1 + waited / est)``: the token after ``waited_s`` of ready-queue time,
    credited period by period (what ``accrue`` sums to; canplane's formula)."""
    return accrue(priority, priority, waited_s, est_s)


def threshold(max_token: float, tokens: Sequence[float] = DEFAULT_TOKENS) -> float:
    """The largest token value rounded down to a priority token value (at least the lowest).

    Examples
    --------
    >>> threshold(9.0), threshold(8.99), threshold(2.5), threshold(0.5)
    (9.0, 3.0, 1.0, 1.0)
    """
    levels = _descending(tuple(tokens))
    for t in levels:
        if t <= max_token:
            return t
    return levels[-1]


@cache
def _descending(tokens: tuple[float, ...]) -> tuple[float, ...]:
    """The threshold values, highest first (sorted once per distinct set of levels)."""
    return tuple(sorted((float(t) for t in tokens), reverse=True))


def candidates(tokens: Sequence[float], thr: float, strict: bool = False) -> list[int]:
    """Indices of the tasks whose token reaches the threshold (``>``, if ``strict``).

    Algorithm 2 prints ``>``; with it a queue of fresh tasks (all tokens equal to their
    level) has no candidate at all, hence the default ``>=``.
    """
    if strict:
        return [i for i, t in enumerate(tokens) if t > thr]
    return [i for i, t in enumerate(tokens) if t >= thr]


def pick_shortest(ids: Sequence[int], lengths: Sequence[float]) -> int:
    """The id with the shortest estimated job; ties go to the earliest id in ``ids``."""
    if not ids:
        raise ValueError("no candidate to pick from")
    return min(ids, key=lambda i: (lengths[i], ids.index(i)))


def select(tokens: Sequence[float], lengths: Sequence[float],
           levels: Sequence[float] = DEFAULT_TOKENS, strict: bool = False) -> int | None:
    """Algorithm 2 lines 9-10: threshold, candidates, shortest estimated job (None: no
    candidate, which only a strict threshold can give)."""
    if not tokens:
        return None
    ids = candidates(tokens, threshold(max(tokens), levels), strict)
    return pick_shortest(ids, lengths) if ids else None
