"""The reproduction's a-priori assumptions, the fluid bound, the executor and the sweeps."""

from __future__ import annotations

import pytest

from npuweave.errors import ConfigError, UnknownNameError
from npuweave.experiments import fluid_bound, reproduce_layerweaver, run_map
from npuweave.experiments.layerweaver import SCENARIOS, Physics, standalone
from npuweave.experiments.lw_setup import (
    CONFIGS,
    DERIVED_SEQ_LEN,
    get_config,
    ncf_tables,
    pick_seq_len,
    ridge,
    seq_len_range,
    seq_len_statements,
)
from npuweave.experiments.lw_sweeps import check_seq_lens, sweep_seq_len

FAST = {"scenarios": ["single-batch"], "schedulers": ["sequential", "layerweaver"],
        "requests": 2}


def test_fluid_bound_by_hand():
    """Model A: 1 s of PE, 0.25 s of DRAM per request, 1 s alone; B: 0.2 s PE, 1 s DRAM, 1 s
    alone. Both resources full: x_A + 0.2 x_B = 1 and 0.25 x_A + x_B = 1, so
    x_A = 0.8 / 0.95 and x_B = 0.75 / 0.95: STP 1.55 / 0.95 = 1.6316, above either alone (1)."""
    assert fluid_bound((1.0, 0.2), (0.25, 1.0), (1.0, 1.0)) == pytest.approx(1.55 / 0.95)


def test_fluid_bound_of_two_compute_bound_models_is_one():
    """Both PE-bound: the PE is the only constraint, STP can never pass 1."""
    assert fluid_bound((1.0, 2.0), (0.1, 0.2), (1.0, 2.0)) == pytest.approx(1.0)


def test_ridges_are_table_iv1s():
    # 2 * 16384 MACs * 700 MHz / 225 GB/s and 2 * 12 * 4096 * 927 MHz / 68 GB/s
    assert ridge("memory-centric") == pytest.approx(2 * 16384 * 700e6 / 225e9)
    assert ridge("compute-centric") == pytest.approx(2 * 12 * 4096 * 927e6 / 68e9)


def test_seq_len_derivation():
    """The seeds' statements hold from 7 to 76 tokens for all three transformers and fail just
    outside; the geometric centre sqrt(7 * 76) = 23.1 lies nearest (in log) to 32."""
    assert seq_len_range() == (7, 76)
    assert not seq_len_statements("bert-base", 6)["mc_b16_compute"]
    assert not seq_len_statements("xlnet", 77)["cc_b16_memory"]
    assert all(seq_len_statements(m, 32).values() for m in ("bert-base", "bert-large", "xlnet"))
    assert pick_seq_len(7, 76) == DERIVED_SEQ_LEN == CONFIGS["thesis"].seq_len == 32
    assert CONFIGS["thesis"].cost_model == "maestro"


def test_unknown_config_and_bad_ncf():
    with pytest.raises(UnknownNameError, match="'nope'.*systolic"):
        get_config("nope")
    with pytest.raises(ConfigError, match="ncf"):
        reproduce_layerweaver("RN+NCF", ncf="dense", **FAST)


def test_ncf_tables_fetches_whole_tables():
    _, costs = ncf_tables("memory-centric", 1, "maestro")
    # the four tables: (138493 + 26744) users/items x (64 + 128) columns x 2 bytes
    tables = (138_493 + 26_744) * (64 + 128) * 2
    mlp = (256 * 256 + 256) + (256 * 128 + 128) + (128 * 64 + 64) + (128 + 1)
    assert sum(c.weight_bytes for c in costs) == tables + 2 * mlp


def test_bound_is_at_least_every_run():
    rows = reproduce_layerweaver("RN+BB", **FAST)
    for r in rows:
        assert r["stp"] <= r["fluid_bound"] * 1.02  # the window's edges move STP by ~1%
        assert r["bound_share"] == pytest.approx(r["stp"] / r["fluid_bound"])
        assert r["max_slowdown"] >= 1.0 - 1e-9


def test_standalone_times_are_cached():
    phys = Physics("maestro", 32)
    standalone.cache_clear()
    first = standalone("RN", "single-batch", phys)
    assert standalone("RN", "single-batch", phys) == first
    assert standalone.cache_info().hits == 1 and "single-batch" in SCENARIOS


def _square(x: int) -> int:
    return x * x


def test_executor_keeps_order_and_calls_back():
    seen = []
    out = run_map(_square, [3, 1, 2], jobs=2, on_result=lambda x, r: seen.append((x, r)))
    assert out == [9, 1, 4] and sorted(seen) == [(1, 1), (2, 4), (3, 9)]
    with pytest.raises(ConfigError, match="jobs"):
        run_map(_square, [1], jobs=-1)


def test_jobs_give_the_same_rows_as_serial():
    kw = {"scenarios": ["single-batch", "multi-batch"], "requests": 2,
          "schedulers": ["fair", "aimt", "layerweaver"]}
    serial = reproduce_layerweaver("RN+BB,MN+NCF", jobs=1, **kw)
    pooled = reproduce_layerweaver("RN+BB,MN+NCF", jobs=2, **kw)
    assert serial == pooled


def test_seq_len_sweep_rows():
    rows = sweep_seq_len([8, 32], pairs="RN+BB", scenarios=["single-batch"],
                         schedulers=["compute-only", "memory-only", "fair", "layerweaver"],
                         requests=2)
    assert [(r["seq_len"], r["scenario"]) for r in rows] == [(8, "single-batch"),
                                                            (32, "single-batch")]
    single = reproduce_layerweaver("RN+BB", scenarios=["single-batch"], seq_len=8, requests=2,
                                   schedulers=["compute-only", "memory-only", "fair",
                                               "layerweaver"])
    from npuweave.experiments import headline

    assert rows[0]["stp_gain_vs_baselines"] == pytest.approx(
        headline(single)["single-batch"]["stp_gain_vs_baselines"])


@pytest.mark.parametrize("spec", ["8,x", "0", "", "4,-2"])
def test_bad_seq_len_sweep(spec):
    with pytest.raises(ConfigError, match="seq-len-sweep"):
        check_seq_lens(spec)


def test_a_run_that_did_nothing_still_gives_a_json_row():
    """Under systolic-ws both RN and BB are compute-bound: memory-only runs nothing."""
    import json

    rows = reproduce_layerweaver("RN+BB", config="systolic", scenarios=["single-batch"],
                                 schedulers=["memory-only"], requests=2)
    assert rows[0]["stp"] == 0.0 and rows[0]["max_slowdown"] is None
    assert json.loads(json.dumps(rows))[0]["pair"] == "RN+BB"
