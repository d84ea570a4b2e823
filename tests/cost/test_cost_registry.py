"""The front door: model registry, batch validation, profile, unschedulable layers."""

from __future__ import annotations

import doctest
import importlib

import pytest
from cost_helpers import conv, gemm, npu, vector

from npuweave.cost import (
    LayerCost,
    cost_models,
    get_cost_model,
    layer_cost,
    profile,
    register_cost_model,
    unschedulable,
)
from npuweave.errors import ConfigError, UnknownNameError
from npuweave.hardware import preset
from npuweave.workload.layer import LayerKind


def test_registry_lists_the_six_models():
    models = cost_models()
    assert set(models) == {"systolic-ws", "systolic-ws-db", "prema", "roofline", "maestro",
                           "maestro-pooled"}
    assert all(isinstance(d, str) and d for d in models.values())


def test_unknown_model_names_the_valid_ones():
    with pytest.raises(UnknownNameError, match="unknown cost model 'timeloop'.*prema.*roofline"):
        layer_cost(gemm(4, 4, 4), npu(), model="timeloop")
    with pytest.raises(UnknownNameError):
        profile([], npu(), model="timeloop")


@pytest.mark.parametrize("batch", [0, -1, 1.5, True, "2"])
def test_bad_batch_is_a_config_error(batch):
    for call in (lambda: layer_cost(gemm(4, 4, 4), npu(), batch=batch),
                 lambda: profile([gemm(4, 4, 4)], npu(), batch=batch),
                 lambda: unschedulable([gemm(4, 4, 4)], npu(), batch)):
        with pytest.raises(ConfigError, match='"batch" must be an integer >= 1'):
            call()


def test_profile_is_layer_cost_per_layer_and_sums():
    layers = [conv(3, 16, 32, name="c1"), vector(100, 100), gemm(1, 256, 10, name="fc")]
    toy = npu()
    costs = profile(layers, toy, batch=2, model="prema")
    assert costs == [layer_cost(x, toy, batch=2, model="prema") for x in layers]
    total = sum(costs)
    assert isinstance(total, LayerCost)
    assert total.macs == 2 * sum(x.macs for x in layers)


def test_registered_model_is_used_by_name():
    def zero(layer, npu_, batch, bits):
        return LayerCost(macs=layer.macs * batch)

    register_cost_model("zero-test", zero, "test only")
    try:
        assert cost_models()["zero-test"] == "test only"
        assert get_cost_model("zero-test") is zero
        assert layer_cost(gemm(2, 2, 2), npu(), batch=3, model="zero-test").macs == 24
    finally:
        from npuweave.cost import registry

        registry._MODELS.pop("zero-test")


def _fc(elems: int, name: str = "big"):
    return gemm(1, 1, elems, name=name)


def test_unschedulable_reports_split_weights():
    mc = preset("memory-centric")  # 48 MiB weight buffer
    big = _fc(53_896_806)  # 107,793,612 bytes at 16 bit = 102.8 MiB -> ceil(102.8 / 48) = 3
    small = _fc(1000, name="small")
    assert unschedulable([small, big], mc) == [
        ("big", "weights 102.8 MiB > weight buffer 48 MiB: split into 3 weight tiles")]
    # at 8 bit: 51.4 MiB, still 2 tiles; at 4 bit 25.7 MiB fits
    assert unschedulable([big], mc, 1, 8) == [
        ("big", "weights 51.4 MiB > weight buffer 48 MiB: split into 2 weight tiles")]
    assert unschedulable([big], mc, 1, {"big.weight": 4}) == []
    # profiling still works for it
    assert layer_cost(big, mc).weight_bytes == 107_793_612


def test_unschedulable_recurrent_and_gathers():
    toy = npu(weight_buffer=1000)
    rnn = gemm(1, 50, 30, count=5, kind=LayerKind.RECURRENT, weights=1500, name="lstm")
    assert unschedulable([rnn], toy) == [
        ("lstm", "weights 2.9 KiB > weight buffer 1000 B: split into 3 weight tiles, "
                 "fetched again at every time step")]
    from npuweave.workload.layer import Layer

    emb = Layer("emb", LayerKind.EMBEDDING, ("Gather",), None, 0, 0, 10**6, 1, 64,
                gather_elems=64)
    assert unschedulable([emb], toy) == []


@pytest.mark.parametrize("module", ["npuweave.cost", "npuweave.cost.systolic",
                                    "npuweave.cost.prema", "npuweave.cost.roofline",
                                    "npuweave.cost.traffic", "npuweave.cost.registry"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
