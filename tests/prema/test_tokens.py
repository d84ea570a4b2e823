"""Algorithm 2 (tokens) and Algorithm 3 (mechanism) against hand-worked numbers."""

import pytest

from npuweave.errors import ConfigError, UnknownNameError
from npuweave.schedule.prema import (
    accrue,
    candidates,
    closed_form,
    initial_token,
    pick_shortest,
    reading,
    select,
    select_mechanism,
    threshold,
)

PERIOD = 0.25e-3


def test_three_periods_worked_by_hand():
    """A (low, est 0.25 ms) and B (medium, est 2 ms) wait while a third task drains.

    Per period (0.25 ms idle): A gains 1 * 0.25/0.25 = 1, B gains 3 * 0.25/2 = 0.375.
      start     A = 1,  B = 3      max 3     -> threshold 3 -> >=: {B}       -> B
      period 1  A = 2,  B = 3.375  max 3.375 -> threshold 3 -> >=: {B}       -> B
      period 2  A = 3,  B = 3.75   max 3.75  -> threshold 3 -> >=: {A, B}    -> A (shorter)
                                                            strict >: {B}    -> B
      period 3  A = 4,  B = 4.125  max 4.125 -> threshold 3 -> {A, B} either -> A
    """
    est = [0.25e-3, 2e-3]
    prio = [initial_token("low"), initial_token("medium")]
    tokens = list(prio)
    assert select(tokens, est) == 1
    expected = [(2.0, 3.375, 1, 1), (3.0, 3.75, 0, 1), (4.0, 4.125, 0, 0)]
    for a, b, pick, strict_pick in expected:
        tokens = [accrue(t, p, PERIOD, e) for t, p, e in zip(tokens, prio, est)]
        assert tokens == pytest.approx([a, b])
        assert threshold(max(tokens)) == 3.0
        assert select(tokens, est) == pick
        assert select(tokens, est, strict=True) == strict_pick
    # the closed form gives the same tokens after three periods of waiting
    assert closed_form(1.0, 3 * PERIOD, est[0]) == pytest.approx(4.0)
    assert closed_form(3.0, 3 * PERIOD, est[1]) == pytest.approx(4.125)


def test_high_priority_dominates_until_others_catch_up():
    # C (high, 9) against A (low) that has waited long: A's token 1 * (1 + 8) = 9 joins C.
    tokens = [closed_form(1.0, 8e-3, 1e-3), 9.0]
    assert tokens[0] == pytest.approx(9.0)
    assert candidates(tokens, threshold(max(tokens))) == [0, 1]
    assert select(tokens, [1e-3, 10e-3]) == 0
    assert select([8.9, 9.0], [1e-3, 10e-3]) == 1


def test_threshold_rounds_down_and_strict_can_leave_no_candidate():
    assert threshold(8.0) == 3.0  # the paper's own example
    assert threshold(9.0) == 9.0
    assert threshold(12.5, (3, 6, 9, 12)) == 12.0
    assert select([1.0, 3.0], [1.0, 1.0], strict=True) is None  # fresh tasks, printed '>'
    assert select([], []) is None


def test_shortest_ties_go_to_the_first():
    assert pick_shortest([2, 0, 1], [1.0, 1.0, 1.0]) == 2
    with pytest.raises(ValueError):
        pick_shortest([], [])


@pytest.mark.parametrize("cur_est, cur_exec, cand_est, cand_exec, want", [
    (10.0, 9.0, 5.0, 0.0, "drain"),        # 5/10 = 0.5 > 1/5 = 0.2
    (10.0, 1.0, 2.0, 0.0, "checkpoint"),   # 2/10 = 0.2 < 9/2 = 4.5
    (10.0, 5.0, 10.0, 5.0, "checkpoint"),  # 5/10 == 5/10: not '>' -> preempt
    (4.0, 3.0, 8.0, 6.0, "drain"),         # 2/4 = 0.5 > 1/8 = 0.125 (candidate half done)
    (4.0, 6.0, 8.0, 0.0, "drain"),         # current past its estimate: remaining 0
])
def test_algorithm3_hand_cases(cur_est, cur_exec, cand_est, cand_exec, want):
    assert select_mechanism(cur_est, cur_exec, cand_est, cand_exec) == want
    kill = select_mechanism(cur_est, cur_exec, cand_est, cand_exec, preempt="kill")
    assert kill == ("drain" if want == "drain" else "kill")


def test_bad_input():
    with pytest.raises(ConfigError, match="priority 'urgent'"):
        initial_token("urgent")
    with pytest.raises(ConfigError, match="outside"):
        initial_token(3)
    with pytest.raises(ConfigError, match="drain"):
        select_mechanism(1, 0, 1, preempt="drain")
    with pytest.raises(ConfigError, match="> 0"):
        accrue(1.0, 1.0, 1.0, 0.0)
    with pytest.raises(UnknownNameError, match="paper"):
        reading("nope")
    with pytest.raises(ConfigError, match="token_update"):
        reading("paper", token_update="sometimes")
    with pytest.raises(ConfigError, match="no option"):
        reading("paper", colour="red")
    with pytest.raises(ConfigError, match="period_s"):
        reading("paper", period_s=0.0)


def test_presets_differ_where_the_notes_say():
    paper, dysta, canplane = reading("paper"), reading("dysta"), reading("canplane")
    assert paper.period_s == 0.25e-3 and paper.token_levels == (1, 3, 9)
    assert dysta.token_update == "since-exec" and dysta.decide_at == "layer"
    assert dysta.mechanism_select == "static" and dysta.preempt_at == "layer"
    assert canplane.levels == (3, 6, 9, 12) and canplane.preempt_gate == "bucket"
    assert canplane.period_s == pytest.approx(100_000 / 700e6)
    assert reading("paper", job_length="total").name == "custom"
