"""Every zoo model on every preset: each model's time is at least the roofline's, per layer."""

from __future__ import annotations

import pytest

from npuweave.cost import profile
from npuweave.hardware import preset, preset_names
from npuweave.workload import load_layers, zoo_names


@pytest.fixture(scope="module")
def zoo():
    return [(name, load_layers(name)) for name in zoo_names()]


@pytest.mark.parametrize("npu_name", preset_names())
@pytest.mark.parametrize("batch", [1, 16])
def test_every_model_above_roofline(zoo, npu_name, batch):
    hw = preset(npu_name)
    for name, layers in zoo:
        bound = profile(layers, hw, batch, model="roofline")
        for model in ("systolic-ws", "prema"):
            costs = profile(layers, hw, batch, model=model)
            for layer, c, b in zip(layers, costs, bound, strict=True):
                assert c.time_s >= b.time_s * (1 - 1e-12), (name, model, layer.name)
                assert 0.0 <= c.utilization <= 1.0, (name, model, layer.name)
