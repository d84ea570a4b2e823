"""Issue 4's tie-in: a libnumber configuration file sets each layer's weight width."""

import pytest

from npuweave.cost import layer_cost, profile
from npuweave.hardware import preset
from npuweave.numbers import parse_config
from npuweave.workload import load_layers


@pytest.mark.parametrize("model", ["systolic-ws", "systolic-ws-db", "prema", "roofline"])
def test_halving_weight_width_halves_weight_bytes(model):
    layers = load_layers("resnet50")
    conv, fc = layers[1], layers[-1]
    npu = preset("memory-centric")
    wide = parse_config(f"{conv.name}.weight FIXED 16 8\n{fc.name}.weight FLOAT 16\n",
                        register=False)
    narrow = parse_config(f"{conv.name}.weight FIXED 8 4\n{fc.name}.weight FLOAT 8\n",
                          register=False)
    for layer in (conv, fc):
        w = layer_cost(layer, npu, formats=wide, model=model)
        n = layer_cost(layer, npu, formats=narrow, model=model)
        # weight elements x 16 bits / 8 = bytes; at 8 bits exactly half (element counts are even)
        assert w.weight_bytes == layer.weight_elems * 2
        assert n.weight_bytes * 2 == w.weight_bytes
        assert n.memory_s < w.memory_s


def test_layers_missing_from_the_config_keep_the_npu_precision():
    layers = load_layers("resnet50")
    npu = preset("prema")
    cfg = parse_config(f"{layers[0].name}.weight EXP 4\n", register=False)
    costs = profile(layers, npu, formats=cfg)
    assert costs[0].weight_bytes == -(-layers[0].weight_elems * 4 // 8)
    assert [c.weight_bytes for c in costs[1:]] == [layer.weight_elems * 2 for layer in layers[1:]]
