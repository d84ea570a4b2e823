"""``reproduce_layerweaver(cost_model=..., seq_len=...)``: values reach the runs and the rows."""

import pytest

import npuweave.sim
import npuweave.sim.tenants
from npuweave.cost import cost_models, profile
from npuweave.errors import ConfigError, UnknownNameError
from npuweave.experiments import model_spec, reproduce_layerweaver
from npuweave.experiments.layerweaver import pair_tenants
from npuweave.hardware import preset
from npuweave.workload import load_layers, zoo

FAST = {"scenarios": ["single-batch"], "schedulers": ["sequential", "layerweaver"],
        "requests": 2}


@pytest.fixture
def spy(monkeypatch):
    """Record the models and cost model with which the runs' streams are costed
    (``tenants_for``, once per pair: ``layerweaver.pair_tenants``), then cost them for real."""
    calls = []
    real = npuweave.sim.tenants.tenants_for

    def recording(models, npu, batch, cost_model="systolic-ws"):
        calls.append((list(models), cost_model))
        return real(models, npu, batch, cost_model)

    monkeypatch.setattr(npuweave.sim.tenants, "tenants_for", recording)
    pair_tenants.cache_clear()  # costed once per process: make this test's runs cost again
    return calls


def test_model_spec_touches_transformers_only():
    assert model_spec("BB", 32) == "bert-base:seq_len=32"
    assert model_spec("BL", 7) == "bert-large:seq_len=7"
    assert model_spec("XL", 64) == "xlnet:seq_len=64"
    assert model_spec("NCF", 32) == "ncf" and model_spec("RN", 32) == "resnet50"
    assert model_spec("BB") == "bert-base"


@pytest.mark.parametrize("cost_model", sorted(cost_models()))
def test_cost_model_and_seq_len_reach_runs_and_rows(spy, cost_model):
    rows = reproduce_layerweaver("RN+BB", cost_model=cost_model, seq_len=17, **FAST)
    assert {(tuple(m), c) for m, c in spy} == {(("resnet50", "bert-base:seq_len=17"), cost_model)}
    assert [r["scheduler"] for r in rows] == ["sequential", "layerweaver"]
    assert all(r["cost_model"] == cost_model and r["seq_len"] == 17 for r in rows)


def test_thesis_config_is_the_default(spy):
    rows = reproduce_layerweaver("MN+XL", **FAST)
    assert {(tuple(m), c) for m, c in spy} == {(("mobilenetv2", "xlnet:seq_len=32"), "maestro")}
    assert all(r["cost_model"] == "maestro" and r["seq_len"] == 32 for r in rows)


def test_systolic_config_keeps_the_zoos_seq_len_and_ncf_pairs_have_none(spy):
    rows = reproduce_layerweaver("MN+XL,MN+NCF", config="systolic", **FAST)
    assert all(c == "systolic-ws" for _, c in spy)
    assert ["mobilenetv2", "xlnet"] in [m for m, _ in spy]  # no inline parameters
    by_pair = {r["pair"]: r["seq_len"] for r in rows}
    assert by_pair == {"MN+XL": zoo.defaults("xlnet")["seq_len"], "MN+NCF": None}


def test_seq_len_changes_the_work():
    short, default = (reproduce_layerweaver("RN+BB", seq_len=s, **FAST) for s in (8, 64))
    assert short[0]["stp"] != default[0]["stp"]


def test_unknown_cost_model_is_the_registrys_error():
    with pytest.raises(UnknownNameError, match="'nope'.*systolic-ws-db"):
        reproduce_layerweaver("RN+BB", cost_model="nope", **FAST)


@pytest.mark.parametrize("seq_len", [0, -3, 2.5, True, "32"])
def test_bad_seq_len_is_a_config_error(seq_len):
    with pytest.raises(ConfigError, match="seq_len"):
        reproduce_layerweaver("RN+BB", seq_len=seq_len, **FAST)


def _compute_bound(spec: str, npu, cost_model: str) -> bool:
    """Layerweaver's classification: total compute time >= total weight-fetch time."""
    total = sum(profile(load_layers(spec), npu, 1, model=cost_model))
    return total.compute_s >= total.weight_bytes / npu.dram_bw


def test_layerweaver_beats_sequential_on_a_heterogeneous_pair():
    # Configuration (d) of docs/REPRODUCTION.md. Under roofline a 32-token BERT-base does
    # about 32 op per weight byte, far below memory-centric's ridge (102 op/B), so it is
    # memory-bound, while ResNet-50 is compute-bound. With one tenant on each side the
    # failsafe does not apply, and Layerweaver hides BB's weight fetches under RN's
    # computation (and RN's computation under BB's fetches). Sequential serves one request
    # at a time and leaves one resource mostly idle during each, so on such a pair a
    # correct Layerweaver must get more work done per second: higher STP.
    npu = preset("memory-centric")
    assert _compute_bound("resnet50", npu, "roofline")
    assert not _compute_bound("bert-base:seq_len=32", npu, "roofline")
    rows = reproduce_layerweaver("RN+BB", cost_model="roofline", seq_len=32, **FAST)
    stp = {r["scheduler"]: r["stp"] for r in rows}
    lw = next(r for r in rows if r["scheduler"] == "layerweaver")
    assert "failsafe" not in lw["notes"]
    assert stp["layerweaver"] > stp["sequential"]
