"""ONNX import: the bundled light models against independent counts, and hand-built graphs.

Golden numbers come from two places, both independent of npuweave's lowering:
* ``_reference``: walks the model with plain ``onnx`` (its own shape inference, no npuweave
  code) and counts Conv/Gemm MACs and parameters from the weight dims;
* hand arithmetic from the published architectures (AlexNet, VGG-19, ResNet-50), written out.
"""

from __future__ import annotations

import os
from math import prod

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from npuweave.workload import LayerKind
from npuweave.workload.lower import lower
from npuweave.workload.onnx_import import import_onnx

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
          "shufflenet", "squeezenet", "vgg19", "zfnet512"]
F = TensorProto.FLOAT


def light(name: str) -> str:
    return os.path.join(LIGHT, f"light_{name}.onnx")


def _reference(path: str) -> dict[str, int]:
    """Conv/Gemm counts, MACs and parameters with plain onnx.

    Parameter rule (npuweave's): weights + biases of every Conv/Gemm; a bias-less Conv that
    feeds a BatchNormalization gets a folded bias of Cout elements; standalone BN/Mul/Add
    parameters are not counted.
    """
    model = onnx.shape_inference.infer_shapes(onnx.load(path), strict_mode=True)
    g = model.graph
    dims = {i.name: tuple(i.dims) for i in g.initializer}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        dims.setdefault(vi.name, tuple(d.dim_value for d in vi.type.tensor_type.shape.dim))
    out = {"conv": 0, "gemm": 0, "macs": 0, "params": 0}
    biasless = set()
    for node in g.node:
        if node.op_type == "Conv":
            w, y = dims[node.input[1]], dims[node.output[0]]
            out["conv"] += 1
            out["macs"] += prod(y) * prod(w[1:])
            out["params"] += prod(w) + (w[0] if len(node.input) > 2 else 0)
            if len(node.input) < 3:
                biasless.add(node.output[0])
        elif node.op_type == "Gemm":
            a, w = dims[node.input[0]], dims[node.input[1]]
            out["gemm"] += 1
            out["macs"] += prod(w) * a[0]
            out["params"] += prod(w) + prod(dims[node.input[2]])
        elif node.op_type == "BatchNormalization" and node.input[0] in biasless:
            out["params"] += dims[node.input[1]][0]
    return out


@pytest.fixture(scope="module")
def light_layers():
    return {name: lower(import_onnx(light(name))) for name in MODELS}


@pytest.mark.parametrize("name", MODELS)
def test_light_models_match_reference_count(name, light_layers):
    layers = light_layers[name]
    ref = _reference(light(name))
    assert sum(lay.kind == LayerKind.CONV for lay in layers) == ref["conv"]
    assert sum(lay.kind == LayerKind.GEMM for lay in layers) == ref["gemm"]
    assert sum(lay.macs for lay in layers) == ref["macs"]
    assert sum(lay.weight_elems for lay in layers) == ref["params"]


def test_alexnet_by_hand(light_layers):
    # the bundled caffe AlexNet takes 224x224 (not 227): conv1 gives 54x54, pools give 26, 12, 6;
    # conv2, conv4 and conv5 have 2 groups
    convs = [96 * 54 * 54 * 3 * 11 * 11, 256 * 26 * 26 * 48 * 25, 384 * 12 * 12 * 256 * 9,
             384 * 12 * 12 * 192 * 9, 256 * 12 * 12 * 192 * 9]
    fcs = [9216 * 4096, 4096 * 4096, 4096 * 1000]
    layers = light_layers["bvlc_alexnet"]
    assert [lay.macs for lay in layers] == convs + fcs
    weights = (96 * 3 * 121 + 256 * 48 * 25 + 384 * 256 * 9 + 384 * 192 * 9 + 256 * 192 * 9
               + sum(fcs) + 96 + 256 + 384 + 384 + 256 + 4096 + 4096 + 1000)
    assert sum(lay.weight_elems for lay in layers) == weights == 60_965_224


def test_vgg19_by_hand(light_layers):
    s = 9  # 3x3 kernels, same padding
    convs = (224**2 * (3 * 64 + 64 * 64) + 112**2 * (64 * 128 + 128 * 128)
             + 56**2 * (128 * 256 + 3 * 256 * 256) + 28**2 * (256 * 512 + 3 * 512 * 512)
             + 14**2 * 4 * 512 * 512) * s
    fcs = 25088 * 4096 + 4096 * 4096 + 4096 * 1000
    layers = light_layers["vgg19"]
    assert [lay.kind for lay in layers].count(LayerKind.CONV) == 16
    assert sum(lay.macs for lay in layers) == convs + fcs
    assert sum(lay.weight_elems for lay in layers) == pytest.approx(143.67e6, rel=1e-4)


def test_resnet50_by_hand(light_layers):
    layers = light_layers["resnet50"]
    kinds = [lay.kind for lay in layers]
    assert (kinds.count(LayerKind.CONV), kinds.count(LayerKind.GEMM), len(layers)) == (53, 1, 54)
    assert sum(lay.macs for lay in layers) == pytest.approx(4.09e9, rel=2e-3)
    # torchvision's 25,557,032 parameters include 2 x 26,560 BN scales and shifts; folding
    # BN leaves one bias per conv output channel (26,560 channels over the 53 convs)
    bn_channels = sum(lay.gemm[0] * lay.gemm[3] for lay in layers if lay.kind == LayerKind.CONV)
    assert bn_channels == 26_560
    assert sum(lay.weight_elems for lay in layers) == 25_557_032 - 2 * 26_560 + 26_560


def test_light_import_records_batch_and_source():
    g = import_onnx(light("resnet50"), batch=16)
    assert g.meta["batch"] == 16 and g.meta["declared_batch"] == 1
    assert g.tensor(g.inputs[0]).shape == (1, 3, 224, 224)
    assert g.source.endswith("light_resnet50.onnx") and g.name == "light_resnet50"
    assert not any(op.op_type == "ConstantOfShape" for op in g.ops)


# ---- hand-built models -------------------------------------------------------------------

def save(tmp_path, nodes, inputs, outputs, inits=(), opset=13, name="m.onnx"):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3 if opset < 8 else 7
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def no_data(name, dims):
    """An initializer with dims but no data, as when external weights are not loaded."""
    t = TensorProto(name=name, data_type=F, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="weights.bin")
    return t


def const_node(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def test_weights_from_constant_and_constant_of_shape(tmp_path):
    nodes = [
        const_node("w1", np.zeros((8, 3, 3, 3), np.float32)),
        helper.make_node("Conv", ["x", "w1"], ["h"], pads=[1, 1, 1, 1]),
        const_node("wshape", np.array([16, 8], np.int64)),
        helper.make_node("ConstantOfShape", ["wshape"], ["w2"],
                         value=helper.make_tensor("v", F, [1], [0.5])),
        helper.make_node("GlobalAveragePool", ["h"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "w2"], ["y"], transB=1),
    ]
    g = import_onnx(save(tmp_path, nodes, [vi("x", [1, 3, 8, 8])], [vi("y", None)]))
    assert [op.op_type for op in g.ops] == ["Conv", "GlobalAveragePool", "Flatten", "Gemm"]
    assert g.tensor("w2").const and g.tensor("w2").shape == (16, 8)
    layers = lower(g)
    assert [(lay.kind, lay.weight_elems) for lay in layers] == [
        (LayerKind.CONV, 8 * 27), (LayerKind.GEMM, 128)]
    assert layers[1].gemm == (1, 1, 8, 16)


def test_weights_as_inputs_at_opset_7(tmp_path):
    w = numpy_helper.from_array(np.zeros((10, 20), np.float32), "w")
    b = numpy_helper.from_array(np.zeros((10,), np.float32), "b")
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1),
             helper.make_node("Relu", ["y"], ["z"])]
    path = save(tmp_path, nodes, [vi("x", [4, 20]), vi("w", [10, 20]), vi("b", [10])],
                [vi("z", [4, 10])], inits=[w, b], opset=7)
    g = import_onnx(path)
    assert g.inputs == ["x"] and g.meta["declared_batch"] == 4 and g.meta["batch"] == 4
    (layer,) = lower(g)
    assert (layer.ops, layer.gemm, layer.weight_elems) == (("Gemm", "Relu"), (1, 1, 20, 10), 210)


def test_absent_weight_data_uses_dims(tmp_path):
    w = no_data("w", [32, 16])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    g = import_onnx(save(tmp_path, nodes, [vi("x", [1, 5, 32])], [vi("y", None)], inits=[w]))
    (layer,) = lower(g)
    assert (layer.kind, layer.gemm, layer.weight_elems) == (LayerKind.GEMM, (1, 5, 32, 16), 512)


def _reshape_chain(opset):
    """Flatten all but the batch the way exporters do: Shape -> Gather -> Unsqueeze -> Concat."""
    unsq = (helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]) if opset >= 13
            else helper.make_node("Unsqueeze", ["n"], ["n1"], axes=[0]))
    return [
        helper.make_node("Shape", ["x"], ["s"]),
        const_node("i0", np.array(0, np.int64)),
        helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        const_node("ax", np.array([0], np.int64)),
        unsq,
        const_node("m1", np.array([-1], np.int64)),
        helper.make_node("Concat", ["n1", "m1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["f"]),
        helper.make_node("MatMul", ["f", "w"], ["y"]),
    ]


@pytest.mark.parametrize("opset", [9, 11, 13, 17])
def test_symbolic_batch_and_folded_reshape_chain(tmp_path, opset):
    w = numpy_helper.from_array(np.zeros((48, 10), np.float32), "w")
    path = save(tmp_path, _reshape_chain(opset), [vi("x", ["N", 3, 4, 4])], [vi("y", None)],
                inits=[w], opset=opset)
    g = import_onnx(path)
    assert g.meta["batch"] == 1 and g.meta["declared_batch"] is None
    assert g.tensor("f").shape == (1, 48) and g.tensor("y").shape == (1, 10)
    assert [op.op_type for op in g.ops] == ["Reshape", "MatMul"]
    assert import_onnx(path, batch=32).meta["batch"] == 32
    (layer,) = lower(g)
    assert layer.gemm == (1, 1, 48, 10) and layer.inputs == ("",)


def test_numeric_batch_is_recorded_and_imported_at_one(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    path = save(tmp_path, nodes, [vi("x", [8, 3, 5, 5])], [vi("y", [8, 3, 5, 5])])
    g = import_onnx(path)
    assert g.meta["batch"] == 8 and g.tensor("y").shape == (1, 3, 5, 5)
    assert import_onnx(path, batch=2).meta["batch"] == 2


def test_symbolic_sequence_dim_given_by_dims(tmp_path):
    table = no_data("emb", [1000, 64])
    nodes = [helper.make_node("Gather", ["emb", "ids"], ["e"], axis=0)]
    path = save(tmp_path, nodes, [vi("ids", ["batch", "seq"], TensorProto.INT64)],
                [vi("e", None)], inits=[table])
    g = import_onnx(path, dims={"seq": 128})
    (layer,) = lower(g)
    assert (layer.kind, layer.gather_elems, layer.weight_elems) == (
        LayerKind.EMBEDDING, 128 * 64, 64_000)


def test_lstm_input_batch_is_axis_one(tmp_path):
    hidden, inp, steps = 16, 8, 20
    w = no_data("W", [1, 4 * hidden, inp])
    r = no_data("R", [1, 4 * hidden, hidden])
    nodes = [helper.make_node("LSTM", ["x", "W", "R"], ["y", "yh"], hidden_size=hidden)]
    path = save(tmp_path, nodes, [vi("x", [steps, 4, inp])], [vi("yh", None)], inits=[w, r])
    g = import_onnx(path)
    assert g.meta["batch"] == 4 and g.tensor("x").shape == (steps, 1, inp)
    (layer,) = lower(g)
    assert layer.gemm == (steps, 1, inp + hidden, 4 * hidden)
