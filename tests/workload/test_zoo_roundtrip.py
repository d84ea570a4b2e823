"""Every zoo model lowers consistently with its graph counts and survives ONNX export/import.

``lower`` is an independent count of the same graph: its MACs must equal the graph-level
count exactly, its weighted/attention layers the graph's weighted ops/attention MatMuls, and
its weights the parameters minus what its documented folding rule removes (BatchNorm after a
bias-free conv folds into a per-channel bias: 4 vectors become 1; constants added in
standalone vector layers are not weights).
"""

from __future__ import annotations

import pytest

from npuweave.workload import zoo
from npuweave.workload.export import save_onnx
from npuweave.workload.layer import LayerKind
from npuweave.workload.lower import lower
from npuweave.workload.onnx_import import import_onnx
from npuweave.workload.zoo import stats

# Keep the two big transformers short: the structure, not the length, is under test here.
PARAMS = {"bert-large": {"seq_len": 32}, "xlnet": {"seq_len": 32}}


def build(name: str):
    return zoo.build(name, **PARAMS.get(name, {}))


@pytest.mark.parametrize("name", zoo.names())
def test_export_import_gives_the_same_layers(name, tmp_path):
    graph = build(name)
    path = tmp_path / f"{name}.onnx"
    save_onnx(graph, path)
    assert lower(import_onnx(path)) == lower(graph)


@pytest.mark.parametrize("name", zoo.names())
def test_lowering_agrees_with_graph_counts(name):
    graph = build(name)
    layers = lower(graph)
    summary = stats.summarize(graph)
    assert sum(layer.macs for layer in layers) == stats.total_macs(graph)
    assert sum(layer.weight_elems > 0 for layer in layers) == summary["weighted"]
    assert sum(layer.kind is LayerKind.MATMUL for layer in layers) == summary["attention"]
    bn = sum(graph.tensors[op.inputs[1]].numel for op in graph.ops
             if op.op_type == "BatchNormalization")
    # XLNet's three attention biases per layer are added to q in vector layers (q fans out)
    xlnet_biases = 3 * graph.tensors["pos_emb"].shape[-1] * 24 if name == "xlnet" else 0
    # ViT's class token and position embedding enter a standalone Concat/Add layer and its 24
    # pre-norm LayerNorms (scale and bias) stand alone: vector layers carry no weights
    vit_vector = (768 + 197 * 768 + 24 * 2 * 768) if name == "vit-base" else 0
    expected = stats.param_count(graph) - 3 * bn - xlnet_biases - vit_vector
    assert sum(layer.weight_elems for layer in layers) == expected


def test_lowered_layer_counts():
    # issue 2: ResNet-50 is 53 conv + 1 FC weighted layers
    assert sum(layer.has_weights for layer in lower(zoo.build("RN"))) == 54
    # BERT-base: 3 embedding lookups, 12 x (QKV, 2 attention products, out, FFN1, FFN2),
    # pooler. (The Layerweaver thesis schedules BERT-base as 75 layers; its embedding
    # handling is not stated.)
    assert len(lower(zoo.build("BB"))) == 3 + 12 * 6 + 1
