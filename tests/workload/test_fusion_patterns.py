"""Fusion of multi-reader patterns (swish, decomposed LayerNorm) and of pooling after Concat,
on hand-built ONNX files and the bundled light Inception v1, against hand-counted numbers."""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from npuweave.compile.layergroup.tensors import unsupported_reason
from npuweave.workload import Geometry, Graph, LayerKind, Op, Tensor
from npuweave.workload.lower import lower
from npuweave.workload.onnx_import import import_onnx

F = TensorProto.FLOAT
LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def save(tmp_path, nodes, inputs, outputs, inits, opset=13):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, F, s)
                                           for n, s in inputs],
                              [helper.make_tensor_value_info(n, F, None) for n in outputs],
                              initializer=[numpy_helper.from_array(np.asarray(v, np.float32), k)
                                           for k, v in inits.items()])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]),
              str(path))
    return path


def _conv_bn_swish(prefix, x, c_in, c_out, k, group, inits):
    inits[f"{prefix}w"] = np.zeros((c_out, c_in // group, k, k))
    for p in "smvb":
        inits[f"{prefix}{p}"] = np.ones(c_out)
    return [
        helper.make_node("Conv", [x, f"{prefix}w"], [f"{prefix}c"], group=group,
                         pads=[k // 2] * 4),
        helper.make_node("BatchNormalization", [f"{prefix}c"] + [f"{prefix}{p}" for p in "smvb"],
                         [f"{prefix}bn"]),
        helper.make_node("Sigmoid", [f"{prefix}bn"], [f"{prefix}sig"]),
        helper.make_node("Mul", [f"{prefix}bn", f"{prefix}sig"], [f"{prefix}y"]),
    ]


def test_efficientnet_swish_fuses_into_each_conv(tmp_path):
    """1x1 expansion then 3x3 depthwise, each Conv -> BN -> x*sigmoid(x), as EfficientNet."""
    inits: dict = {}
    nodes = (_conv_bn_swish("e_", "x", 8, 16, 1, 1, inits)
             + _conv_bn_swish("d_", "e_y", 16, 16, 3, 16, inits))
    layers = lower(import_onnx(save(tmp_path, nodes, [("x", [1, 8, 16, 16])], ["d_y"], inits)))
    # two layers, not four: the BN's two readers (Sigmoid, Mul) are both in the chain
    assert [lay.ops for lay in layers] == [("Conv", "BatchNormalization", "Sigmoid", "Mul")] * 2
    expand, dw = layers
    assert expand.weight_elems == 16 * 8 + 16 and dw.weight_elems == 16 * 9 + 16  # BN -> bias
    assert expand.vector_ops == dw.vector_ops == 2 * 16 * 16 * 16  # sigmoid + product
    assert dw.inputs == (expand.name,) and expand.out_elems == 16 * 16 * 16
    assert dw.splittable_h and dw.geometry.kernel == (3, 3)


def _layernorm(x: str, inits: dict, hidden: int) -> list[onnx.NodeProto]:
    """LayerNorm over the last axis as older PyTorch exports write it (opset 13)."""
    inits |= {"two": np.array(2.0), "eps": np.array(1e-5), "gamma": np.ones(hidden),
              "beta": np.zeros(hidden)}
    mk = helper.make_node
    return [
        mk("ReduceMean", [x], ["mean"], axes=[-1]), mk("Sub", [x, "mean"], ["d"]),
        mk("Pow", ["d", "two"], ["sq"]), mk("ReduceMean", ["sq"], ["var"], axes=[-1]),
        mk("Add", ["var", "eps"], ["ve"]), mk("Sqrt", ["ve"], ["std"]),
        mk("Div", ["d", "std"], ["n"]), mk("Mul", ["n", "gamma"], ["g"]),
        mk("Add", ["g", "beta"], ["y"]),
    ]


def test_decomposed_layernorm_fuses_into_the_projection(tmp_path):
    seq, k, h = 4, 16, 8
    inits = {"w": np.zeros((k, h)), "b": np.zeros(h)}
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"]),
             helper.make_node("Add", ["p", "b"], ["pb"]),
             helper.make_node("Add", ["pb", "res"], ["z"])] + _layernorm("z", inits, h)
    path = save(tmp_path, nodes, [("x", [1, seq, k]), ("res", [1, seq, h])], ["y"], inits)
    (layer,) = lower(import_onnx(path))
    assert layer.kind == LayerKind.GEMM and len(layer.ops) == 3 + 9
    n, rows = seq * h, seq
    # MatMul weights, the folded bias, gamma and beta; scalars (2, eps) are not weights
    assert layer.weight_elems == k * h + h + h + h
    # residual Add, 2 ReduceMeans (one per input element), Sub, Pow, Div, Mul, Add: n each;
    # eps Add and Sqrt: one per row
    assert layer.vector_ops == 8 * n + 2 * rows
    assert layer.in_elems == seq * k + n and layer.out_elems == n


def test_decomposed_layernorm_alone_is_one_vector_layer(tmp_path):
    inits: dict = {}
    path = save(tmp_path, _layernorm("x", inits, 8), [("x", [1, 4, 8])], ["y"], inits)
    (layer,) = lower(import_onnx(path))
    assert layer.kind == LayerKind.VECTOR and layer.ops[0] == "ReduceMean" and len(layer.ops) == 9
    assert layer.inputs == ("",) and layer.weight_elems == 0


def test_layernorm_with_an_outside_reader_is_not_fused_whole(tmp_path):
    inits: dict = {}
    path = save(tmp_path, _layernorm("x", inits, 8), [("x", [1, 4, 8])], ["y", "var"], inits)
    layers = lower(import_onnx(path))
    # the variance leaves the graph, so (Pow, ReduceMean) keeps its own layer and the rest
    # cannot re-join the mean: (ReduceMean, Sub), (Pow, ReduceMean), (Add ... Add)
    assert [len(lay.ops) for lay in layers] == [2, 2, 5]
    assert layers[1].ops == ("Pow", "ReduceMean") and layers[1].out_elems == 4


def test_concat_then_maxpool_is_a_pool_layer_with_the_pool_geometry():
    T = Tensor
    ts = [T("x", (1, 4, 8, 8)), T("w1", (4, 4, 1, 1), const=True), T("a", (1, 4, 8, 8)),
          T("w2", (4, 4, 1, 1), const=True), T("b", (1, 4, 8, 8)), T("cat", (1, 8, 8, 8)),
          T("y", (1, 8, 4, 4))]
    ops = [Op("c1", "Conv", ("x", "w1"), ("a",)), Op("c2", "Conv", ("x", "w2"), ("b",)),
           Op("cat", "Concat", ("a", "b"), ("cat",), {"axis": 1}),
           Op("pool", "MaxPool", ("cat",), ("y",),
              {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})]
    _, _, catl, pool = lower(Graph("t", ops, {t.name: t for t in ts}, ["x"], ["y"]))
    assert (catl.ops, catl.geometry, catl.out_elems) == (("Concat",), None, 512)
    assert (pool.ops, pool.inputs, pool.in_elems) == (("MaxPool",), ("cat",), 512)
    assert pool.geometry == Geometry((8, 8, 8), (8, 4, 4), (3, 3), (2, 2), (1, 1, 1, 1))
    assert pool.vector_ops == 9 * 8 * 4 * 4 and catl.splittable_h and pool.splittable_h
    assert unsupported_reason(catl) == unsupported_reason(pool) == ""


def test_light_inception_v1_pools_after_concat_have_geometry():
    layers = lower(import_onnx(os.path.join(LIGHT, "light_inception_v1.onnx")))
    by_name = {lay.name: lay for lay in layers}
    after_concat = [lay for lay in layers if lay.ops[0] in ("MaxPool", "AveragePool")
                    and by_name[lay.inputs[0]].ops == ("Concat",)]
    # the 3x3/1 pool branch of a module reads the previous module's concat in 3b, 4b-4e and
    # 5b (3a, 4a, 5a read a stride-2 pool), plus those 2 pools and the final 7x7 average
    assert len(after_concat) == 6 + 2 + 1
    # this Caffe export is 27x27 at stage 3: (27 - 3) // 2 + 1 = 13, (13 - 3) // 2 + 1 = 6;
    # channels: 3b 128+192+96+64 = 480, 4e 256+320+128+128 = 832, 5b 384+384+128+128 = 1024
    reducing = [(lay.geometry.in_chw, lay.geometry.out_chw, lay.geometry.kernel)
                for lay in after_concat if lay.geometry.out_chw[1] < lay.geometry.in_chw[1]]
    assert reducing == [((480, 27, 27), (480, 13, 13), (3, 3)),
                        ((832, 13, 13), (832, 6, 6), (3, 3)),
                        ((1024, 6, 6), (1024, 1, 1), (7, 7))]
    assert all(lay.ops == ("Concat",) for lay in layers if lay.ops[0] == "Concat")
    assert all(unsupported_reason(lay) == "" for lay in after_concat)


def test_zoo_googlenet_pools_after_concat_are_sliceable():
    from npuweave.workload import zoo

    layers = lower(zoo.build("googlenet"))
    concats = {lay.name: lay for lay in layers if lay.ops[0] == "Concat"}
    # the last concat keeps its global average pool: it needs whole rows, not a geometry
    assert [lay.ops for lay in concats.values()] == [("Concat",)] * 8 + [
        ("Concat", "GlobalAveragePool")]
    pools = [lay for lay in layers if lay.ops == ("MaxPool",) and lay.inputs[0] in concats
             and lay.geometry.stride == (2, 2)]
    # 224 input, stage 3 at 28: 3b -> 480 x 14 x 14, 4e -> 832 x 7 x 7 (ceil mode)
    assert [lay.geometry.out_chw for lay in pools] == [(480, 14, 14), (832, 7, 7)]
    assert all(unsupported_reason(lay) == "" for lay in pools + list(concats.values()))


def _swish_chain(n: int) -> Graph:
    ts = {"x": Tensor("x", (1, 4, 4, 4)), "w": Tensor("w", (4, 4, 1, 1), const=True),
          "y0": Tensor("y0", (1, 4, 4, 4))}
    ops = [Op("conv", "Conv", ("x", "w"), ("y0",))]
    for i in range(n):
        ts[f"s{i}"] = Tensor(f"s{i}", (1, 4, 4, 4))
        ts[f"y{i + 1}"] = Tensor(f"y{i + 1}", (1, 4, 4, 4))
        ops += [Op(f"sig{i}", "Sigmoid", (f"y{i}",), (f"s{i}",)),
                Op(f"mul{i}", "Mul", (f"y{i}", f"s{i}"), (f"y{i + 1}",))]
    return Graph("chain", ops, ts, ["x"], [f"y{n}"])


def test_repeated_diamonds_fuse_into_one_layer_in_graph_order():
    (layer,) = lower(_swish_chain(300))
    members = dict(layer.attrs)["members"]
    assert len(members) == 1 + 2 * 300 and members[:3] == ("conv", "sig0", "mul0")
    assert layer.vector_ops == 2 * 300 * 64 and layer.out_elems == 64
