"""Layerweaver+'s two-mode decision on hand-made views (times worked out in each test)."""

from __future__ import annotations

import math

import pytest

from npuweave.schedule.qos import MODE_THROUGHPUT, MODE_URGENT, Candidate, decide


def test_two_requests_mode_switch_hand_worked() -> None:
    """Two requests at now = 1 ms, the predicted compute end S[t_c] = 3 ms.

    RN request: arrived 0, deadline 15 ms -> slack 15 - 3 = 12 ms; remaining approx 0.6 ms.
    BB request: arrived 0, deadline 130 ms -> slack 127 ms; remaining approx 1.8 ms.
    Chapter IV charges RN's next layer 0.2 ms idle and BB's none, so Mode 1 picks BB.
    """
    now, t_c = 1e-3, 3e-3
    slack_rn = 15e-3 - max(now, t_c)
    slack_bb = 130e-3 - max(now, t_c)
    rn = Candidate(key=0, idle=0.2e-3, slack=slack_rn, remaining=0.6e-3)
    bb = Candidate(key=1, idle=0.0, slack=slack_bb, remaining=1.8e-3)
    assert decide([rn, bb]) == (1, MODE_THROUGHPUT)
    # Later: S[t_c] = 14.5 ms, RN still has 0.6 ms alone to go -> slack 0.5 ms < 0.6 ms: at risk.
    t_c = 14.5e-3
    rn = Candidate(key=0, idle=0.2e-3, slack=15e-3 - t_c, remaining=0.6e-3)
    bb = Candidate(key=1, idle=0.0, slack=130e-3 - t_c, remaining=1.8e-3)
    assert rn.at_risk and not bb.at_risk
    assert decide([rn, bb]) == (0, MODE_URGENT)
    # Exactly equal is not "exceeds": 0.6 ms of slack for 0.6 ms of work stays in Mode 1.
    rn = Candidate(key=0, idle=0.2e-3, slack=0.6e-3, remaining=0.6e-3)
    assert decide([rn, bb]) == (1, MODE_THROUGHPUT)


def test_mode2_takes_least_slack_among_the_at_risk() -> None:
    a = Candidate(key=0, idle=0.0, slack=2.0, remaining=3.0)     # at risk, slack 2
    b = Candidate(key=1, idle=5.0, slack=1.0, remaining=4.0)     # at risk, slack 1
    c = Candidate(key=2, idle=0.0, slack=0.5, remaining=0.1)     # least slack, not at risk
    assert decide([a, b, c]) == (1, MODE_URGENT)
    # a request already past its deadline (negative slack) is at risk and goes first
    d = Candidate(key=3, idle=9.0, slack=-1.0, remaining=0.1)
    assert decide([a, b, c, d]) == (3, MODE_URGENT)


def test_slack_breaks_idle_ties_before_chapter_iv_tie_breaks() -> None:
    # equal idle (within 1 ps): least slack wins even against a better chapter IV key
    a = Candidate(key=0, idle=1e-3, slack=0.050, remaining=0.001, tie=(0.0, -9.0))
    b = Candidate(key=1, idle=1e-3 + 1e-13, slack=0.040, remaining=0.001, tie=(1.0, 0.0))
    assert decide([a, b]) == (1, MODE_THROUGHPUT)
    # a real idle difference is not a tie: slack does not matter in Mode 1 then
    b = Candidate(key=1, idle=2e-3, slack=0.001, remaining=0.0005, tie=(0.0, 0.0))
    assert decide([a, b]) == (0, MODE_THROUGHPUT)


def test_without_deadlines_chapter_iv_tie_breaks_decide() -> None:
    inf = math.inf
    a = Candidate(key=0, idle=0.0, slack=inf, remaining=1.0, tie=(1.0, -5.0))  # inherent idle
    b = Candidate(key=1, idle=0.0, slack=inf, remaining=1.0, tie=(0.0, -1.0))
    c = Candidate(key=2, idle=0.0, slack=inf, remaining=1.0, tie=(0.0, -3.0))  # larger distance
    assert decide([a, b, c]) == (2, MODE_THROUGHPUT)
    assert decide([Candidate(key=4, idle=0.0), Candidate(key=3, idle=0.0)]) == (3, 1)


def test_starvation_pool_applies_to_mode1_only() -> None:
    a = Candidate(key=0, idle=0.0, slack=10.0, remaining=1.0, pool=False)
    b = Candidate(key=1, idle=3.0, slack=10.0, remaining=1.0, pool=True)
    assert decide([a, b]) == (1, MODE_THROUGHPUT)
    a = Candidate(key=0, idle=0.0, slack=0.5, remaining=1.0, pool=False)
    assert decide([a, b]) == (0, MODE_URGENT)


def test_empty_view_is_a_bug() -> None:
    with pytest.raises(ValueError):
        decide([])
