"""Zoo graphs are valid ONNX, and every shape the builder computed is the one ONNX infers.

ONNX's own shape inference (strict mode) is an independent implementation of every op's
shape rule (Conv padding, ceil-mode pooling, grouped conv weights, LSTM outputs, broadcasting,
Split, Gather...), so agreement on all intermediate tensors checks the builder's arithmetic.
"""

from __future__ import annotations

import dataclasses

import onnx
import pytest
from onnx import shape_inference

from npuweave.workload import zoo
from npuweave.workload.export import to_onnx
from npuweave.workload.graph import Graph

SMALL = {"bert-large": {"seq_len": 16}, "xlnet": {"seq_len": 16}}


def mismatches(graph: Graph) -> list[tuple[str, tuple, tuple]]:
    """Runtime tensors whose shape differs from ONNX's inferred shape (or was not inferred)."""
    model = to_onnx(graph)
    onnx.checker.check_model(model)
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                            data_prop=True)
    got = {}
    for vi in [*inferred.graph.value_info, *inferred.graph.output]:
        dims = vi.type.tensor_type.shape.dim
        got[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None for d in dims)
    return [(n, got.get(n), t.shape) for n, t in graph.tensors.items()
            if not t.const and n not in graph.inputs and got.get(n) != t.shape]


@pytest.mark.parametrize("name", zoo.names())
def test_builder_shapes_equal_onnx_shape_inference(name):
    assert mismatches(zoo.build(name, **SMALL.get(name, {}))) == []


@pytest.mark.parametrize("name,params", [
    ("bert-base", {"seq_len": 7}), ("xlnet", {"size": "base", "seq_len": 9}),
    ("lstm-translation", {"seq_len": 3, "out_len": 11}),
    ("lstm-speech", {"seq_len": 24, "out_len": 5}), ("lstm-sentiment", {"seq_len": 1}),
])
def test_shapes_hold_for_other_parameters(name, params):
    assert mismatches(zoo.build(name, **params)) == []


def test_the_shape_check_catches_a_wrong_shape():
    g = zoo.build("googlenet")
    conv = next(op for op in g.ops if op.op_type == "Conv")
    out = conv.outputs[0]
    wrong = dataclasses.replace(g.tensors[out], shape=(1, 64, 113, 113))
    g.tensors[out] = wrong
    assert [m[0] for m in mismatches(g)] == [out]
