"""The compiled Layerweaver kernel against the reference ``plan`` loop: same schedules, bit for bit.

Instances draw sizes and times from small grids so that ties (both tie-breaks), starvation
(all candidates causing compute idle / incurring memory idle), tiled units (sizes above the
100-byte buffer), zero-byte and zero-second units all occur often. Without numba the kernel
runs as plain Python and the same comparison applies.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from npuweave.schedule import Board, get_scheduler, make_tenant
from npuweave.schedule.plan import (
    KERNEL_COLD_MIN_DECISIONS,
    KERNEL_MIN_DECISIONS,
    choose_path,
    kernel_cache_warm,
    plan_using,
)

NPW = "npuweave"  # the reading the kernel implements

BUF = 100

unit = st.tuples(st.sampled_from([0, 1, 10, 20, 40, 50, 60, 90, 100, 150, 250]),
                 st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0, 5.0, 10.0, 0.3]))
instance = st.fixed_dictionaries({
    "tenants": st.lists(st.lists(unit, min_size=1, max_size=6), min_size=1, max_size=4),
    "bw": st.sampled_from([1.0, 10.0, 3.0, 7.5]),
    "requests": st.integers(1, 4),
    "window": st.one_of(st.none(), st.sampled_from([1.0, 15.0, 60.0])),
    "failsafe": st.booleans(),
})


def build(inst):
    return [make_tenant(f"T{k}", [c for _, c in us], [s for s, _ in us], BUF)
            for k, us in enumerate(inst["tenants"])]


def bits(schedule):
    """Everything a schedule says, with floats as their exact hex strings."""
    times = (schedule.fetch_start_s, schedule.fetch_end_s, schedule.compute_start_s,
             schedule.compute_end_s)
    return (schedule.order, [[x.hex() for x in col] for col in times], schedule.notes,
            schedule.tenants, schedule.scheduler)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance)
def test_kernel_reproduces_reference_schedule_bit_for_bit(inst):
    ts = build(inst)
    if inst["window"] is not None:  # a stream without work would re-issue forever
        assume(all(t.total_compute_s + t.total_weight_bytes > 0 for t in ts))
    args = (ts, BUF, inst["bw"], inst["requests"], inst["window"])
    ref = plan_using("python", "layerweaver", *args, failsafe=inst["failsafe"], reading=NPW)
    fast = plan_using("kernel", "layerweaver", *args, failsafe=inst["failsafe"], reading=NPW)
    assert bits(fast) == bits(ref)


def test_kernel_on_the_hand_worked_pair_and_long_runs():
    cnn = make_tenant("cnn", [4.0] * 4, [10] * 4, 100)
    nlp = make_tenant("nlp", [0.5] * 4, [40] * 4, 100)
    for reqs in (1, 10, 300):  # 300 requests: the in-flight arrays slide and grow
        args = ([cnn, nlp], 100, 10.0, reqs)
        assert bits(plan_using("kernel", "layerweaver", *args, reading=NPW)) == bits(
            plan_using("python", "layerweaver", *args, reading=NPW))


def test_auto_uses_kernel_only_for_long_layerweaver_runs():
    from npuweave.schedule import kernel

    ts = [make_tenant("a", [4.0] * 50, [10] * 50, 100), make_tenant("b", [0.5] * 50, [40] * 50,
                                                                      100)]
    lw = get_scheduler("layerweaver", reading=NPW)
    board = Board(ts, 100, 10.0)
    for t in range(2):
        board.issue(t, 0, 0.0)
    many = KERNEL_MIN_DECISIONS // 100 + 1
    numba = kernel.available()  # without numba Layerweaver always takes the plain kernel
    assert choose_path("auto", lw, board, 1, None) == ("python" if numba else "kernel")
    warm = kernel_cache_warm()  # a cold cache needs KERNEL_COLD_MIN_DECISIONS (9 s of JIT)
    assert choose_path("auto", lw, board, many, None) == ("python" if numba and not warm
                                                       else "kernel")
    lots = KERNEL_COLD_MIN_DECISIONS // 100 + 1
    assert choose_path("auto", lw, board, lots, None) == "kernel"
    # every policy with a loop code takes the loop by the same rule; others never do
    want = choose_path("auto", lw, board, many, None) if numba else "python"
    assert choose_path("auto", get_scheduler("sequential"), board, many, None) == want
    with pytest.raises(ValueError, match="runs policies with a loop code"):
        choose_path("kernel", get_scheduler("fair"), board, 1, None)
    printed = get_scheduler("layerweaver")  # the printed reading has its code too
    assert choose_path("auto", printed, board, many, None) == choose_path("auto", lw, board,
                                                                         many, None)
    mixed = get_scheduler("layerweaver", memory_idle="printed", reading=NPW)  # no named one
    assert choose_path("auto", mixed, board, lots, None) == "python"
    with pytest.raises(ValueError, match="runs policies with a loop code"):
        choose_path("kernel", mixed, board, 1, None)
    with pytest.raises(ValueError, match="path must be"):
        choose_path("numba", lw, board, 1, None)


def test_without_numba_layerweaver_takes_the_plain_kernel(monkeypatch):
    """Without numba "auto" runs Layerweaver's kernel as plain Python on lists (the same loop
    as the compiled one), not the policy loop; AI-MT keeps the policy loop."""
    from npuweave.schedule import jit, kernel

    monkeypatch.setattr(kernel, "available", lambda: False)
    monkeypatch.setattr(jit, "_COMPILED", [False])  # as if numba had failed to import
    ts = [make_tenant("a", [4.0, 1.0], [10, 60], 100), make_tenant("b", [0.5], [40], 100)]
    board = Board(ts, 100, 10.0)
    assert choose_path("auto", get_scheduler("layerweaver", reading=NPW), board, 1, None) == "kernel"
    assert choose_path("auto", get_scheduler("aimt"), board, 1, None) == "python"
    assert choose_path("auto", get_scheduler("layerweaver"), board, 1, None) == "kernel"
    args = (ts, 100, 10.0, 3)
    assert bits(plan_using("auto", "layerweaver", *args, reading=NPW)) == bits(
        plan_using("python", "layerweaver", *args, reading=NPW))


coded = st.sampled_from([("sequential", {}), ("layerweaver", {"reading": "printed"}),
                         ("layerweaver", {"reading": NPW}),
                         ("layerweaver-plus", {"reading": "printed"}),
                         ("layerweaver-plus", {"reading": NPW, "standalone": "precise"})])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance, coded)
def test_the_loop_reproduces_every_coded_policy(inst, policy):
    """Every policy that states a loop code (``LayerBase.loop_code``) makes the same
    schedule, bit for bit, in the loop (compiled where numba is) as in its Python ``select``
    (Layerweaver+ without deadlines: Mode 1 alone), with its decision counter alike."""
    ts = build(inst)
    if inst["window"] is not None:
        assume(all(t.total_compute_s + t.total_weight_bytes > 0 for t in ts))
    name, opts = policy
    if name == "layerweaver":
        opts = {**opts, "failsafe": inst["failsafe"]}
    args = (ts, BUF, inst["bw"], inst["requests"], inst["window"])
    ref_policy, fast_policy = get_scheduler(name, **opts), get_scheduler(name, **opts)
    ref = plan_using("python", ref_policy, *args)
    fast = plan_using("kernel", fast_policy, *args)
    assert bits(fast) == bits(ref)
    assert getattr(fast_policy, "decisions", 0) == getattr(ref_policy, "decisions", 0)


def test_kernel_runs_the_failsafe_of_any_reading():
    # both tenants memory-intensive: the failsafe (first come, first served) takes over and
    # no reading is involved, so the kernel serves the default ("printed") reading too
    ts = [make_tenant("a", [0.1, 0.2, 0.1], [40, 90, 10], 100),
          make_tenant("b", [0.3, 0.1], [70, 50], 100)]
    ref = plan_using("python", "layerweaver", ts, 100, 10.0, 4)
    assert ref.notes and "failsafe" in ref.notes[0]
    assert plan_using("kernel", "layerweaver", ts, 100, 10.0, 4) == ref


def test_loaded_kernels_pay_from_a_small_threshold():
    from npuweave.schedule import kernel
    from npuweave.schedule.plan import KERNEL_LOADED_MIN_DECISIONS, kernels_pay

    if not kernel.available():
        pytest.skip("numba is not installed")
    kernel.load()
    assert kernel.loaded()
    assert kernels_pay(KERNEL_LOADED_MIN_DECISIONS)
    assert not kernels_pay(KERNEL_LOADED_MIN_DECISIONS - 1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance, st.sampled_from([1, 1000]))
def test_kernel_resumes_when_its_arrays_fill(inst, cap):
    """With room for one decision the kernel stops whenever its outputs or its in-flight
    arrays are full; ``resume`` grows them and calls again: the same rows as ``plan``. The
    plain-Python run on lists (what runs without numba) gives the same rows too."""

    from npuweave.schedule.closed import run_closed
    from npuweave.schedule.plan import plan_arrays, start_streams

    ts = build(inst)
    if inst["window"] is not None:
        assume(all(t.total_compute_s + t.total_weight_bytes > 0 for t in ts))
    rows = []
    for run in ("python", "kernel", "lists"):
        policy = get_scheduler("layerweaver", failsafe=inst["failsafe"], reading=NPW)
        board = Board(ts, BUF, inst["bw"])
        start_streams(board, policy, inst["requests"], inst["window"])
        if run == "python":
            rows.append(plan_arrays(policy, board, inst["requests"], inst["window"], "python"))
        else:
            rows.append(run_closed(policy, board, inst["requests"], inst["window"], cap,
                                   plain=run == "lists"))
    for other in rows[1:]:
        assert len(other) == len(rows[0])
        assert all(a.dtype == b.dtype and [x.hex() for x in a.astype(float).tolist()]
                   == [x.hex() for x in b.astype(float).tolist()] for a, b in zip(rows[0], other))
