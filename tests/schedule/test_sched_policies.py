"""Baselines, AI-MT-like band policy, tiling and the registry."""

from __future__ import annotations

import pytest
from sched_helpers import board

from npuweave.errors import ConfigError, InfeasibleError, UnknownNameError
from npuweave.schedule import get_scheduler, make_tenant, plan, schedulers, tile

CNN = make_tenant("cnn", [4.0] * 3, [10] * 3, 100)  # compute-intensive: 12 s vs 3 s
NLP = make_tenant("nlp", [0.5] * 2, [40] * 2, 100)  # memory-intensive: 1 s vs 8 s


def firsts(s):
    return [(t, r) for t, r, i in s.order if i == 0]


def test_registry_lists_every_policy_with_a_description():
    names = schedulers()
    assert set(names) == {"layerweaver", "sequential", "compute-only", "memory-only", "fair",
                          "aimt", "aimt-fetchahead", "random", "layerweaver-plus"}
    assert all(isinstance(d, str) and d for d in names.values())


def test_unknown_scheduler_lists_valid_names():
    with pytest.raises(UnknownNameError, match="unknown scheduler 'lw'.*layerweaver.*sequential"):
        get_scheduler("lw")


def test_unknown_option_names_valid_ones():
    with pytest.raises(ConfigError, match="no option 'lo'.*high, low, seed"):
        get_scheduler("aimt-fetchahead", lo=0.1)
    with pytest.raises(ConfigError, match="no option 'low'.*dist, mem, merge, seed"):
        get_scheduler("aimt", low=0.1)


def test_sequential_runs_whole_requests_first_come_first_served():
    s = plan("sequential", [CNN, NLP], 100, 10.0, requests=2)
    # cnn0 and nlp0 arrive at 0 (cnn first by index); cnn1 arrives when cnn0 ends, before nlp0
    # ends, so it precedes nlp1.
    assert firsts(s) == [(0, 0), (1, 0), (0, 1), (1, 1)]
    runs = [t for t, _, _ in s.order]
    assert runs == [0, 0, 0, 1, 1, 0, 0, 0, 1, 1]


def test_fair_gives_equal_time_not_equal_requests():
    # cnn's request takes 12 s of service, nlp's 8 s: after cnn0 (12) and nlp0 (8), nlp is
    # behind, so nlp1 (16) goes before cnn1 (24); then cnn1.
    s = plan("fair", [CNN, NLP], 100, 10.0, requests=2)
    assert firsts(s) == [(0, 0), (1, 0), (1, 1), (0, 1)]


def test_compute_only_and_memory_only_serve_one_kind():
    c = plan("compute-only", [CNN, NLP], 100, 10.0, requests=2)
    m = plan("memory-only", [CNN, NLP], 100, 10.0, requests=2)
    assert {t for t, _, _ in c.order} == {0} and {t for t, _, _ in m.order} == {1}
    assert any("nlp is memory-intensive" in n for n in c.notes)
    nothing = plan("memory-only", [CNN], 100, 10.0, requests=1)
    assert nothing.order == () and "nothing ran" in nothing.notes[0]


def test_aimt_fetchahead_band_rules():
    p = get_scheduler("aimt-fetchahead", low=0.1, high=0.5)  # band 1 s .. 5 s on a 10 s fill time
    # distance 10 - 0 = 10 > 5: least compute time -> T1 (0.5 s)
    b = board([[(10, 4.0)], [(40, 0.5)]], state=(0.0, 10.0, [(10, 10.0)]))
    p.start(b)
    assert p.select(b) == 1
    # distance 0 < 1: the unit that grows the distance most (comp - fetch): T0 4 - 1 = 3
    b = board([[(10, 4.0)], [(40, 0.5)]])
    p.start(b)
    assert p.select(b) == 0


def test_aimt_fetchahead_random_choice_is_seeded():
    a = make_tenant("a", [1.0] * 30, [10] * 30, 1000)
    c = make_tenant("c", [1.0] * 30, [10] * 30, 1000)

    def order(seed):
        # band 0 .. 10 fill times: always inside, always random
        return plan("aimt-fetchahead", [a, c], 1000, 10.0, low=0.0, high=10.0,
                    seed=seed).order

    assert order(1) == order(1) and order(1) != order(2)


def test_aimt_fetchahead_rejects_bad_thresholds():
    with pytest.raises(ConfigError, match='"low" < "high"'):
        get_scheduler("aimt-fetchahead", low=0.5, high=0.2)


def test_tiling_rule():
    # 250 B on a 100 B buffer: tiles of at most 50 B -> ceil(250 / 50) = 5 tiles of 50 B,
    # each with 1/5 of the compute
    units = tile("fc", 1.0, 250, 100)
    assert [u[2] for u in units] == [50] * 5
    assert sum(u[1] for u in units) == pytest.approx(1.0)
    # 101 B: ceil(101 / 50) = 3 tiles, 34 + 34 + 33
    assert [u[2] for u in tile("fc", 1.0, 101, 100)] == [34, 34, 33]
    assert tile("fc", 1.0, 100, 100) == [("fc", 1.0, 100)]


def test_unit_that_cannot_fit_even_after_tiling_names_the_layer():
    with pytest.raises(InfeasibleError, match="layer 'embed'"):
        tile("embed", 1.0, 10_000, 100, min_tile_bytes=64)  # a tile (50 B) < 64 B


def test_tiled_tenant_schedules_every_tile():
    t = make_tenant("big", [2.0], [250], 100)
    s = plan("layerweaver", [t], 100, 10.0, requests=1)
    assert [i for _, _, i in s.order] == [0, 1, 2, 3, 4]
