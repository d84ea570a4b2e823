"""Graph -> ONNX export: valid files that import back to the same layers."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest

from npuweave.workload import Graph, Op, Tensor
from npuweave.workload.export import save_onnx, to_onnx
from npuweave.workload.lower import lower
from npuweave.workload.onnx_import import import_onnx

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def round_trip(graph: Graph, tmp_path, opset=None) -> Graph:
    model = to_onnx(graph, opset)
    onnx.checker.check_model(model, full_check=True)  # includes strict shape inference
    path = tmp_path / f"{graph.name}.onnx"
    save_onnx(graph, path, opset)
    return import_onnx(path)


def _graph(ops, tensors, inputs, outputs, name="t"):
    return Graph(name, ops, {t.name: t for t in tensors}, inputs, outputs)


def _transformer_block():
    """Embedding, a projection, a head split by Reshape/Transpose, attention, a split FFN."""
    s, h, heads = 16, 64, 4
    T = Tensor
    tensors = [
        T("ids", (1, s), "int64"), T("table", (1000, h), const=True), T("e", (1, s, h)),
        T("wq", (h, h), const=True), T("q", (1, s, h)), T("shape4", (4,), "int64", True),
        T("q4", (1, s, heads, h // heads)), T("qt", (1, heads, s, h // heads)),
        T("kt", (1, heads, h // heads, s)), T("att", (1, heads, s, s)), T("p", (1, heads, s, s)),
        T("ctx", (1, heads, s, h // heads)), T("ax", (1,), "int64", True),
        T("cu", (1, heads, s, h // heads, 1)),
        T("cs", (1, heads, s, h // heads)), T("a", (1, heads, s, 8)), T("b", (1, heads, s, 8)),
        T("y", (1, heads, s, 8)), T("sl", (1, heads, s, 4)), T("cl", (1, heads, s, 4)),
        T("starts", (1,), "int64", True), T("ends", (1,), "int64", True),
        T("axes", (1,), "int64", True),
        T("rows", (1, heads, 3, 4)),
    ]
    ops = [
        Op("embed", "Gather", ("table", "ids"), ("e",), {"axis": 0}),
        Op("proj", "MatMul", ("e", "wq"), ("q",)),
        Op("split_heads", "Reshape", ("q", "shape4"), ("q4",)),
        Op("to_heads", "Transpose", ("q4",), ("qt",), {"perm": [0, 2, 1, 3]}),
        Op("keys", "Transpose", ("qt",), ("kt",), {"perm": [0, 1, 3, 2]}),
        Op("scores", "MatMul", ("qt", "kt"), ("att",)),
        Op("softmax", "Softmax", ("att",), ("p",), {"axis": -1}),
        Op("context", "MatMul", ("p", "qt"), ("ctx",)),
        Op("unsq", "Unsqueeze", ("ctx", "ax"), ("cu",)),
        Op("sq", "Squeeze", ("cu", "ax"), ("cs",)),
        Op("halves", "Split", ("cs",), ("a", "b"), {"axis": 3}),
        Op("gate", "Mul", ("a", "b"), ("y",)),
        Op("crop", "Slice", ("y",), ("sl",), {"starts": [0], "ends": [4], "axes": [3]}),
        Op("clip", "Clip", ("sl",), ("cl",), {"min": 0.0, "max": 6.0}),
        Op("rows", "Slice", ("cl", "starts", "ends", "axes"), ("rows",)),  # bounds from shapes
    ]
    return _graph(ops, tensors, ["ids"], ["rows"], name="block")


@pytest.mark.parametrize("opset", [13, 17])
def test_transformer_block_round_trip(tmp_path, opset):
    graph = _transformer_block()
    back = round_trip(graph, tmp_path, opset)
    assert lower(back) == lower(graph)
    assert {n: t.shape for n, t in back.tensors.items() if not t.const} == {
        n: t.shape for n, t in graph.tensors.items() if not t.const and n in back.tensors}


def test_weights_are_written_without_data(tmp_path):
    table = Tensor("table", (30522, 1024), const=True)
    graph = _graph([Op("embed", "Gather", ("table", "ids"), ("e",))],
                   [table, Tensor("ids", (1, 512), "int64"), Tensor("e", (1, 512, 1024))],
                   ["ids"], ["e"])
    model = to_onnx(graph)
    assert len(model.SerializeToString()) < 2000  # 31 M weights, none of them stored
    kinds = [n.op_type for n in model.graph.node]
    assert kinds == ["ConstantOfShape", "Gather"]
    back = round_trip(graph, tmp_path)
    assert back.tensor("table").const and back.tensor("table").shape == (30522, 1024)
    assert lower(back)[0].weight_elems == 30522 * 1024


def test_meta_and_names_survive(tmp_path):
    graph = _transformer_block()
    graph.meta["batch"] = 8
    model = to_onnx(graph)
    props = {p.key: p.value for p in model.metadata_props}
    assert props["npuweave.batch"] == "8"
    assert [n.name for n in model.graph.node if n.op_type != "ConstantOfShape"] == [
        op.name for op in graph.ops]


@pytest.mark.parametrize("name", ["resnet50", "shufflenet", "inception_v2"])
def test_light_model_round_trip(tmp_path, name):
    graph = import_onnx(os.path.join(LIGHT, f"light_{name}.onnx"))
    assert graph.meta["opset"] == 9
    back = round_trip(graph, tmp_path)
    assert lower(back) == lower(graph)


def test_save_is_atomic_and_leaves_no_temp(tmp_path):
    path = tmp_path / "out" / "m.onnx"
    save_onnx(_transformer_block(), path)
    assert path.is_file() and os.listdir(path.parent) == ["m.onnx"]


def _initializers(model: onnx.ModelProto) -> dict:
    return {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}


def test_recorded_constants_are_written_with_their_values():
    from npuweave.workload import zoo

    model = to_onnx(zoo.build("mobilenetv2"))
    inits = _initializers(model)
    clips = [n for n in model.graph.node if n.op_type == "Clip"]
    # ReLU6 after the stem conv (1), the first bottleneck's depthwise conv (t = 1, no
    # expansion: 1), expansion and depthwise of the other 16 bottlenecks (32), the last 1x1 (1)
    assert len(clips) == 1 + 1 + 2 * 16 + 1
    for clip in clips:
        assert inits[clip.input[1]] == 0.0 and inits[clip.input[2]] == 6.0
    # weights stay zero fills: only dims and recorded scalars are stored
    assert max(np.prod(i.dims) for i in model.graph.initializer) <= 4
    assert sum(n.op_type == "ConstantOfShape" for n in model.graph.node) > 100

    model = to_onnx(zoo.build("bert-base", seq_len=16))
    inits = _initializers(model)
    scales = [inits[t] for n in model.graph.node if n.op_type == "Mul"
              for t in n.input if t in inits and "scale" in t]
    assert len(scales) == 12  # one 1/sqrt(d_head) per encoder layer, d_head = 768 / 12 = 64
    assert all(float(s) == pytest.approx(1 / 8) and s.dtype == np.float32 for s in scales)
