"""The PREMA-evaluation policies decide on hand-made views (no engine involved)."""

import pytest

from npuweave.errors import ConfigError, NpuweaveError
from npuweave.schedule.prema.family import level_of
from npuweave.schedule.protocol import IDLE, Mechanism, Preempt, Run, View
from npuweave.schedule.registry import get_scheduler, schedulers
from npuweave.sim.requests import Request, State


def _view(now, reqs, running=None, remaining=None):
    """Tenant i = request i; each tenant has units of 1 ms (remaining[t][i] = ms left)."""
    remaining = remaining or [tuple(float(k) * 1e-3 for k in range(r.units, 0, -1))
                              for r in reqs]
    queued = [r for r in reqs if r is not running and r.state is not State.DONE]
    return View(now=now, tenants=(), queued=queued, running=[running] if running else [],
                isolated_s=tuple(rem[0] for rem in remaining), remaining=tuple(remaining))


def _req(i, arrival, prio, units, progress=0):
    return Request(id=i, model=i, arrival_s=arrival, priority=prio, units=units,
                   progress=progress)


def test_registered():
    names = schedulers("task")
    for n in ("np-fcfs", "rrb", "np-hpf", "token", "np-sjf", "prema",
              "p-hpf", "p-token", "p-sjf", "p-prema"):
        assert n in names


def test_np_fcfs_and_hpf_pick():
    a, b = _req(0, 0.0, 1, 4), _req(1, 1e-3, 9, 2)
    assert get_scheduler("np-fcfs").decide(2e-3, _view(2e-3, [a, b])) == Run(0)
    assert get_scheduler("np-hpf").decide(2e-3, _view(2e-3, [a, b])) == Run(1)
    # non-preemptive: the running low-priority task keeps the NPU
    assert get_scheduler("np-hpf").decide(2e-3, _view(2e-3, [a, b], running=a)) == IDLE


def test_p_hpf_static_and_dynamic():
    low = _req(0, 0.0, 1, 10, progress=1)     # 1 ms done of 10
    high = _req(1, 1e-3, 9, 2)
    view = _view(1e-3, [low, high], running=low)
    kill = get_scheduler("p-hpf", mechanism="kill").decide(1e-3, view)
    assert kill == Preempt(0, Mechanism.KILL, None)
    # dynamic: remaining(low) = 9 ms, est(high) = 2 ms: 2/10 < 9/2 -> checkpoint
    assert get_scheduler("p-hpf").decide(1e-3, view) == Preempt(0, Mechanism.CHECKPOINT, None)
    # low nearly done (9 of 10 units): 2/10 = 0.2 > 1/2? no -> still checkpoint;
    # with high longer (20 units): 20/10 = 2 > 1/20 -> drain (keep running)
    low9 = _req(0, 0.0, 1, 10, progress=9)
    high20 = _req(1, 1e-3, 9, 20)
    pol = get_scheduler("p-hpf")
    assert pol.decide(1e-3, _view(1e-3, [low9, high20], running=low9)) == IDLE
    assert pol.drains == 1


def test_sjf_uses_estimates_not_truth():
    a, b = _req(0, 0.0, 1, 4), _req(1, 0.0, 1, 2)   # true 4 ms and 2 ms
    view = _view(0.0, [a, b])
    assert get_scheduler("np-sjf").decide(0.0, view) == Run(1)  # oracle estimates
    wrong = get_scheduler("np-sjf", estimates_s=(1e-3, 5e-3))
    assert wrong.decide(0.0, view) == Run(0)


def test_prema_tokens_let_a_short_low_task_through():
    """Medium task M (est 8 ms) and low task L (est 1 ms) wait from t = 0.

    At t = 1 ms: L = 1 + 1*1/1 = 2, M = 3 + 3*1/8 = 3.375 -> threshold 3 -> {M} -> M.
    At t = 2 ms: L = 3, M = 3.75 -> {L, M} -> PREMA takes L (shorter), TOKEN takes M (earlier).
    """
    m, lo = _req(0, 0.0, 3, 8), _req(1, 0.0, 1, 1)
    prema, token = get_scheduler("prema"), get_scheduler("token")
    assert prema.decide(1e-3, _view(1e-3, [m, lo])) == Run(0)
    assert prema.tokens == pytest.approx({0: 3.375, 1: 2.0})
    assert prema.decide(2e-3, _view(2e-3, [m, lo])) == Run(1)
    token.decide(1e-3, _view(1e-3, [m, lo]))
    assert token.decide(2e-3, _view(2e-3, [m, lo])) == Run(0)


def test_p_prema_running_token_is_frozen():
    """M (medium, 8 ms) runs from t = 0; L (low, 1 ms) waits from t = 0.

    t = 1 ms: M frozen at 3, L = 1 + 1 = 2 -> threshold 3 -> {M}: M is running -> idle.
    t = 2 ms: M still 3, L = 3 -> {M, L}; remaining M = 8 - 2 = 6 ms, L = 1 ms -> L.
    Algorithm 3: 1/8 = 0.125 < 6/1 -> checkpoint M for L.
    """
    pol = get_scheduler("p-prema")
    m = _req(0, 0.0, 3, 8, progress=1)
    lo = _req(1, 0.0, 1, 1)
    assert pol.decide(1e-3, _view(1e-3, [m, lo], running=m)) == IDLE
    m.progress = 2
    assert pol.decide(2e-3, _view(2e-3, [m, lo], running=m)) == Preempt(0, Mechanism.CHECKPOINT, None)
    assert pol.tokens == pytest.approx({0: 3.0, 1: 3.0})


def test_rrb_cycles_models():
    reqs = [_req(0, 0.0, 1, 2), _req(1, 0.1e-3, 1, 2), _req(2, 0.2e-3, 1, 2)]
    pol = get_scheduler("rrb", groups=(0, 0, 1))
    assert pol.decide(1e-3, _view(1e-3, reqs)) == Run(0)
    rest = [reqs[1], reqs[2]]
    assert pol.decide(2e-3, _view(2e-3, rest)) == Run(2)  # the other model's turn
    assert pol.decide(3e-3, _view(3e-3, [reqs[1]])) == Run(1)


def test_bad_options():
    with pytest.raises(ConfigError, match="mechanism"):
        get_scheduler("p-prema", mechanism="drain-ish")
    with pytest.raises(NpuweaveError, match="reading"):
        get_scheduler("prema", reading="nope")
    with pytest.raises(ConfigError, match="not a PREMA level"):
        level_of(5)


def test_other_priorities_are_their_own_tokens():
    """Serving runs may carry any integer priority: a token starts at the priority itself
    (never below the lowest level, 1), so 0 behaves as low and 5 sits between 3 and 9."""
    pol = get_scheduler("prema")
    a, b = _req(0, 0.0, 0, 2), _req(1, 0.0, 5, 4)
    assert pol.decide(0.0, _view(0.0, [a, b])) == Run(1)   # tokens 1 and 5: threshold 3
    assert pol.tokens == {0: 1.0, 1: 5.0}


def test_wake_up_period_scales_only_for_long_tasks():
    short = View(now=0.0, tenants=(), isolated_s=(0.8e-3, 40e-3), remaining=((0.8e-3,), (40e-3,)))
    long_ = View(now=0.0, tenants=(), isolated_s=(2.0, 0.0), remaining=((2.0,), (0.0,)))
    pol = get_scheduler("p-prema")
    assert pol.start(short) == [] and pol.period_s == 0.25e-3  # 40.8 ms / 4000 < 0.25 ms
    pol = get_scheduler("p-prema")
    assert pol.start(long_) and pol.period_s == pytest.approx(0.5e-3)  # 2 s / 4000
    assert get_scheduler("np-sjf").period_s is None
