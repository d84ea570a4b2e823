"""PREMA workloads (seeded draws) and Eq. 1-2 metrics against hand calculations."""

import numpy as np
import pytest

from npuweave.errors import ConfigError
from npuweave.experiments.prema_workload import draw_tasks
from npuweave.hardware import preset
from npuweave.metrics.prema import antt, fairness, ntt, sla_violation, stp, tail_by_model
from npuweave.workload.seqlen import MIX

NPU = preset("prema")


def test_draw_is_seeded_and_within_its_window():
    a = draw_tasks(NPU, 8, seed=4, run=2)
    assert a == draw_tasks(NPU, 8, seed=4, run=2)
    assert a != draw_tasks(NPU, 8, seed=4, run=3)
    window = sum(t.iso_s for t in a)
    assert all(0 <= t.dispatch_s <= window for t in a)
    assert all(t.name in MIX and t.batch in (1, 4, 16) and t.level in (0, 1, 2) for t in a)


def test_draws_cover_the_mix_uniformly():
    tasks = [t for r in range(60) for t in draw_tasks(NPU, 8, seed=0, run=r, batches=(1,))]
    names = {t.name for t in tasks}
    assert names == set(MIX)
    levels = np.bincount([t.level for t in tasks], minlength=3) / len(tasks)
    assert np.all(np.abs(levels - 1 / 3) < 0.08)


def test_rnn_estimates_use_the_table_and_cnn_estimates_are_exact():
    tasks = [t for r in range(20) for t in draw_tasks(NPU, 8, seed=1, run=r)]
    for t in tasks:
        if t.name.startswith("cnn"):
            assert t.est_s == t.iso_s
        assert t.iso_s == pytest.approx(sum(t.layer_times(NPU)), rel=1e-12)
    assert any(t.est_s != t.iso_s for t in tasks if t.name in ("rnn-mt1", "rnn-mt2"))


def test_permutation_draw_gives_every_model_once_and_keeps_the_rest_of_the_draw():
    for run in range(5):
        perm = draw_tasks(NPU, 8, seed=0, run=run, draw="permutation")
        assert sorted(t.name for t in perm) == sorted(MIX)
        assert all(t.batch in (1, 4, 16) and t.level in (0, 1, 2) for t in perm)
    # the default draw is with replacement: some run repeats a model
    assert any(len({t.name for t in draw_tasks(NPU, 8, 0, r)}) < 8 for r in range(5))


@pytest.mark.parametrize("kwargs, match", [
    ({"n": 0}, "--tasks"), ({"n": 2, "batches": (0,)}, "batch"),
    ({"n": 2, "span": float("inf")}, "span"), ({"n": 2, "draw": "bogus"}, "draw"),
    ({"n": 9, "draw": "permutation"}, "at most 8"), ({"n": 2, "sa_cap": "45ms"}, "sa_cap"),
])
def test_bad_workloads(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        draw_tasks(NPU, **kwargs)


def test_eq1_eq2_by_hand():
    """Three tasks: latencies 2, 3, 10 ms; isolated 1, 3, 2 ms -> NTT 2, 1, 5.

    ANTT = 8/3; STP = 1/2 + 1 + 1/5 = 1.7.
    Priorities 1, 3, 9 (sum 13): PP = 0.5*13/1 = 6.5, 1*13/3 = 4.333, 0.2*13/9 = 0.2889;
    fairness = 0.2889 / 6.5 = 0.04444 (= 0.2/9 / 0.5).
    """
    n = ntt([0.0, 1e-3, 2e-3], [2e-3, 4e-3, 12e-3], [1e-3, 3e-3, 2e-3])
    assert n.tolist() == pytest.approx([2.0, 1.0, 5.0])
    assert antt(n) == pytest.approx(8 / 3)
    assert stp(n) == pytest.approx(1.7)
    assert fairness(n, [1, 3, 9]) == pytest.approx((0.2 / 9) / 0.5)
    assert sla_violation(n, [1, 2, 4, 5]).tolist() == pytest.approx([2 / 3, 1 / 3, 1 / 3, 0.0])
    tails = tail_by_model(n, ["a", "a", "b"], [True, True, False], q=50)
    assert tails == {"a": pytest.approx(1.5)}


def test_metric_bad_input():
    with pytest.raises(ConfigError, match="before"):
        ntt([1.0], [0.5], [1.0])
    with pytest.raises(ConfigError, match="length"):
        ntt([0.0], [1.0, 2.0], [1.0])
    with pytest.raises(ConfigError, match="priorities"):
        fairness([1.0], [0.0])


def test_rnn_sa_is_capped_at_the_longest_cnn_gn_task():
    """H6 (docs/REPRODUCTION.md): RNN-SA's longest batch-1 task fits within CNN-GN's batch-16
    time and one more token would not; checked against the cost model on both sides."""
    from npuweave.cost.predictor import isolated_time
    from npuweave.experiments.prema_workload import sa_max_input

    cap, top = sa_max_input(NPU), isolated_time("cnn-gn", NPU, 16)
    assert isolated_time("rnn-sa", NPU, 1, cap) <= top < isolated_time("rnn-sa", NPU, 1, cap + 1)
    sa = [t for r in range(40) for t in draw_tasks(NPU, 8, 0, r) if t.name == "rnn-sa"]
    assert sa and all(t.in_len <= cap and t.out_len == t.in_len for t in sa)
    full = [t for r in range(40) for t in draw_tasks(NPU, 8, 0, r, sa_cap="profile")
            if t.name == "rnn-sa"]
    assert any(t.in_len > cap for t in full)
