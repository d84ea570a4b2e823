"""PREMA policies on the serving engine: mechanism timelines worked by hand, properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.schedule.base import Tenant
from npuweave.schedule.registry import get_scheduler
from npuweave.sim.requests import State
from npuweave.sim.serve import Simulator
from npuweave.sim.units import Footprint

MS = 1e-3


def _run(tenants, feet, arrivals, policy, buffer=1000, bw=1e9):
    iso = tuple(sum(t.compute_s) for t in tenants)
    sim = Simulator(tenants, buffer, bw, policy, arrivals=arrivals, footprints=feet,
                    traffic=True, latency_s=0.0, isolated_s=iso, log=True)
    if sim.engine.loop is not sim.loop:  # the core engine bug worked around in prema_sim
        sim.loop = sim.engine.loop
    sim.run()
    return sim


def _two_task(mechanism):
    """A (low, 8 units of 1 ms, 500 B weights each) from t = 0; B (high, one 1 ms unit)
    arrives at 1.5 ms. Buffer 1000 B, 1 GB/s: a weight load takes 0.5 us."""
    a = Tenant("A", tuple(f"a{i}" for i in range(8)), (MS,) * 8, (500,) * 8)
    b = Tenant("B", ("b0",), (MS,), (500,))
    fa = Footprint(tuple(1000 * (i + 1) for i in range(8)), (0,) * 8)
    fb = Footprint((10,), (0,))
    arrivals = [(0.0, 0, 1, math.inf), (1.5 * MS, 1, 9, math.inf)]
    return _run([a, b], [fa, fb], arrivals, get_scheduler("p-hpf", mechanism=mechanism))


def test_checkpoint_timeline():
    """Loads: A0 0-0.5 us, A1 0.5-1 us (buffer full); A computes unit i over
    [i + 0.0005, i + 1.0005] ms. A2 loads when A0 ends (1.0005 ms) and A3 is pulled then,
    waiting for space. At 1.5 ms B arrives while A1 computes: the preemption takes effect
    when A1 ends (2.0005 ms); A2's computation is taken back (its weights leave the buffer,
    so A3's fetch goes on, 1.5-1.5005 ms, and is discarded). The checkpoint stores the 2000
    live bytes after unit 1 (2 us: 2.0005-2.0025), B loads (2.0025-2.003) and computes
    2.003-3.003 ms. A restores 2000 B (2.003-2.005), reloads unit 2 and computes units 2-7
    from 3.003 ms: finish 9.003 ms; overhead 4 us (store + restore)."""
    sim = _two_task("checkpoint")
    a, b = sim.requests
    assert b.start_s == pytest.approx(2.003 * MS)
    assert b.finish_s == pytest.approx(3.003 * MS)
    assert a.finish_s == pytest.approx(9.003 * MS)
    assert a.overhead_s == pytest.approx(4e-6)
    assert (a.preemptions, a.restarts) == (1, 0)
    assert sim.effects == [(0, pytest.approx(1.5 * MS), pytest.approx(2.0005 * MS))]


def test_kill_timeline():
    """Same start; KILL stores nothing and takes effect at once (the paper's KILL): at 1.5 ms
    A1 (computing since 1.0005 ms) is cut off, so units 0-1 waste 1 + 0.4995 ms; A2's
    computation is taken back (its 500 B leave the buffer, so A3's waiting fetch goes on,
    1.5-1.5005 ms, and is discarded). B loads 1.5005-1.501 ms and computes 1.501-2.501 ms
    (the PE is free from 1.5). A restarts from unit 0 once B's computation starts: A0 loads
    beside B's weights, A1 waits for B's 500 B (2.501 ms); A computes 2.501-10.501 ms."""
    sim = _two_task("kill")
    a, b = sim.requests
    assert b.finish_s == pytest.approx(2.501 * MS)
    assert a.finish_s == pytest.approx(10.501 * MS)
    assert a.wasted_s == pytest.approx(1.4995 * MS)
    assert a.restarts == 1 and a.overhead_s == 0.0
    assert sim.effects == [(0, pytest.approx(1.5 * MS), pytest.approx(1.5 * MS))]


def test_drain_timeline():
    """DRAIN: A runs to its end (8.0005 ms); B loads when A6 ends (7.0005) and computes
    8.0005-9.0005 ms."""
    sim = _two_task("drain")
    a, b = sim.requests
    assert a.finish_s == pytest.approx(8.0005 * MS)
    assert b.finish_s == pytest.approx(9.0005 * MS)
    assert a.overhead_s == 0.0 and a.wasted_s == 0.0


def _stream(policy):
    """L: low, one 1 ms unit, arrives at 0.1 ms; H_k: high, ten 1 ms units, arrive every
    5 ms from 0 to 25 ms (a high task always waits). Without weights every unit is dispatched at once, so use 600 B
    weights in a 1000 B buffer: one unit in flight at a time."""
    h = Tenant("H", tuple(f"h{i}" for i in range(10)), (MS,) * 10, (600,) * 10)
    lo = Tenant("L", ("l0",), (MS,), (600,))
    tenants = [h] * 6 + [lo]
    feet = [Footprint((0,) * 10, (0,) * 10)] * 6 + [Footprint((0,), (0,))]
    arr = sorted([(5 * k * MS, k, 9, math.inf) for k in range(6)] + [(0.1 * MS, 6, 1,
                                                                          math.inf)])
    return _run(tenants, feet, arr, policy)


def test_prema_lets_a_short_low_task_through_a_high_stream():
    """Under P-HPF the low task waits for all six high tasks (60 ms of work). Under P-PREMA
    its token grows by 1 per 1 ms waited (priority 1, estimate 1 ms) and reaches 9 at
    8.1 ms; at the 8.25 ms wake-up it is a candidate and the shortest one, so it is picked.
    H0's last unit has not started, so H0 still holds the NPU and is preempted: L runs at the
    end of H0's unit 8 (~9.0 ms) and is done by ~10 ms, first of all."""
    hpf = _stream(get_scheduler("p-hpf", mechanism="checkpoint"))
    prema = _stream(get_scheduler("p-prema", mechanism="checkpoint"))
    low_hpf = next(r for r in hpf.requests if r.model == 6)
    low_prema = next(r for r in prema.requests if r.model == 6)
    assert low_hpf.finish_s > 60 * MS
    assert low_prema.finish_s < 10.5 * MS
    assert low_prema.id == sorted(prema.requests, key=lambda r: r.finish_s)[0].id


@st.composite
def workloads(draw, min_weight=0):
    n = draw(st.integers(2, 4))
    tenants, feet, arrivals = [], [], []
    for k in range(n):
        units = draw(st.integers(1, 5))
        comp = tuple(draw(st.floats(0.1, 2.0)) * MS for _ in range(units))
        wb = tuple(draw(st.integers(min_weight, 500)) for _ in range(units))
        tenants.append(Tenant(f"t{k}", tuple(f"u{i}" for i in range(units)), comp, wb))
        feet.append(Footprint(tuple(draw(st.integers(0, 4000)) for _ in range(units)),
                              (0,) * units))
        arrivals.append((draw(st.floats(0.0, 5.0)) * MS, k, draw(st.sampled_from([1, 3, 9])),
                         math.inf))
    return tenants, feet, sorted(arrivals)


@settings(max_examples=150, deadline=None)
@given(workloads(min_weight=400))
def test_hpf_never_runs_lower_priority_while_a_higher_one_waits(w):
    """Under P-HPF, no computation of a lower-priority request *starts* later than the units
    it had in flight when a higher-priority request arrived, while that request is unfinished.

    The engine preempts at the next unit boundary of the dispatch stream: units already
    handed over complete. With 400-500 B of weights per unit in a 1000 B buffer at most three
    units are in flight (computing, loaded, pulled and waiting for space), so the last of
    them starts within two unit times (plus three 0.5 us loads) of the arrival."""
    tenants, feet, arrivals = w
    sim = _run(tenants, feet, arrivals, get_scheduler("p-hpf", mechanism="checkpoint"))
    longest = max(max(t.compute_s) for t in tenants)
    for _unit, rid, start, _ in sim.engine.pe_log:
        low = sim.requests[rid]
        for high in sim.requests:
            if high.priority > low.priority and high.arrival_s + 2 * longest + 2e-6 < start \
                    < high.finish_s - 1e-12:
                raise AssertionError(f"request {rid} (prio {low.priority}) started a unit at "
                                     f"{start} while {high.id} (prio {high.priority}) waited")


@settings(max_examples=150, deadline=None)
@given(workloads(), st.sampled_from(["checkpoint", "kill", "dynamic"]))
def test_prema_every_task_finishes_within_all_the_work(w, mech):
    """Bounded wait under P-PREMA: every task finishes, and no later after its arrival than
    all the work of the run (isolated times, checkpoint overheads, killed work, plus a
    weight load per unit) could take: the NPU never idles while a task waits."""
    tenants, feet, arrivals = w
    sim = _run(tenants, feet, arrivals, get_scheduler("p-prema", mechanism=mech))
    assert all(r.state is State.DONE for r in sim.requests)
    work = sum(sum(t.compute_s) + sum(t.weight_bytes) / 1e9 for t in tenants)
    extra = sum(r.overhead_s + r.wasted_s for r in sim.requests)
    for r in sim.requests:
        assert r.finish_s - r.arrival_s <= work + extra + 1e-9


def test_determinism_per_seed():
    from npuweave.experiments.prema_sim import simulate
    from npuweave.experiments.prema_workload import draw_tasks
    from npuweave.hardware import preset

    npu = preset("prema")
    tasks = draw_tasks(npu, 4, seed=3, run=0, batches=(1,))
    a = simulate(tasks, npu, "p-prema", "dynamic")
    b = simulate(tasks, npu, "p-prema", "dynamic")
    assert np.array_equal(a.finish, b.finish) and a.preemptions == b.preemptions
    other = simulate(draw_tasks(npu, 4, seed=4, run=0, batches=(1,)), npu, "p-prema",
                     "dynamic")
    assert not np.array_equal(a.finish, other.finish)


def test_jobs_do_not_change_results():
    from npuweave.experiments.prema import evaluate, task_sets
    from npuweave.hardware import preset

    npu = preset("prema")
    sets = task_sets(npu, 2, 3, seed=1, batches=(1,))
    cfgs = [("NP-FCFS", "np-fcfs", "none"), ("P-PREMA dynamic", "p-prema", "dynamic")]
    one = evaluate(sets, npu, cfgs, jobs=1)
    two = evaluate(sets, npu, cfgs, jobs=2)
    for label in ("NP-FCFS", "P-PREMA dynamic"):
        assert one[label]["antt"] == two[label]["antt"]
        assert one[label]["sla"] == two[label]["sla"]
