"""The per-task caches of PREMA runs: the unit tables equal their rules, and ``warm`` fills
every cache a simulation reads (so forked pool workers build nothing of their own)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.experiments.prema import task_sets
from npuweave.experiments.prema_sim import cold_isolated, simulate, task_tenant, warm
from npuweave.hardware import preset
from npuweave.schedule.base import Tenant
from npuweave.sim import units
from npuweave.sim.engine import Kind, Unit


def _reference(tenant, k, spill, traffic, lat):
    """Per unit, its jobs in dispatch order, from the rules of ``npuweave.sim.units``
    written out one unit at a time: the read-back half of the previous unit's spill, the
    weight load, the computation, the written half of its own spill."""
    lat = lat if traffic else 0.0
    spill = spill if traffic else [0] * len(spill)
    out = []
    for i, (c, b) in enumerate(zip(tenant.compute_s, tenant.weight_bytes)):
        jobs = []
        if i and spill[i - 1] // 2:
            jobs.append(Unit(Kind.LOAD, k, i, spill[i - 1] // 2, 0, lat))
        if b:
            jobs.append(Unit(Kind.LOAD, k, i, b, b, lat))
        jobs.append(Unit(Kind.COMPUTE, k, i, 0, b, c))
        if spill[i] - spill[i] // 2:
            jobs.append(Unit(Kind.STORE, k, i, spill[i] - spill[i] // 2, 0, lat))
        out.append(jobs)
    return out


layer = st.tuples(st.floats(0.0, 1e-3), st.integers(0, 3), st.integers(0, 5))


@settings(max_examples=300, deadline=None)
@given(st.lists(layer, min_size=1, max_size=12), st.integers(0, 7), st.booleans())
def test_unit_tables_follow_their_rules(rows, k, traffic):
    comp = tuple(c for c, _, _ in rows)
    wb = tuple(b for _, b, _ in rows)
    spill = [s for _, _, s in rows]
    tenant = Tenant("t", tuple(f"u{i}" for i in range(len(rows))), comp, wb)
    foot = units.Footprint(tuple(range(len(rows))), tuple(spill))
    tables, heads, tails = units.unit_tables(tenant, k, foot, traffic, 2e-6, 1e9)
    ref = _reference(tenant, k, spill, traffic, 2e-6)
    assert [[h, *t] for h, t in zip(heads, tails, strict=True)] == ref
    assert tables.comp == tuple(j for jobs in ref for j in jobs if j.kind is Kind.COMPUTE)
    assert tables.live == foot.live


def test_warm_fills_every_cache_a_simulation_reads():
    npu = preset("prema")
    sets = task_sets(npu, 2, 8, 11)
    warm(sets, npu, "dysta")
    before = [f.cache_info().misses for f in (task_tenant, cold_isolated, units.unit_tables)]
    for tasks in sets:
        simulate(tasks, npu, "p-prema", "dynamic", "dysta")
    after = [f.cache_info().misses for f in (task_tenant, cold_isolated, units.unit_tables)]
    assert after == before
