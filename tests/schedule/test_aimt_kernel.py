"""AI-MT's compiled loop (``npuweave.schedule.aimt_kernel``) against the Python ``select``
loop: the same decisions, floats bit for bit, the same generator state and threshold box
afterwards, on random instances and on every zoo pair of the Layerweaver reproduction.

The random draws are checked against CPython's own ``random`` module (an independent
implementation). Without numba the loop runs as plain Python and the same checks apply.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_sched_kernel import BUF, build
from test_sched_kernel import instance as lw_instance

from npuweave.schedule import Board, make_tenant
from npuweave.schedule.aimt import AIMT
from npuweave.schedule.aimt_kernel import randbelow
from npuweave.schedule.fetchparts import fetch_parts
from npuweave.schedule.plan import plan_arrays, plan_using, policy_tenants, start_streams

# Layerweaver's kernel instances (ties, starvation, tiles, zero-byte and zero-second units),
# with AI-MT's options drawn beside them
instance = st.tuples(lw_instance, st.fixed_dictionaries({
    "mem": st.sampled_from([0.0, 1 / 32, 0.1, 0.25, 0.5, 1.0]),
    "dist": st.sampled_from([0.0, 0.01, 0.05, 0.2, 1.0, 5.0]),
    "merge": st.sampled_from([1 / 8, 0.3, 1.0]),
    "seed": st.integers(0, 5),
})).map(lambda both: {**both[0], **both[1]})


def run(path, ts, bw, requests, window, **opts):
    """``plan_arrays`` on ``path`` with its columns as exact lists, and the policy after."""
    pol = AIMT(**opts)
    board = Board(policy_tenants(pol, ts, BUF, bw), BUF, bw)
    start_streams(board, pol, requests, window)
    cols = plan_arrays(pol, board, requests, window, path)
    return [c.tolist() for c in cols[:3]] + [[x.hex() for x in c.tolist()] for c in cols[3:]], pol


def bits(policy):
    return policy.rng.getstate(), [float(x) for x in policy.box]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance)
def test_compiled_loop_equals_python_select_bit_for_bit(inst):
    ts = build(inst)
    # with a time window, a stream without work would re-issue forever
    assume(inst["window"] is None or all(t.total_compute_s + t.total_weight_bytes > 0
                                         for t in ts))
    args = (ts, inst["bw"], inst["requests"], inst["window"])
    opts = {k: inst[k] for k in ("mem", "dist", "merge", "seed")}
    ref, ref_pol = run("python", *args, **opts)
    fast, fast_pol = run("kernel", *args, **opts)
    assert fast == ref
    assert bits(fast_pol) == bits(ref_pol)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance)
def test_compiled_loop_resumes_when_its_arrays_fill(inst):
    """With room for one decision the loop stops whenever its outputs or its in-flight
    arrays are full and ``loop.drive`` grows them and calls again: the same rows, floats,
    generator and box as the Python loop."""
    from npuweave.schedule.closed import run_closed

    ts = build(inst)
    assume(inst["window"] is None or all(t.total_compute_s + t.total_weight_bytes > 0
                                         for t in ts))
    opts = {k: inst[k] for k in ("mem", "dist", "merge", "seed")}
    ref, ref_pol = run("python", ts, inst["bw"], inst["requests"], inst["window"], **opts)
    pol = AIMT(**opts)
    board = Board(policy_tenants(pol, ts, BUF, inst["bw"]), BUF, inst["bw"])
    start_streams(board, pol, inst["requests"], inst["window"])
    cols = run_closed(pol, board, inst["requests"], inst["window"], 1)
    fast = [c.tolist() for c in cols[:3]] + [[x.hex() for x in c.tolist()] for c in cols[3:]]
    assert fast == ref
    assert bits(pol) == bits(ref_pol)


def test_plan_kernel_path_gives_the_python_schedule_on_long_runs():
    # 300 requests: the in-flight arrays slide and grow; the random rule draws thousands of
    # times from a generator that refills its 624 words many times over
    cnn = make_tenant("cnn", [4.0, 1.0, 0.2] * 3, [10, 30, 5] * 3, 100)
    nlp = make_tenant("nlp", [0.5, 0.1] * 4, [40, 60] * 4, 100)
    for reqs in (1, 10, 300):
        args = ("aimt", [cnn, nlp], 100, 10.0, reqs)
        ref = plan_using("python", *args, mem=0.25, dist=0.05, merge=0.25, seed=3)
        assert plan_using("kernel", *args, mem=0.25, dist=0.05, merge=0.25, seed=3) == ref


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 1000, 2**31, 2**32 - 1])
def test_randbelow_draws_as_cpython_randrange(n):
    # 2,000 draws per n cross several refills of the 624-word state
    for seed in (0, 1, 12345):
        ref = random.Random(seed)
        version, words, gauss = ref.getstate()
        mt = np.array(words, np.int64)
        want = [ref.randrange(n) for _ in range(2000)]
        assert [int(randbelow(mt, n)) for _ in range(2000)] == want
        assert tuple(int(x) for x in mt) == ref.getstate()[1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance, st.sampled_from([0.0, 1 / 32, 0.1, 0.25, 0.5, 1.0]),
       st.sampled_from([0.0, 0.01, 0.05, 0.2, 1.0, 5.0]))
def test_a_setting_inside_the_box_makes_the_identical_schedule(inst, mem2, dist2):
    ts = build(inst)
    assume(inst["window"] is None)
    opts = {k: inst[k] for k in ("mem", "dist", "merge", "seed")}
    args = (ts, inst["bw"], inst["requests"], None)
    first, pol = run("python", *args, **opts)
    assert pol.same_run(pol, BUF, inst["bw"])  # a run lies inside its own box
    other = AIMT(**{**opts, "mem": mem2, "dist": dist2})
    if pol.same_run(other, BUF, inst["bw"]):
        assert run("python", *args, **{**opts, "mem": mem2, "dist": dist2})[0] == first
    assert not pol.same_run(AIMT(**{**opts, "seed": inst["seed"] + 1}), BUF, inst["bw"])


def test_box_on_a_hand_worked_pair():
    # buffer 100 B at 10 B/s (fill 10 s). cnn: 4 s / 10 B; nlp: 0.5 s / 40 B; one request
    # each, whole layers (merge 1). mem 0, dist 0: neither threshold rule fires. The only
    # pick between two candidates is the first (free 100 B, distance 0 s): it bounds the
    # memory threshold by 100 B and the distance threshold by 0 s from above, nothing from
    # below; the second pick has one candidate and tests no threshold.
    cnn = make_tenant("cnn", [4.0], [10], 100)
    nlp = make_tenant("nlp", [0.5], [40], 100)
    _, pol = run("python", [cnn, nlp], 10.0, 1, None, mem=0.0, dist=0.0, merge=1.0)
    assert pol.box[1] == 100 and pol.box[3] == 0.0
    assert pol.box[0] == -np.inf and pol.box[2] == -np.inf
    assert pol.same_run(AIMT(mem=1.0, dist=0.0, merge=1.0), BUF, 10.0)  # 100 B <= 100 B
    assert not pol.same_run(AIMT(mem=0.0, dist=0.01, merge=1.0), BUF, 10.0)  # 0.1 s > 0 s


def zoo_pairs():
    from npuweave.experiments.layerweaver import all_pairs

    return all_pairs()


@pytest.mark.parametrize("scenario", ["single-batch", "multi-batch"])
def test_compiled_loop_equals_python_on_every_zoo_pair(scenario):
    from npuweave.experiments.layerweaver import SCENARIOS, Physics, pair_tenants
    from npuweave.hardware import preset

    phys = Physics("maestro", 32)
    npu = preset(SCENARIOS[scenario].npu)
    buf, bw = npu.weight_buffer, npu.dram_bw
    for k, pair in enumerate(zoo_pairs()):
        ts = pair_tenants(pair, scenario, phys)
        opts = {"mem": (0.0, 0.5, 1 / 16)[k % 3], "dist": (0.01, 0.05, 0.0)[k % 3], "seed": k}
        pols = [AIMT(**opts) for _ in range(2)]
        cols = []
        for pol, path in zip(pols, ("python", "kernel")):
            board = Board(policy_tenants(pol, ts, buf, bw), buf, bw)
            start_streams(board, pol, 3, None)
            cols.append([c.tolist() for c in plan_arrays(pol, board, 3, None, path)])
        assert cols[0] == cols[1], pair
        assert bits(pols[0]) == bits(pols[1]), pair
        # never more than the buffer: every replayed fetch ends where the plan said
        t, _, i, fs, fe, _, ce = (np.array(c) for c in cols[1])
        units = policy_tenants(pols[1], ts, buf, bw)
        size = np.array([units[a].weight_bytes[b] for a, b in zip(t, i)], np.int64)
        assert fetch_parts(size, fs, fe, ce, buf, bw) is not None, pair
