"""Layerweaver's idle estimates, selection rule, tie-breaks, starvation prevention, failsafe.

All boards: buffer 100 B, 10 B/s (fill time 10 s). Units are (bytes, compute seconds).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sched_helpers import board

from npuweave.schedule import get_scheduler, make_tenant, plan


def lw(b, reading="npuweave"):
    p = get_scheduler("layerweaver", reading=reading)
    p.start(b)
    return p


def test_idle_estimates_by_hand():
    # S: t_m = 0, t_c = 10, in flight (10 B, done 10). Candidate (10 B, 50 s):
    #   S'[t_m] = 1, S'[t_c] = 10 + 50 = 60 -> compute idle 0, distance 59
    #   inherent memory idle = 50 - (100 - 10) / 10 = 41
    #   F = fetch(1, 10): 80 B free, 1 -> 9 = 80 B (the 10 B block frees only at 10)
    #   memory idle incurred 41 + 8 = 49, charged to the decision 49 - 41 = 8
    #   potential compute idle: max fetch 10 B / 10 = 1 s (T1's 100 B unit: 10 s) - 59 < 0 -> 0
    b = board([[(10, 50.0)], [(10, 20.0), (100, 1.0)]], state=(0.0, 10.0, [(10, 10.0)]))
    total, ci, mem, charged, pi, dd = lw(b).evaluate(b, 0)
    assert (ci, pi, dd) == (0.0, 0.0, 59.0)
    assert mem == pytest.approx(49.0) and charged == pytest.approx(8.0)
    assert total == pytest.approx(8.0)


def test_compute_idle_and_potential_compute_idle_by_hand():
    # empty state; candidate (20 B, 1 s): fetch 0 -> 2, compute 2 -> 3: compute idle 2;
    # largest pending unit 60 B -> 6 s, distance 1 s: potential compute idle 5. Total 7.
    b = board([[(20, 1.0), (50, 0.1)], [(60, 1.0), (10, 100.0)]])
    total, ci, _, charged, pi, _ = lw(b).evaluate(b, 0)
    assert (ci, charged, pi, total) == (2.0, 0.0, 5.0, 7.0)


def test_selects_least_total_idle():
    # S: t_m = 0, t_c = 10, in flight (10 B, done 10).
    # T0 (10 B, 50 s): total 8 (as above; potential idle 9 - 59 < 0).
    # T1 (90 B, 0.5 s): fetch 0 -> 9, compute 10 -> 10.5: compute idle 0; inherent
    #   0.5 - 1 = -0.5, window (9, 10) has no free space (F = 0): no memory idle;
    #   potential: largest pending fetch 90 B = 9 s, distance 1.5 -> 7.5. Total 7.5 < 8 -> T1.
    b = board([[(10, 50.0)], [(90, 0.5), (10, 0.01)]], state=(0.0, 10.0, [(10, 10.0)]))
    p = lw(b)
    assert p.evaluate(b, 0)[0] == pytest.approx(8.0)
    assert p.evaluate(b, 1) == (7.5, 0.0, -0.5, 0.0, 7.5, 1.5)
    assert p.select(b) == 1


def test_tie_break_prefers_no_inherent_memory_idle_over_distance():
    # S: t_m = 0, t_c = 5, in flight (20 B, done 5); max fetch 5 s.
    # T0 (50 B, 100 s): lands at 5 = t_c, distance 100, inherent idle 100 - 5 = 95 > 0; total 0
    # T1 (50 B, 5 s):   lands at 5, distance 5 (potential 5 - 5 = 0), inherent 5 - 5 = 0; total 0
    # Both idle-free: the unit without inherent memory idle (T1) wins despite the shorter
    # distance and the higher index.
    b = board([[(50, 100.0)], [(50, 5.0), (50, 0.1)]], state=(0.0, 5.0, [(20, 5.0)]))
    p = lw(b)
    assert p.evaluate(b, 0)[0] == 0.0 and p.evaluate(b, 1)[0] == 0.0
    assert p.select(b) == 1


def test_tie_break_prefers_largest_decoupling_distance():
    # Same S. T0 (50 B, 5 s): lands 5, distance 5, inherent 0. T1 (40 B, 4.5 s): lands 4,
    # computes 5 -> 9.5: distance 5.5; inherent 4.5 - 6 = -1.5, and -1.5 + (5 - 4) < 0 so no
    # memory idle. Both total 0 and no inherent idle -> larger distance: T1.
    b = board([[(50, 5.0)], [(40, 4.5), (50, 0.1)]], state=(0.0, 5.0, [(20, 5.0)]))
    p = lw(b)
    assert p.evaluate(b, 0)[5] == 5.0 and p.evaluate(b, 1)[5] == 5.5
    assert p.select(b) == 1


def test_equal_candidates_go_to_lower_index():
    b = board([[(50, 5.0)], [(50, 5.0), (50, 0.1)]], state=(0.0, 5.0, [(20, 5.0)]))
    assert lw(b).select(b) == 0


def test_starvation_all_candidates_cause_compute_idle_picks_compute_intensive_model():
    # Empty state, every fetch makes the PE wait. T0 is memory-intensive (1.1 s compute vs 7 s
    # fetch), T1 compute-intensive (101 s vs 7 s) but starts with a memory-heavy layer.
    # T0 (20 B, 1 s): compute idle 2 + potential 6 - 1 = 5 -> 7.  T1 (60 B, 1 s): 6 + 5 = 11.
    # Least idle would pick T0; starvation prevention picks the compute-intensive T1.
    b = board([[(20, 1.0), (50, 0.1)], [(60, 1.0), (10, 100.0)]])
    p = lw(b)
    assert p.evaluate(b, 0)[0] == 7.0 and p.evaluate(b, 1)[0] == 11.0
    assert p.select(b) == 1


def test_starvation_all_candidates_incur_memory_idle_picks_memory_intensive_model():
    # S: t_m = 0, t_c = 10, in flight (10 B, done 10).
    # T0 compute-intensive, (50 B, 50 s): lands 5; F = 40 B in (5, 10) -> charged 4; incurred 49.
    # T1 memory-intensive (23 s compute vs 31 s fetch) starting with (10 B, 20 s): lands 1;
    #   F = 80 B in (1, 9) -> charged 8; incurred 11 + 8 = 19.
    # Both incur memory idle and neither causes compute idle: T1 despite its larger total.
    b = board([[(50, 50.0)], [(10, 20.0), (100, 1.0), (100, 1.0), (100, 1.0)]],
              state=(0.0, 10.0, [(10, 10.0)]))
    p = lw(b)
    assert b.kind == ["compute", "memory"]
    assert p.evaluate(b, 0)[0] == pytest.approx(4.0)
    assert p.evaluate(b, 1)[0] == pytest.approx(8.0)
    assert p.select(b) == 1


def test_failsafe_when_all_tenants_are_compute_intensive():
    a = make_tenant("a", [5.0, 5.0], [10, 10], 100)
    c = make_tenant("c", [3.0, 3.0], [20, 20], 100)
    s = plan("layerweaver", [a, c], 100, 10.0, requests=2)
    assert any("failsafe" in n and "compute-intensive" in n for n in s.notes)
    # one request at a time, first come first served: a0, c0, a1, c1
    assert [(t, r) for t, r, i in s.order if i == 0] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert s.order == plan("sequential", [a, c], 100, 10.0, requests=2).order


def test_failsafe_off_still_interleaves():
    # Both compute-intensive: a = (60 B, 1 s), (10 B, 9 s): 10 s vs 7 s; c = (10 B, 6 s),
    # (60 B, 1 s): 7 s vs 7 s. Largest fetch 6 s. Failsafe off, by hand:
    #   empty state: a0 lands 6, compute idle 6 + potential 6 - 1 = 5 -> 11; c0 lands 1,
    #     idle 1 + potential 6 - 6 = 0 -> 1; both cause compute idle, both compute-intensive
    #     -> least total: c0 (fetch 0-1, compute 1-7)
    #   t_m 1, t_c 7: a0 and c1 (both 60 B, 1 s) land at 7, distance 1, potential 5: tie,
    #     neither has inherent idle (1 - 4 < 0), same distance -> lower index a0 (7-8)
    #   t_m 7, t_c 8: a1 lands 8, distance 9 -> total 0; c1 must wait for space (40 B free,
    #     then a0's 60 B block at 8): lands 13 -> a1 (fetch 7-8, compute 8-17)
    #   c1: fetch 8-14, compute 17-18.  Sequential (the failsafe) ends at 23.
    a = make_tenant("a", [1.0, 9.0], [60, 10], 100)
    c = make_tenant("c", [6.0, 1.0], [10, 60], 100)
    s = plan("layerweaver", [a, c], 100, 10.0, requests=1, failsafe=False)
    assert any("failsafe off" in n for n in s.notes)
    assert s.order == ((1, 0, 0), (0, 0, 0), (0, 0, 1), (1, 0, 1))
    assert s.compute_end_s == (7.0, 8.0, 17.0, 18.0)
    assert plan("layerweaver", [a, c], 100, 10.0, requests=1).makespan_s == 23.0


def test_single_tenant_runs_and_notes_failsafe():
    a = make_tenant("a", [5.0, 5.0], [10, 10], 100)
    s = plan("layerweaver", [a], 100, 10.0, requests=2)
    assert len(s.order) == 4 and any("failsafe" in n for n in s.notes)


def test_interleaving_beats_sequential_on_complementary_pair():
    # cnn: 4 x (10 B, 4 s) = 16 s compute, 4 s fetch; nlp: 4 x (40 B, 0.5 s) = 2 s, 16 s.
    # Lower bound max(18, 20) = 20 s; run back to back the two take about 16 + 1 + 16 + 0.5.
    cnn = make_tenant("cnn", [4.0] * 4, [10] * 4, 100)
    nlp = make_tenant("nlp", [0.5] * 4, [40] * 4, 100)
    lw_ = plan("layerweaver", [cnn, nlp], 100, 10.0, requests=1).makespan_s
    seq = plan("sequential", [cnn, nlp], 100, 10.0, requests=1).makespan_s
    assert lw_ < seq and lw_ < 24.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 100), st.floats(0.0, 20.0)), min_size=1,
                         max_size=3), min_size=2, max_size=4),
       st.floats(0.0, 10.0), st.floats(0.0, 20.0),
       st.lists(st.tuples(st.integers(1, 40), st.floats(0.0, 25.0)), max_size=3))
def test_fast_select_agrees_with_reference(units, t_m, dt, inflight):
    # the inlined hot-loop select and the plain evaluate-based one pick the same tenant
    fl = sorted((s, t_m + c) for s, c in inflight if t_m + c <= t_m + dt)
    fl = [(s, c) for s, c in sorted(fl, key=lambda x: x[1]) if c > t_m]
    used, keep = 0, []
    for s, c in fl:
        if used + s <= 100:
            keep.append((s, c))
            used += s
    b = board(units, state=(t_m, t_m + dt, keep))
    p = lw(b)
    p.failsafe = False
    assert p.select(b) == p.select_reference(b)


# -- the four reading choices (npuweave.schedule.lw_reading) -------------------------------


def test_printed_memory_idle_charges_the_fetch_even_with_buffer_to_spare():
    # S: t_m = 0, t_c = 10, in flight (10 B, done 10). Candidate (10 B, 5 s): lands 1;
    #   inherent 5 - (100 - 10) / 10 = -4 (buffer to spare). F = fetch(1, 10) = 80 B: 8 s.
    #   printed: charged 8 (fetch / MemBW); excess: max(0, -4 + 8) - 0 = 4.
    b = board([[(10, 5.0)], [(10, 1.0)]], state=(0.0, 10.0, [(10, 10.0)]))
    assert lw(b, "printed").evaluate(b, 0)[3] == pytest.approx(8.0)
    assert lw(b, "npuweave").evaluate(b, 0)[3] == pytest.approx(4.0)


def test_printed_compute_idle_ignores_the_stall_for_space():
    # S: t_m = 0, t_c = 2, in flight (90 B, done 8): 10 B free. Candidate (50 B, 1 s):
    #   fetch 10 B by 1, wait for the 90 B block at 8, 40 B more by 12: S'[t_m] = 12.
    #   exact: 12 - 2 = 10; printed: 50 / 10 - (2 - 0) = 3.
    b = board([[(50, 1.0)], [(10, 1.0)]], state=(0.0, 2.0, [(90, 8.0)]))
    assert lw(b, "npuweave").evaluate(b, 0)[1] == pytest.approx(10.0)
    assert lw(b, "printed").evaluate(b, 0)[1] == pytest.approx(3.0)


def test_tie_scope_zero_skips_the_inherent_preference_on_nonzero_ties():
    # T0's unit (50 B, 10 s) has inherent memory idle 10 - 50/10 = 5 > 0; T1's (10 B, 1 s)
    # has 1 - 9 < 0. Two candidates tied at total 2 with equal distance 10: "zero" (printed)
    # applies the inherent-idle preference only to zero-idle ties, so the lower index wins;
    # "all" prefers T1. At a zero-total tie both scopes prefer T1.
    from npuweave.schedule.layerweaver import _pick
    from npuweave.schedule.lw_reading import NPUWEAVE, PRINTED

    b = board([[(50, 10.0)], [(10, 1.0)]])
    tied = [(0, 2.0, 0.0, 0.0, 0.0, 2.0, 10.0), (1, 2.0, 0.0, 0.0, 0.0, 2.0, 10.0)]
    assert _pick(b, tied, PRINTED) == 0 and _pick(b, tied, NPUWEAVE) == 1
    zero = [(t, 0.0, 0.0, 0.0, 0.0, 0.0, 10.0) for t in (0, 1)]
    assert _pick(b, zero, PRINTED) == 1 and _pick(b, zero, NPUWEAVE) == 1


def test_options_override_a_reading_and_bad_values_are_config_errors():
    from npuweave.errors import ConfigError, UnknownNameError

    p = get_scheduler("layerweaver", reading="npuweave", tie_scope="zero")
    assert (p.reading.memory_idle, p.reading.tie_scope) == ("excess", "zero")
    assert not p.kernel_ok
    with pytest.raises(ConfigError, match="memory_idle.*printed, excess"):
        get_scheduler("layerweaver", memory_idle="exact")
    with pytest.raises(UnknownNameError, match="reading 'thesis'.*printed"):
        get_scheduler("layerweaver", reading="thesis")


READING_OPTS = st.fixed_dictionaries({
    "memory_idle": st.sampled_from(["printed", "excess"]),
    "compute_idle": st.sampled_from(["printed", "exact"]),
    "starvation": st.sampled_from(["caused", "incurred"]),
    "tie_scope": st.sampled_from(["zero", "all"]),
})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 150), st.floats(0.0, 5.0)), min_size=1,
                         max_size=5), min_size=2, max_size=3),
       st.floats(1.0, 50.0), st.integers(1, 3), READING_OPTS)
def test_every_reading_keeps_predicted_equal_to_simulated(units, bw, requests, opts):
    from npuweave.sim.streams import run_tenants

    ts = [make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], 100)
          for k, us in enumerate(units)]
    s = plan("layerweaver", ts, 100, bw, requests, failsafe=False, **opts)
    r = run_tenants(ts, 100, bw, "layerweaver", requests, failsafe=False, fast=False, **opts)
    pe = {(iv.tenant, iv.request, iv.unit): (iv.start_s, iv.end_s)
          for iv in r.intervals if iv.resource == "PE"}
    assert len(pe) == len(s.order)
    for (t, q, i), cs, ce in zip(s.order, s.compute_start_s, s.compute_end_s, strict=True):
        assert pe[ts[t].label, q, ts[t].units[i]] == (cs, ce)
