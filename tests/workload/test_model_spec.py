"""Zoo specs with inline builder parameters: ``bert-base:seq_len=32``."""

import pytest

from npuweave.errors import ConfigError
from npuweave.workload import load_layers, parse_model_spec


def test_parse():
    assert parse_model_spec("lstm-translation:seq_len=20:out_len=None") == (
        "lstm-translation", {"seq_len": 20, "out_len": None})


def test_inline_params_change_the_model():
    short, default = load_layers("bert-base:seq_len=32"), load_layers("bert-base")
    # FC layers scale linearly with the sequence: the QKV projection of layer 0 is
    # seq x 768 x 2304 MACs, so 32 tokens give a quarter of 128 tokens' MACs.
    qkv = {layer.name: layer.macs for layer in short}["layer0/qkv"]
    assert qkv == 32 * 768 * 2304
    assert {layer.name: layer.macs for layer in default}["layer0/qkv"] == 4 * qkv


@pytest.mark.parametrize("spec", ["bert-base:seq_len", "bert-base:=3"])
def test_malformed(spec):
    with pytest.raises(ConfigError, match="key=value"):
        parse_model_spec(spec)
