"""A preemption takes effect within one preemption point of the decision (issue 20, item 1).

Random workloads (tenants of 1-5 units, random weights, activation spills and checkpoint
sizes, DRAM latency on or off) under a policy that runs a random queued request and, at random
decisions, checkpoints or kills the running one. For every preemption decided at ``t``:

* a checkpoint: at most one computation of the preempted request is on the PE at ``t``; the
  preemption takes effect when it ends (``effective = its end``), or at ``t`` when none runs;
* a kill takes effect at ``t`` (PREMA's KILL): the computation running is cut off there, so
  none of the request's computations runs past ``t``;
* so ``effective - t`` is at most the longest computation of the request's model (one
  preemption point);
* no computation of the request starts after ``t`` until the policy runs it again;
* the weight buffer is empty at the end (taken-back fetches were freed) and never overfull.
"""

from __future__ import annotations

import math
import os
import random

from serve_helpers import BUF, Footprint, simulate, toy

from npuweave.schedule.protocol import IDLE, Mechanism, Preempt, Run, TaskBase
from npuweave.sim.requests import State

CASES = int(os.environ.get("NPUWEAVE_PROPERTY_EXAMPLES", "2000"))


class Preempter(TaskBase):
    """Random runs and random checkpoints/kills (at most ``budget``), every decision logged."""

    name = "preempter"

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.budget, self.period_s = rng, 8, rng.choice([0.3, 0.7, 2.0])
        self.log: list[tuple[float, str, int]] = []

    def decide(self, now, view):
        if not view.queued:
            return IDLE
        if not view.running:
            pick = self.rng.choice(view.queued).id
            self.log.append((now, "run", pick))
            return Run(pick)
        if self.budget and self.rng.random() < 0.5:
            self.budget -= 1
            rid = view.running[0].id
            mech = self.rng.choice([Mechanism.CHECKPOINT, Mechanism.KILL])
            self.log.append((now, mech.value, rid))
            return Preempt(rid, mech, None)
        return IDLE


def _case(rng: random.Random):
    tenants, feet = [], []
    for k in range(rng.randint(1, 3)):
        n = rng.randint(1, 5)
        comps = [rng.choice([0.0, rng.uniform(0.05, 3.0)]) for _ in range(n)]
        sizes = [rng.choice([0, rng.randint(1, BUF)]) for _ in range(n)]
        tenants.append(toy(f"m{k}", comps, sizes))
        units = len(tenants[-1].units)
        feet.append(Footprint(tuple(rng.randint(0, 30) for _ in range(units)),
                              tuple(rng.choice([0, rng.randint(1, 20)]) for _ in range(units))))
    rows = sorted((rng.uniform(0.0, 10.0), rng.randrange(len(tenants)), 1, math.inf)
                  for _ in range(rng.randint(2, 7)))
    pol = Preempter(rng)
    traffic = rng.random() < 0.5
    sim = simulate(tenants, pol, rows, feet, traffic=traffic,
                   latency_s=rng.choice([0.0, 0.1]) if traffic else 0.0, max_events=200_000)
    return tenants, pol, sim


def _check(tenants, pol, sim) -> int:
    runs: dict[int, list[float]] = {}
    for t, what, rid in pol.log:
        if what == "run":
            runs.setdefault(rid, []).append(t)
    assert len(sim.effects) == sum(1 for _, w, _ in pol.log if w != "run")
    for rid, t, eff in sim.effects:
        comps = [(u, s, e) for u, r, s, e in sim.engine.pe_log if r == rid and u.index >= 0]
        # a computation started before an earlier kill belongs to the discarded pass
        killed = max((x for x, w, r in pol.log if w == "kill" and r == rid and x < t),
                     default=-math.inf)
        on_pe = [(s, e) for _, s, e in comps if killed <= s <= t < e]
        if (t, "kill", rid) in pol.log:  # at once: the computation running is cut off at t
            # (one starting at t may be the restarted pass, run again at the same instant)
            assert eff == t and not [1 for s, _ in on_pe if s < t]
        else:
            assert len(on_pe) <= 1
            assert eff == (on_pe[0][1] if on_pe else t)
        longest = max(tenants[sim.requests[rid].model].compute_s)
        assert eff - t <= longest
        again = min((x for x in runs.get(rid, []) if x >= t), default=math.inf)
        assert not [s for _, s, e in comps if t < s < again and e > s], (rid, t, again)
    assert sim.engine.claimed == 0 and sim.engine.peak_claimed <= BUF
    for r in sim.requests:
        assert r.state in (State.DONE, State.KILLED)
        assert r.state is State.KILLED or r.progress == r.units
    return len(sim.effects)


def test_preemption_takes_effect_within_one_preemption_point():
    rng = random.Random(20)
    checked = 0
    for _ in range(CASES):
        checked += _check(*_case(rng))
    assert checked > CASES  # the random policy did preempt, on average more than once a case
