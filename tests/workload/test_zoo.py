"""Zoo registry, parameter validation and graph well-formedness for every model."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from npuweave.errors import ConfigError, UnknownNameError
from npuweave.workload import zoo, zoo_names
from npuweave.workload.graph import Graph
from npuweave.workload.zoo import stats

ALL = zoo.names()

# The paper abbreviations are fixed by the seeds (Layerweaver Fig. 3, PREMA Section III).
PAPER_ALIASES = {
    "IC": "inceptionv3", "MN": "mobilenetv2", "RN": "resnet50", "RX": "resnext50",
    "BB": "bert-base", "BL": "bert-large", "NCF": "ncf", "XL": "xlnet",
    "CNN-AN": "alexnet", "CNN-GN": "googlenet", "CNN-VN": "vgg16", "CNN-MN": "mobilenetv1",
    "RNN-SA": "lstm-sentiment", "RNN-MT": "lstm-translation", "RNN-ASR": "lstm-speech",
}


@pytest.fixture(scope="module")
def graphs() -> dict[str, Graph]:
    return {name: zoo.build(name) for name in ALL}


def test_zoo_has_every_model_the_issue_names():
    # resnet34 is the network of the published Gemini IR files; no paper names it; vit-base
    # is the network of SCALE-Sim v3's energy result (npuweave reproduce scalesim-v3-energy)
    assert set(PAPER_ALIASES.values()) == set(ALL) - {"resnet34", "vit-base"}
    assert zoo_names() == ALL


@pytest.mark.parametrize("alias,name", sorted(PAPER_ALIASES.items()))
def test_paper_aliases_resolve_in_any_case(alias, name):
    assert zoo.canonical(alias) == name
    assert zoo.canonical(alias.lower()) == name
    assert alias in zoo.aliases(name)


@pytest.mark.parametrize("spelling,name", [
    ("ResNet-50", "resnet50"), ("resnet_50", "resnet50"), ("BERT_base", "bert-base"),
    ("MobileNetV2", "mobilenetv2"), ("rnn_mt", "lstm-translation"), ("VGG16", "vgg16"),
])
def test_separators_and_case_are_ignored(spelling, name):
    assert zoo.canonical(spelling) == name


def test_unknown_model_lists_the_valid_names():
    with pytest.raises(UnknownNameError) as err:
        zoo.build("resnet51")
    msg = str(err.value)
    assert "resnet51" in msg and "resnet50" in msg and "RN" in msg


@pytest.mark.parametrize("name,params,needle", [
    ("bert-base", {"seq_len": 0}, "seq_len"),
    ("bert-base", {"seq_len": 513}, "seq_len"),
    ("bert-large", {"seq_len": -4}, "seq_len"),
    ("bert-base", {"seq_len": "128"}, "seq_len"),
    ("bert-base", {"seq_len": 128.0}, "seq_len"),
    ("bert-base", {"seq_len": True}, "seq_len"),
    ("xlnet", {"size": "huge"}, "size"),
    ("lstm-speech", {"seq_len": 100}, "multiple of 8"),
    ("lstm-translation", {"out_len": 0}, "out_len"),
    ("resnet50", {"seq_len": 128}, "seq_len"),
    ("bert-base", {"batch": 4}, "batch"),
])
def test_bad_parameters_raise_config_error_naming_the_parameter(name, params, needle):
    with pytest.raises(ConfigError) as err:
        zoo.build(name, **params)
    assert needle in str(err.value)
    assert zoo.canonical(name) in str(err.value)


def test_parameters_change_the_shapes():
    g = zoo.build("BB", seq_len=384)
    assert g.tensors["input_ids"].shape == (1, 384)
    assert g.meta["params"] == {"seq_len": 384}
    g = zoo.build("RNN-MT", seq_len=10, out_len=7)
    assert g.tensors["source_ids"].shape == (1, 10)
    assert g.tensors["target_ids"].shape == (1, 7)
    g = zoo.build("lstm-speech", seq_len=64)
    assert g.tensors["prev_chars"].shape == (1, 8)  # default out_len = seq_len // 8


def test_defaults_are_documented_per_model():
    assert zoo.defaults("resnet50") == {}
    assert zoo.defaults("BB") == {"seq_len": 128}
    assert zoo.defaults("XL") == {"seq_len": 128, "size": "large"}
    assert all(zoo.describe(n) for n in ALL)


def test_builds_are_deterministic_and_independent():
    a, b = zoo.build("mobilenetv2"), zoo.build("mobilenetv2")
    assert a == b and a is not b
    a.ops.clear()
    assert zoo.build("mobilenetv2").ops  # no shared mutable cache


@pytest.mark.parametrize("name", ALL)
def test_graph_is_well_formed(graphs, name):
    g = graphs[name]
    assert g.name == name and g.source == f"zoo:{name}"
    available = {n for n, t in g.tensors.items() if t.const} | set(g.inputs)
    op_names, produced = set(), set()
    for op in g.ops:
        assert op.name not in op_names, f"duplicate op name {op.name}"
        op_names.add(op.name)
        for i in op.inputs:
            assert i == "" or i in available, f"{op.name} reads {i} before it exists"
        for o in op.outputs:
            assert o in g.tensors and o not in produced and not g.tensors[o].const
            produced.add(o)
        available.update(op.outputs)
    assert set(g.outputs) <= produced and g.outputs
    for n in g.inputs:
        assert not g.tensors[n].const and g.tensors[n].shape[0] == 1  # batch 1, batch-first
    for t in g.tensors.values():
        assert all(d >= 1 for d in t.shape), t
    # every tensor is used by someone (no orphan weights or dangling computations)
    used = {i for op in g.ops for i in op.inputs} | set(g.outputs)
    assert {n for n in g.tensors if n not in used} <= produced


@pytest.mark.parametrize("name", ALL)
def test_recorded_values_match_their_tensors(graphs, name):
    g = graphs[name]
    for tname, values in g.meta["const_values"].items():
        t = g.tensors[tname]
        assert t.const and len(values) == t.numel, tname
        if any(op.op_type == "Reshape" and op.inputs[1] == tname for op in g.ops):
            assert math.prod(values) > 0


@pytest.mark.parametrize("name", ALL)
def test_every_model_does_work(graphs, name):
    s = stats.summarize(graphs[name])
    assert s["weighted"] >= 4 and s["gmacs"] > 0 and s["params_m"] > 0.5


def test_docs_table_is_current():
    doc = Path(__file__).resolve().parents[2] / "docs" / "MODELS.md"
    assert stats.markdown_table() in doc.read_text(), (
        "docs/MODELS.md is stale: paste `python -m npuweave.workload.zoo.stats` into it")
