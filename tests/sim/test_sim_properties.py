"""Invariants of every policy on the engine, over random small instances (hypothesis).

Each property runs a few hundred random instances: 1-3 tenants of 1-5 units (sizes up to 1.5
buffers, so tiling happens; zero bytes and zero seconds included), any policy, 1-3 requests.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuweave.schedule import get_scheduler, make_tenant, plan, schedulers
from npuweave.schedule.plan import policy_tenants
from npuweave.sim.streams import run_tenants

BUF = 100
PROFILE = settings(max_examples=1000, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow])

unit = st.tuples(st.one_of(st.just(0), st.integers(1, 150)),
                 st.one_of(st.just(0.0), st.floats(0.01, 5.0)))
instance = st.fixed_dictionaries({
    "tenants": st.lists(st.lists(unit, min_size=1, max_size=5), min_size=1, max_size=3),
    "bw": st.floats(1.0, 50.0),
    "policy": st.sampled_from(sorted(schedulers())),
    "requests": st.integers(1, 3),
})


def build(inst):
    """The instance's tenants as its policy runs them (AI-MT splits layers into blocks)."""
    ts = [make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], BUF)
          for k, us in enumerate(inst["tenants"])]
    return list(policy_tenants(get_scheduler(inst["policy"]), ts, BUF, inst["bw"]))


def run(inst):
    ts = build(inst)
    return ts, run_tenants(ts, BUF, inst["bw"], inst["policy"], inst["requests"], fast=False)


@PROFILE
@given(instance)
def test_engine_reproduces_predicted_times_exactly(inst):
    ts = build(inst)
    s = plan(inst["policy"], ts, BUF, inst["bw"], inst["requests"])
    r = run_tenants(ts, BUF, inst["bw"], inst["policy"], inst["requests"], fast=False)
    pe = {(iv.tenant, iv.request, iv.unit): (iv.start_s, iv.end_s)
          for iv in r.intervals if iv.resource == "PE"}
    assert len(pe) == len(s.order)
    for (t, q, i), cs, ce in zip(s.order, s.compute_start_s, s.compute_end_s):
        assert pe[ts[t].label, q, ts[t].units[i]] == (cs, ce)


@PROFILE
@given(instance)
def test_buffer_never_over_capacity_and_compute_after_weights(inst):
    ts, r = run(inst)
    size = {(t.label, n): b for t in ts for n, b in zip(t.units, t.weight_bytes)}
    events, arrived = [], {}
    for iv in r.intervals:
        key = (iv.tenant, iv.request, iv.unit)
        if iv.resource == "DRAM":
            # a part reserves its bytes when it starts
            events.append((iv.start_s, 1, iv.duration_s * inst["bw"]))
            arrived[key] = max(arrived.get(key, 0.0), iv.end_s)
        else:
            events.append((iv.end_s, 0, -size[iv.tenant, iv.unit]))  # frees first at a tie
            assert iv.start_s >= arrived.get(key, 0.0)  # weights in before computing
    level = peak = 0.0
    for _, _, delta in sorted(events):
        level += delta
        peak = max(peak, level)
    assert peak <= BUF * (1 + 1e-9)


@PROFILE
@given(instance)
def test_each_tenant_runs_its_units_in_order_exactly_once(inst):
    ts, r = run(inst)
    seen = defaultdict(list)
    for iv in sorted((iv for iv in r.intervals if iv.resource == "PE"),
                     key=lambda iv: (iv.start_s, iv.end_s)):
        seen[iv.tenant, iv.request].append(iv.unit)
    served = {iv.tenant for iv in r.intervals}
    for t in ts:
        if t.label not in served:
            continue
        for q in range(inst["requests"]):
            assert seen[t.label, q] == list(t.units)
    assert len(r.requests) == len(served) * inst["requests"]


@PROFILE
@given(instance)
def test_makespan_at_least_the_lower_bound_and_work_conserved(inst):
    ts, r = run(inst)
    served = {q.tenant for q in r.requests}
    comp = sum(t.total_compute_s for t in ts if t.label in served) * inst["requests"]
    mem = sum(t.total_weight_bytes for t in ts if t.label in served) * inst["requests"]
    assert abs(r.pe_busy_s - comp) <= 1e-9 * max(1.0, comp)
    assert abs(r.dram_busy_s - mem / inst["bw"]) <= 1e-9 * max(1.0, r.dram_busy_s)
    assert r.makespan_s >= max(r.pe_busy_s, r.dram_busy_s) * (1 - 1e-12)
