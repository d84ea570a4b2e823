"""Lowering rules on small hand-built graphs, checked against hand-computed numbers."""

from __future__ import annotations

import os

import onnx
import pytest

from npuweave.workload import Geometry, Graph, LayerKind, Op, Tensor
from npuweave.workload.lower import lower
from npuweave.workload.onnx_import import import_onnx


class Builder:
    """A few lines per test graph: tensors by name, ops in order."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.tensors: dict[str, Tensor] = {}
        self.inputs: list[str] = []

    def input(self, name, shape):
        self.tensors[name] = Tensor(name, tuple(shape))
        self.inputs.append(name)
        return name

    def const(self, name, shape):
        self.tensors[name] = Tensor(name, tuple(shape), const=True)
        return name

    def op(self, op_type, inputs, shape, name=None, **attrs):
        name = name or f"{op_type.lower()}{len(self.ops)}"
        out = f"{name}:0"
        self.tensors[out] = Tensor(out, tuple(shape))
        self.ops.append(Op(name, op_type, tuple(inputs), (out,), attrs))
        return out

    def graph(self, *outputs):
        outs = list(outputs) or [self.ops[-1].outputs[0]]
        return Graph("t", self.ops, self.tensors, self.inputs, outs)


def test_depthwise_and_grouped_conv_dims():
    b = Builder()
    x = b.input("x", (1, 32, 56, 56))
    dw = b.op("Conv", [x, b.const("w1", (32, 1, 3, 3))], (1, 32, 56, 56), name="dw",
              group=32, pads=[1, 1, 1, 1])
    b.op("Conv", [dw, b.const("w2", (64, 8, 3, 3)), b.const("b2", (64,))], (1, 64, 28, 28),
         name="grouped", group=4, strides=[2, 2], pads=[1, 1, 1, 1])
    dwl, grl = lower(b.graph())
    assert dwl.gemm == (32, 56 * 56, 9, 1) and dwl.macs == 32 * 56 * 56 * 9
    assert dwl.geometry.groups == 32 and dwl.weight_elems == 288
    assert grl.gemm == (4, 28 * 28, 8 * 9, 16) and grl.macs == 64 * 28 * 28 * 8 * 9
    assert grl.weight_elems == 64 * 8 * 9 + 64 and grl.inputs == ("dw",)
    assert grl.geometry == Geometry((32, 56, 56), (64, 28, 28), (3, 3), (2, 2), (1, 1, 1, 1),
                                    (1, 1), 4)


def test_conv_transpose_scatters_each_input_pixel():
    b = Builder()
    x = b.input("x", (1, 16, 8, 8))
    b.op("ConvTranspose", [x, b.const("w", (16, 4, 2, 2))], (1, 8, 16, 16), group=2,
         strides=[2, 2])
    (layer,) = lower(b.graph())
    # W is (Cin, Cout/g, kh, kw): each of 64 pixels x 8 input channels per group feeds 4x2x2
    assert layer.gemm == (2, 64, 8, 16) and layer.macs == 16 * 64 * 4 * 4
    assert layer.geometry is None and not layer.splittable_h


def _attention(heads=12, seq=128, dim=64):
    b = Builder()
    q = b.input("q", (1, heads, seq, dim))
    k = b.input("k", (1, heads, dim, seq))
    v = b.input("v", (1, heads, seq, dim))
    s = b.op("MatMul", [q, k], (1, heads, seq, seq), name="scores")
    s = b.op("Div", [s, b.const("scale", ())], (1, heads, seq, seq))
    p = b.op("Softmax", [s], (1, heads, seq, seq), axis=-1)
    b.op("MatMul", [p, v], (1, heads, seq, dim), name="context")
    return b.graph()


def test_attention_matmuls_have_no_weights():
    scores, context = lower(_attention())
    assert scores.kind == context.kind == LayerKind.MATMUL
    assert scores.ops == ("MatMul", "Div", "Softmax")
    assert scores.gemm == (12, 128, 64, 128) and context.gemm == (12, 128, 128, 64)
    assert scores.weight_elems == context.weight_elems == 0
    assert scores.vector_ops == 12 * 128 * 128 * (1 + 3)
    assert scores.in_elems == 2 * 12 * 128 * 64 and context.inputs == ("scores", "")
    assert not scores.splittable_h


def test_matmul_with_weights_folds_leading_dims():
    b = Builder()
    x = b.input("x", (1, 128, 768))
    b.op("MatMul", [x, b.const("w", (768, 3072))], (1, 128, 3072))
    (layer,) = lower(b.graph())
    assert (layer.kind, layer.gemm, layer.weight_elems) == (
        LayerKind.GEMM, (1, 128, 768, 3072), 768 * 3072)


@pytest.mark.parametrize("op_type,gates,vec", [("LSTM", 4, 9), ("GRU", 3, 8), ("RNN", 1, 1)])
def test_recurrent_dims(op_type, gates, vec):
    steps, inp, hid, dirs = 25, 100, 256, 2
    b = Builder()
    x = b.input("x", (steps, 1, inp))
    b.op(op_type, [x, b.const("W", (dirs, gates * hid, inp)), b.const("R", (dirs, gates * hid, hid)),
                   b.const("B", (dirs, 2 * gates * hid))], (steps, dirs, 1, hid),
         hidden_size=hid, direction="bidirectional")
    (layer,) = lower(b.graph())
    assert layer.kind == LayerKind.RECURRENT
    assert layer.gemm == (dirs * steps, 1, inp + hid, gates * hid)
    assert layer.macs == dirs * steps * (inp + hid) * gates * hid
    assert layer.weight_elems == dirs * gates * hid * (inp + hid + 2)
    assert layer.vector_ops == dirs * steps * hid * vec and not layer.splittable_h


def test_embedding_gather_with_position_add_and_layernorm():
    b = Builder()
    ids = b.input("ids", (1, 128))
    pos = b.input("pos", (1, 128))
    words = b.op("Gather", [b.const("word_table", (30522, 768)), ids], (1, 128, 768), name="wte")
    where = b.op("Gather", [b.const("pos_table", (512, 768)), pos], (1, 128, 768), name="wpe")
    s = b.op("Add", [words, where], (1, 128, 768))
    b.op("LayerNormalization", [s, b.const("g", (768,)), b.const("beta", (768,))],
         (1, 128, 768), axis=-1)
    wte, wpe = lower(b.graph())
    assert (wte.kind, wte.gemm, wte.macs) == (LayerKind.EMBEDDING, None, 0)
    assert wte.gather_elems == 128 * 768 and wte.weight_elems == 30522 * 768
    # the Add joins the lookup produced last; LayerNorm scale and shift count as weights
    assert wpe.ops == ("Gather", "Add", "LayerNormalization") and wpe.inputs == ("", "wte")
    assert wpe.weight_elems == 512 * 768 + 2 * 768
    assert wpe.vector_ops == 128 * 768 * (1 + 5)


def _conv_bn_relu_pool(extra_reader=False):
    b = Builder()
    x = b.input("x", (1, 3, 32, 32))
    c = b.op("Conv", [x, b.const("w", (16, 3, 3, 3))], (1, 16, 32, 32), name="conv",
             pads=[1, 1, 1, 1])
    bn = b.op("BatchNormalization", [c] + [b.const(n, (16,)) for n in "smvb"], (1, 16, 32, 32))
    r = b.op("Relu", [bn], (1, 16, 32, 32))
    p = b.op("MaxPool", [r], (1, 16, 16, 16), name="pool", kernel_shape=[2, 2], strides=[2, 2])
    outs = [p]
    if extra_reader:
        outs.append(b.op("Sigmoid", [r], (1, 16, 32, 32), name="side"))
    return b.graph(*outs)


def test_conv_bn_relu_pool_fuse_with_folded_bn():
    (layer,) = lower(_conv_bn_relu_pool())
    assert layer.ops == ("Conv", "BatchNormalization", "Relu", "MaxPool")
    # BN folds into the weights and adds a bias; Relu 1 op/element, 2x2 pool 4 per output
    assert layer.weight_elems == 16 * 27 + 16
    assert layer.vector_ops == 16 * 32 * 32 + 4 * 16 * 16 * 16
    assert layer.out_elems == 16 * 16 * 16 and layer.in_elems == 3 * 32 * 32
    # composed window: 3x3 conv then 2x2/2 pool = 4x4 kernel, stride 2, pads 1
    assert layer.geometry == Geometry((3, 32, 32), (16, 16, 16), (4, 4), (2, 2), (1, 1, 1, 1))
    assert layer.splittable_h


def test_second_reader_stops_fusion():
    conv, pool, side = lower(_conv_bn_relu_pool(extra_reader=True))
    assert conv.ops == ("Conv", "BatchNormalization", "Relu") and conv.out_elems == 16 * 1024
    assert (pool.kind, pool.ops, pool.inputs) == (LayerKind.VECTOR, ("MaxPool",), ("conv",))
    assert pool.geometry.kernel == (2, 2) and pool.vector_ops == 4 * 16 * 16 * 16
    assert side.ops == ("Sigmoid",) and pool.weight_elems == side.weight_elems == 0


def test_residual_add_joins_branch_produced_last_and_free_ops_vanish():
    b = Builder()
    x = b.input("x", (1, 8, 4, 4))
    a = b.op("Conv", [x, b.const("wa", (8, 8, 1, 1))], (1, 8, 4, 4), name="a")
    r = b.op("Relu", [a], (1, 8, 4, 4))
    c = b.op("Conv", [r, b.const("wc", (8, 8, 1, 1))], (1, 8, 4, 4), name="c")
    idn = b.op("Identity", [x], (1, 8, 4, 4))
    s = b.op("Add", [c, idn], (1, 8, 4, 4), name="add")
    f = b.op("Flatten", [s], (1, 128), axis=1)
    b.op("Gemm", [f, b.const("fw", (10, 128)), b.const("fb", (10,))], (1, 10), name="fc",
         transB=1)
    layers = lower(b.graph())
    assert [lay.name for lay in layers] == ["a", "c", "fc"]
    assert layers[1].ops == ("Conv", "Add") and layers[1].inputs == ("a", "")
    assert layers[1].weight_elems == 64  # a residual Add has no constants to count
    assert layers[2].inputs == ("c",) and layers[2].gemm == (1, 1, 128, 10)


def test_swish_fuses_into_the_conv_with_one_output():
    b = Builder()
    x = b.input("x", (1, 4, 8, 8))
    c = b.op("Conv", [x, b.const("w", (4, 4, 1, 1))], (1, 4, 8, 8), name="conv")
    sg = b.op("Sigmoid", [c], (1, 4, 8, 8), name="sig")
    b.op("Mul", [c, sg], (1, 4, 8, 8))
    (conv,) = lower(b.graph())
    # both readers of the conv output are in the fused chain: one layer, one output
    assert conv.ops == ("Conv", "Sigmoid", "Mul") and conv.out_elems == 256
    assert conv.in_elems == 256 and conv.vector_ops == 2 * 256 and conv.weight_elems == 16


def test_swish_with_an_outside_reader_of_the_gate_stays_apart():
    b = Builder()
    x = b.input("x", (1, 4, 8, 8))
    c = b.op("Conv", [x, b.const("w", (4, 4, 1, 1))], (1, 4, 8, 8), name="conv")
    sg = b.op("Sigmoid", [c], (1, 4, 8, 8), name="sig")
    m = b.op("Mul", [c, sg], (1, 4, 8, 8), name="mul")
    n = b.op("Neg", [sg], (1, 4, 8, 8), name="neg")
    layers = lower(b.graph(m, n))
    assert [lay.ops for lay in layers] == [("Conv",), ("Sigmoid",), ("Mul",), ("Neg",)]


def test_hard_swish_branch_is_not_folded_into_the_bias():
    # x * clip(x + 3, 0, 6) / 6: the Add reads the conv output that the Mul reads too, so
    # it must not fold into a bias of the conv
    b = Builder()
    x = b.input("x", (1, 4, 8, 8))
    c = b.op("Conv", [x, b.const("w", (4, 4, 1, 1))], (1, 4, 8, 8), name="conv")
    a = b.op("Add", [c, b.const("three", ())], (1, 4, 8, 8))
    cl = b.op("Clip", [a, b.const("lo", ()), b.const("hi", ())], (1, 4, 8, 8))
    d = b.op("Div", [cl, b.const("six", ())], (1, 4, 8, 8))
    b.op("Mul", [c, d], (1, 4, 8, 8))
    (layer,) = lower(b.graph())
    assert layer.ops == ("Conv", "Add", "Clip", "Div", "Mul")
    assert layer.weight_elems == 16 and layer.vector_ops == 4 * 256


def test_bn_after_nonlinearity_is_not_folded():
    b = Builder()
    x = b.input("x", (1, 4, 8, 8))
    c = b.op("Conv", [x, b.const("w", (4, 4, 1, 1)), b.const("b", (4,))], (1, 4, 8, 8))
    r = b.op("Relu", [c], (1, 4, 8, 8))
    b.op("BatchNormalization", [r] + [b.const(n, (4,)) for n in "smvB"], (1, 4, 8, 8))
    (layer,) = lower(b.graph())
    assert layer.weight_elems == 16 + 4 + 2 * 4 and layer.vector_ops == 256 + 2 * 256


def test_concat_and_global_pool_are_vector_layers():
    b = Builder()
    x = b.input("x", (1, 4, 8, 8))
    c1 = b.op("Conv", [x, b.const("w1", (4, 4, 1, 1))], (1, 4, 8, 8), name="c1")
    c2 = b.op("Conv", [x, b.const("w2", (4, 4, 1, 1))], (1, 4, 8, 8), name="c2")
    cat = b.op("Concat", [c1, c2], (1, 8, 8, 8), name="cat", axis=1)
    b.op("GlobalAveragePool", [cat], (1, 8, 1, 1))
    c1l, c2l, catl = lower(b.graph())
    assert (catl.kind, catl.ops, catl.inputs) == (LayerKind.VECTOR, ("Concat", "GlobalAveragePool"),
                                                  ("c1", "c2"))
    assert catl.vector_ops == 512 + 512 and catl.in_elems == 512 and catl.out_elems == 8
    assert c1l.splittable_h and not catl.splittable_h


@pytest.mark.parametrize("auto_pad,pads", [("SAME_UPPER", (1, 1, 2, 2)), ("SAME_LOWER", (2, 2, 1, 1)),
                                           ("VALID", (0, 0, 0, 0))])
def test_auto_pad(auto_pad, pads):
    b = Builder()
    x = b.input("x", (1, 3, 16, 16))
    out = 8 if auto_pad != "VALID" else 6
    b.op("Conv", [x, b.const("w", (8, 3, 5, 5))], (1, 8, out, out), strides=[2, 2],
         auto_pad=auto_pad)
    (layer,) = lower(b.graph())
    # SAME: total pad = (out - 1) * stride + kernel - in = 7 * 2 + 5 - 16 = 3
    assert layer.geometry.pads == pads and layer.gemm == (1, out * out, 75, 8)


def test_dilated_conv_keeps_dilation():
    b = Builder()
    x = b.input("x", (1, 2, 10, 10))
    b.op("Conv", [x, b.const("w", (2, 2, 3, 3))], (1, 2, 6, 6), dilations=[2, 2])
    (layer,) = lower(b.graph())
    assert layer.geometry.dilation == (2, 2) and layer.geometry.pads == (0, 0, 0, 0)


LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


@pytest.mark.parametrize("name", ["inception_v1", "densenet121", "shufflenet"])
def test_layers_are_topological_and_cover_every_op(name):
    graph = import_onnx(os.path.join(LIGHT, f"light_{name}.onnx"))
    layers = lower(graph)
    seen = {""}
    for layer in layers:
        assert set(layer.inputs) <= seen, layer.name
        seen.add(layer.name)
    members = [m for lay in layers for m in dict(lay.attrs)["members"]]
    assert len(members) == len(set(members))
    computing = {op.name for op in graph.ops if op.op_type not in
                 {"Reshape", "Transpose", "Flatten", "Dropout", "Unsqueeze", "Identity"}}
    assert set(members) == computing
