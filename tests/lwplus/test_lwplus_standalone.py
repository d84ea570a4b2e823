"""Remaining-standalone-time estimates: approx suffix sums and the precise replay."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import ConfigError
from npuweave.schedule.base import Tenant
from npuweave.schedule.standalone import (
    Estimator,
    approx_suffix,
    approx_table,
    replay_alone,
    standalone_mode,
)
from npuweave.sim.streams import run_tenants

units = st.lists(st.tuples(st.floats(0.0, 5.0), st.integers(0, 60)), min_size=1, max_size=12)


def _tenant(us: list[tuple[float, int]]) -> Tenant:
    return Tenant("m", tuple(f"L{i}" for i in range(len(us))), tuple(c for c, _ in us),
                  tuple(s for _, s in us))


def test_approx_hand_worked() -> None:
    # bw 10 B/s: fetch times 1, 3, 0.5 s; max(compute, fetch) = 2, 3, 4
    t = Tenant("m", ("a", "b", "c"), (2.0, 1.0, 4.0), (10, 30, 5))
    assert approx_table(t, 10.0) == (9.0, 7.0, 4.0, 0.0)


@settings(max_examples=300, deadline=None)
@given(units, st.floats(1.0, 100.0))
def test_suffix_sums_equal_direct_sum(us: list[tuple[float, int]], bw: float) -> None:
    t = _tenant(us)
    table = approx_table(t, bw)
    assert len(table) == len(us) + 1 and table[-1] == 0.0
    for i in range(len(us) + 1):
        direct = sum(max(c, s / bw) for c, s in us[i:])
        assert table[i] == pytest.approx(direct, rel=1e-12, abs=1e-15)


@settings(max_examples=300, deadline=None)
@given(units, st.integers(0, 12))
def test_precise_equals_standalone_replay_on_the_engine(us: list[tuple[float, int]],
                                                         pos: int) -> None:
    """The precise estimate equals the engine running the remaining units alone, cold."""
    pos = min(pos, len(us) - 1)
    t = _tenant(us)
    rest = _tenant(us[pos:])
    engine = run_tenants([rest], 64, 10.0, "sequential", requests=1).makespan_s
    # equal up to rounding: the serving engine of the core adds a stalled fetch's parts in
    # another order than ScheduleMemFetch (1 ulp apart on some cases; see notes/issue-11.md)
    assert replay_alone(t, pos, 64, 10.0) == pytest.approx(engine, rel=1e-12, abs=1e-15)


def test_precise_hand_worked_with_a_full_buffer() -> None:
    # buffer 40 B, 10 B/s. a: 30 B, 2 s; b: 30 B, 1 s.
    # fetch a 0-3; compute a 3-5. fetch b: 10 B free at 3 -> 3-4, then waits for a's 30 B
    # (freed at 5): 20 B 5-7; compute b 7-8.
    t = Tenant("m", ("a", "b"), (2.0, 1.0), (30, 30))
    assert replay_alone(t, 0, 40, 10.0) == 8.0
    assert replay_alone(t, 1, 40, 10.0) == 4.0
    assert replay_alone(t, 2, 40, 10.0) == 0.0
    with pytest.raises(ValueError):
        replay_alone(t, 3, 40, 10.0)


def test_zoo_model_estimates_on_lwplus() -> None:
    from npuweave.hardware import preset
    from npuweave.sim.tenants import tenants_for

    npu = preset("lwplus")
    rn = tenants_for(["resnet50"], npu, 1)[0]
    full = run_tenants([rn], npu.weight_buffer, npu.dram_bw, "sequential", 1).makespan_s
    assert replay_alone(rn, 0, npu.weight_buffer, npu.dram_bw) == full
    tail = len(rn.units) - 5
    rest = Tenant("r", rn.units[tail:], rn.compute_s[tail:], rn.weight_bytes[tail:])
    assert replay_alone(rn, tail, npu.weight_buffer, npu.dram_bw) == run_tenants(
        [rest], npu.weight_buffer, npu.dram_bw, "sequential", 1).makespan_s


def test_estimator_modes_and_counts() -> None:
    comp, size = [2.0, 1.0], [10, 30]
    ap = Estimator("approx", 100, 10.0)
    pr = Estimator("precise", 100, 10.0)
    assert ap.remaining(comp, size, 0) == 5.0  # max(2, 1) + max(1, 3)
    assert pr.remaining(comp, size, 0) == 5.0  # fetch a 0-1, b 1-4; compute 1-3, 4-5
    assert pr.remaining(comp, size, 1) == 4.0  # fetch b 0-3, compute 3-4
    assert ap.calls == 1 and pr.calls == 2
    other = [4.0, 1.0]  # another list (another batch size): its own table
    assert ap.remaining(other, size, 0) == 7.0


def test_unknown_mode_names_the_option() -> None:
    with pytest.raises(ConfigError, match="--standalone"):
        standalone_mode("exact")


def test_approx_suffix_rejects_mismatched_lists() -> None:
    assert approx_suffix([], []) == (0.0,)
    with pytest.raises(ValueError):
        approx_suffix([1.0], [])


@settings(max_examples=300, deadline=None)
@given(units, st.integers(0, 12))
def test_no_estimate_exceeds_the_serial_bound(us: list[tuple[float, int]], pos: int) -> None:
    pos = min(pos, len(us))
    comp, size = [c for c, _ in us], [s for _, s in us]
    for mode in ("approx", "precise"):
        est = Estimator(mode, 64, 10.0)
        bound = est.serial_bound(comp, size, pos)
        assert bound == pytest.approx(sum(c + s / 10.0 for c, s in us[pos:]), rel=1e-12)
        assert est.remaining(comp, size, pos) <= bound * (1 + 1e-12) + 1e-15
