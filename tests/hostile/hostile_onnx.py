"""Malformed ONNX models for the hostile suite, built in memory with onnx.helper.

Every builder returns the serialized bytes of one small model; nothing binary is checked in.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def _model(nodes, inputs, outputs, inits=(), opsets=(("", 13),)) -> bytes:
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in opsets])
    return m.SerializeToString()


def _vi(name: str, shape, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def _w(name: str, shape) -> onnx.TensorProto:
    return numpy_helper.from_array(np.zeros(shape, np.float32), name)


def conv(x_shape, w_shape, op: str = "Conv", **attrs) -> bytes:
    node = h.make_node(op, ["x", "w"], ["y"], name="conv1", **attrs)
    return _model([node], [_vi("x", x_shape)], [_vi("y", None)], [_w("w", w_shape)])


def pool(op: str, x_shape, **attrs) -> bytes:
    node = h.make_node(op, ["x"], ["y"], name="pool1", **attrs)
    return _model([node], [_vi("x", x_shape)], [_vi("y", None)])


def gemm(a_shape, b_shape, **attrs) -> bytes:
    node = h.make_node("Gemm", ["a", "b"], ["y"], name="fc1", **attrs)
    return _model([node], [_vi("a", a_shape)], [_vi("y", None)], [_w("b", b_shape)])


def matmul(a_shape, b_shape) -> bytes:
    node = h.make_node("MatMul", ["a", "b"], ["y"], name="mm1")
    return _model([node], [_vi("a", a_shape)], [_vi("y", None)], [_w("b", b_shape)])


def single(op: str, x_shape, domain: str = "", **attrs) -> bytes:
    node = h.make_node(op, ["x"], ["y"], name="n1", domain=domain, **attrs)
    opsets = (("", 13),) if not domain else (("", 13), (domain, 1))
    return _model([node], [_vi("x", x_shape)], [_vi("y", None)], opsets=opsets)


def identity_only() -> bytes:
    return single("Identity", [1, 4])


def opsets(opset_list) -> bytes:
    node = h.make_node("Relu", ["x"], ["y"], name="r")
    return _model([node], [_vi("x", [1, 4])], [_vi("y", None)], opsets=opset_list)


def orphan_output() -> bytes:
    node = h.make_node("Relu", ["x"], ["y"], name="r")
    return _model([node], [_vi("x", [1, 4])], [_vi("missing", None)])


def no_input_shape() -> bytes:
    node = h.make_node("Relu", ["x"], ["y"], name="r")
    return _model([node], [h.make_tensor_value_info("x", T.FLOAT, None)], [_vi("y", None)])


def _const(name: str, values, dtype=np.int64) -> onnx.NodeProto:
    return h.make_node("Constant", [], [name], name=f"c_{name}",
                       value=numpy_helper.from_array(np.array(values, dtype), name))


def expand_huge() -> bytes:
    nodes = [_const("shape", [100000, 100000, 100]), _const("one", [1]),
             h.make_node("Expand", ["one", "shape"], ["big"], name="expand"),
             h.make_node("Reshape", ["x", "big"], ["y"], name="reshape")]
    return _model(nodes, [_vi("x", [1, 4])], [_vi("y", None)])


def range_huge() -> bytes:
    nodes = [_const("s", 0), _const("l", 10**12), _const("d", 1),
             h.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
             h.make_node("Reshape", ["x", "r"], ["y"], name="reshape")]
    return _model(nodes, [_vi("x", [1, 4])], [_vi("y", None)])


def range_inf() -> bytes:
    nodes = [_const("s", 0.0, np.float32), _const("l", np.inf, np.float32),
             _const("d", 1.0, np.float32),
             h.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
             h.make_node("Cast", ["r"], ["ri"], name="cast", to=T.INT64),
             h.make_node("Reshape", ["x", "ri"], ["y"], name="reshape")]
    return _model(nodes, [_vi("x", [1, 4])], [_vi("y", None)])


def constant_of_shape_huge() -> bytes:
    nodes = [_const("shape", [2**40, 2**40]),
             h.make_node("ConstantOfShape", ["shape"], ["big"], name="cos",
                         value=numpy_helper.from_array(np.array([1], np.int64), "v")),
             h.make_node("Shape", ["big"], ["s2"], name="shape_of"),
             h.make_node("Reshape", ["x", "s2"], ["y"], name="reshape")]
    return _model(nodes, [_vi("x", [1, 4])], [_vi("y", None)])


def no_graph() -> bytes:
    return onnx.ModelProto(ir_version=8).SerializeToString()


def onnx_cases() -> dict[str, tuple[bytes, str]]:
    """name -> (model bytes, a substring the error must contain besides the file name)."""
    x = [1, 3, 8, 8]
    return {
        "conv_kernel_larger_than_input": (conv([1, 3, 2, 2], [8, 3, 7, 7]), "conv1"),
        "input_huge": (conv([1, 3, 10**6, 10**6], [8, 3, 3, 3]), "MAX_TENSOR_ELEMS"),
        "conv_channel_mismatch": (conv(x, [8, 4, 3, 3]), "conv1"),
        "conv_group_5_on_3_channels": (conv(x, [5, 1, 3, 3], group=5), "group=5"),
        "conv_group_0": (conv(x, [8, 3, 3, 3], group=0), "group=0"),
        "conv_group_negative": (conv(x, [8, 3, 3, 3], group=-2), "group=-2"),
        "conv_stride_0": (conv(x, [8, 3, 3, 3], strides=[0, 0]), "conv1"),
        "conv_dilation_0": (conv(x, [8, 3, 3, 3], dilations=[0, 1]), "conv1"),
        "conv_negative_pads": (conv(x, [8, 3, 3, 3], pads=[-5, -5, -5, -5]), "conv1"),
        "conv_kernel_rank": (conv(x, [8, 3, 3, 3], kernel_shape=[3]), "conv1"),
        "conv_weight_rank": (conv(x, [8, 3, 3]), "conv1"),
        "conv_out_channels_group": (conv([1, 4, 8, 8], [3, 2, 3, 3], group=2), "conv1"),
        "convtranspose_group_0": (conv(x, [3, 4, 3, 3], op="ConvTranspose", group=0),
                                  "group=0"),
        "convtranspose_channels": (conv(x, [5, 4, 3, 3], op="ConvTranspose"), "conv1"),
        "maxpool_kernel_too_big": (pool("MaxPool", x, kernel_shape=[9, 9]), "pool1"),
        "avgpool_stride_0": (pool("AveragePool", x, kernel_shape=[2, 2], strides=[0, 0]),
                             "pool1"),
        "gemm_inner_mismatch": (gemm([1, 64], [32, 10]), "fc1"),
        "gemm_transb_mismatch": (gemm([1, 64], [64, 10], transB=1), "fc1"),
        "matmul_inner_mismatch": (matmul([1, 8, 64], [32, 16]), "mm1"),
        "input_dim_zero": (single("Relu", [1, 0, 4]), "dim 1 is 0"),
        "input_dim_negative": (single("Relu", [1, -32, 4]), "dim 1 is -32"),
        "input_symbolic_dim": (single("Relu", [1, "seq", 4]), "seq"),
        "input_without_shape": (no_input_shape(), "'x'"),
        "unsupported_op": (single("Einsum", [1, 4], equation="ij->ij"), "Einsum"),
        "custom_domain_op": (single("MyOp", [1, 4], domain="com.acme"), "MyOp"),
        "identity_only": (identity_only(), "no layers"),
        "no_default_opset": (opsets((("com.acme", 1),)), "opset"),
        "opset_too_old": (opsets((("", 5),)), "opset 5"),
        "orphan_output": (orphan_output(), "missing"),
        "expand_huge": (expand_huge(), ""),
        "range_huge": (range_huge(), ""),
        "range_inf": (range_inf(), ""),
        "constant_of_shape_huge": (constant_of_shape_huge(), ""),
        "no_graph": (no_graph(), "no graph"),
        "garbage_bytes": (b"\x08\x96\x01garbage\xff\xfe" * 50, "not a readable ONNX"),
        "empty_file": (b"", ""),
        "truncated": (conv(x, [8, 3, 3, 3])[:40], ""),
        "text_file": (b"this is not onnx\n", ""),
    }
