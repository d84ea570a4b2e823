"""Bad model files and arguments: one NpuweaveError naming the file and what to do."""

from __future__ import annotations

import os

import onnx
import pytest
from onnx import TensorProto, helper

from npuweave.errors import ConfigError, ModelImportError
from npuweave.workload import load_graph
from npuweave.workload.onnx_import import import_onnx

RESNET = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                      "light_resnet50.onnx")
F = TensorProto.FLOAT


def save(tmp_path, nodes, inputs, outputs, opset=13, name="bad.onnx"):
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def one_line(err: pytest.ExceptionInfo) -> str:
    msg = str(err.value)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


def test_truncated_file(tmp_path):
    data = open(RESNET, "rb").read()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(ModelImportError) as err:
        import_onnx(path)
    msg = one_line(err)
    assert str(path) in msg and "re-export" in msg


def test_text_file_named_onnx(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("this is not a model\njust some text\n")
    with pytest.raises(ModelImportError) as err:
        load_graph(path)
    assert str(path) in one_line(err)


def test_output_produced_by_no_node(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["a"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [1, 4])],
                [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(ModelImportError, match=r"incomplete.*'y'.*re-export"):
        import_onnx(path)


def test_missing_file(tmp_path):
    with pytest.raises(ModelImportError, match="no such file"):
        import_onnx(tmp_path / "absent.onnx")


def test_unsupported_op_is_named(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="ok"),
             helper.make_node("NonMaxSuppression", ["a", "a"], ["y"], name="nms")]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [1, 4, 4])],
                [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    with pytest.raises(ModelImportError) as err:
        import_onnx(path)
    msg = one_line(err)
    assert str(path) in msg and "'nms' (NonMaxSuppression)" in msg and "'ok'" not in msg


def test_two_unsupported_ops_in_one_error(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("MyOp", ["a"], ["b"], name="custom", domain="com.example"),
             helper.make_node("Einsum", ["b"], ["y"], name="ein", equation="ij->ji")]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info("y", F, None)]),
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
    path = tmp_path / "two.onnx"
    onnx.save(model, str(path))
    with pytest.raises(ModelImportError) as err:
        import_onnx(path)
    msg = one_line(err)
    assert "2 unsupported" in msg
    assert "'custom' (com.example::MyOp)" in msg and "'ein' (Einsum)" in msg


def test_missing_shape_info(tmp_path):
    # the Reshape target is a runtime input: its value, hence the output shape, is unknown
    nodes = [helper.make_node("Reshape", ["x", "target"], ["r"], name="reshape"),
             helper.make_node("Relu", ["r"], ["y"], name="act")]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [1, 12]),
                                  helper.make_tensor_value_info("target", TensorProto.INT64, [2])],
                [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(ModelImportError) as err:
        import_onnx(path)
    msg = one_line(err)
    assert "shapes cannot be inferred" in msg and str(path) in msg
    assert "'reshape' (Reshape)" in msg and "'act' (Relu)" in msg


def test_input_without_shape(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    x = helper.make_tensor_value_info("x", F, None)
    path = save(tmp_path, nodes, [x], [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(ModelImportError, match="input 'x' has no shape"):
        import_onnx(path)


def test_unknown_symbolic_dim_asks_for_dims(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, ["N", "seq", 8])],
                [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(ModelImportError, match=r"'seq'.*dims="):
        import_onnx(path)
    assert import_onnx(path, dims={"seq": 5}).tensor("y").shape == (1, 5, 8)


def test_opset_older_than_7(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    path = save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [1, 2])],
                [helper.make_tensor_value_info("y", F, None)], opset=6)
    with pytest.raises(ModelImportError, match="opset 6"):
        import_onnx(path)


@pytest.mark.parametrize("batch", [0, -3, 2.5, True, "4"])
def test_bad_batch(batch):
    with pytest.raises(ConfigError) as err:
        import_onnx(RESNET, batch=batch)
    assert repr(batch) in one_line(err) and ">= 1" in str(err.value)
