"""Layerweaver+'s two-mode decision on hand-made views (times worked out in each test)."""

from __future__ import annotations

import math

import pytest

from npuweave.schedule.qos import MODE_THROUGHPUT, MODE_URGENT, Candidate, decide


def test_two_requests_mode_switch_hand_worked() -> None:
    """RN and BB requests, S[t_c] = 3 ms. Chapter IV charges RN's next layer 0.2 ms of idle
    and BB's none, so Mode 1 picks BB, whose layer would end at S'[t_c] = 3.5 ms.

    RN: deadline 15 ms, remaining approx 0.6 ms: slack after the pick 15 - 3.5 = 11.5 ms.
    BB: deadline 130 ms, remaining 1.8 ms; it is the pick: slack 130 - 3 = 127 ms.
    Nobody at risk: Mode 1, BB.
    """
    rn = Candidate(key=0, idle=0.2e-3, deadline=15e-3, end=3.4e-3, remaining=0.6e-3)
    bb = Candidate(key=1, idle=0.0, deadline=130e-3, end=3.5e-3, remaining=1.8e-3)
    assert decide([rn, bb], t_c=3e-3) == (1, MODE_THROUGHPUT)
    # Later: S[t_c] = 14.2 ms; BB's layer would end at 14.5 ms. RN then has 15 - 14.5 = 0.5 ms
    # of slack for 0.6 ms of work: at risk -> Mode 2 takes RN. (Before the pick RN still had
    # 0.8 ms: measuring from S[t_c] instead of S_thput[t_c] would miss by one layer.)
    rn = Candidate(key=0, idle=0.2e-3, deadline=15e-3, end=14.4e-3, remaining=0.6e-3)
    bb = Candidate(key=1, idle=0.0, deadline=130e-3, end=14.5e-3, remaining=1.8e-3)
    assert decide([rn, bb], t_c=14.2e-3) == (0, MODE_URGENT)
    # Exactly equal is not "exceeds" (binary-exact times): 1 - 0.75 = 0.25 s for 0.25 s.
    rn = Candidate(key=0, idle=0.125, deadline=1.0, end=0.625, remaining=0.25)
    bb = Candidate(key=1, idle=0.0, deadline=8.0, end=0.75, remaining=1.0)
    assert decide([rn, bb], t_c=0.5) == (1, MODE_THROUGHPUT)


def test_the_pick_is_measured_from_the_current_state() -> None:
    """The Mode 1 pick is not delayed by itself: its slack is deadline - S[t_c]."""
    a = Candidate(key=0, idle=0.0, deadline=10.0, end=9.5, remaining=2.0)  # 10 - 9 = 1 < 2
    assert decide([a], t_c=9.0) == (0, MODE_URGENT)
    a = Candidate(key=0, idle=0.0, deadline=10.0, end=9.5, remaining=0.9)  # 1 > 0.9
    assert decide([a], t_c=9.0) == (0, MODE_THROUGHPUT)


def test_mode2_takes_least_slack_among_the_at_risk() -> None:
    # pick: c (idle 0, earliest deadline among idle-0), ending at 1.0
    a = Candidate(key=0, idle=0.0, deadline=4.0, end=2.0, remaining=3.5)    # 4-1=3 < 3.5
    b = Candidate(key=1, idle=5.0, deadline=3.0, end=2.0, remaining=2.5)    # 3-1=2 < 2.5
    c = Candidate(key=2, idle=0.0, deadline=1.5, end=1.0, remaining=0.1)    # pick, safe
    assert decide([a, b, c], t_c=0.5) == (1, MODE_URGENT)
    # a request already past its deadline is at risk and, with the least slack, goes first
    d = Candidate(key=3, idle=9.0, deadline=0.2, end=2.0, remaining=0.1)
    assert decide([a, b, c, d], t_c=0.5) == (3, MODE_URGENT)


def test_slack_breaks_idle_ties_before_chapter_iv_tie_breaks() -> None:
    # equal idle (within 1 ps): least slack (earliest deadline) wins over a better chapter IV key
    a = Candidate(key=0, idle=1e-3, deadline=0.050, end=0.01, tie=(0.0, -9.0))
    b = Candidate(key=1, idle=1e-3 + 1e-13, deadline=0.040, end=0.01, tie=(1.0, 0.0))
    assert decide([a, b], t_c=0.0) == (1, MODE_THROUGHPUT)
    # a real idle difference is not a tie: slack does not matter in Mode 1 then
    b = Candidate(key=1, idle=2e-3, deadline=0.020, end=0.01, tie=(0.0, 0.0))
    assert decide([a, b], t_c=0.0) == (0, MODE_THROUGHPUT)


def test_without_deadlines_chapter_iv_tie_breaks_decide() -> None:
    inf = math.inf
    a = Candidate(key=0, idle=0.0, deadline=inf, remaining=1.0, tie=(1.0, -5.0))  # inh. idle
    b = Candidate(key=1, idle=0.0, deadline=inf, remaining=1.0, tie=(0.0, -1.0))
    c = Candidate(key=2, idle=0.0, deadline=inf, remaining=1.0, tie=(0.0, -3.0))  # larger dd
    assert decide([a, b, c], t_c=0.0) == (2, MODE_THROUGHPUT)
    assert decide([Candidate(key=4, idle=0.0), Candidate(key=3, idle=0.0)], 0.0) == (3, 1)


def test_starvation_pool_applies_to_mode1_only() -> None:
    a = Candidate(key=0, idle=0.0, deadline=10.0, end=1.0, remaining=1.0, pool=False)
    b = Candidate(key=1, idle=3.0, deadline=10.0, end=1.0, remaining=1.0, pool=True)
    assert decide([a, b], t_c=0.0) == (1, MODE_THROUGHPUT)
    a = Candidate(key=0, idle=0.0, deadline=1.5, end=1.0, remaining=1.0, pool=False)
    assert decide([a, b], t_c=0.0) == (0, MODE_URGENT)   # 1.5 - 1.0 = 0.5 < 1.0


def test_empty_view_is_a_bug() -> None:
    with pytest.raises(ValueError):
        decide([], 0.0)
