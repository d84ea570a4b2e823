"""Graph -> ONNX export, so zoo models can be profiled by other tools and read back.

Weights have no values in a ``Graph``; each one becomes a ``ConstantOfShape`` node filled
with zeros, fed by a small int64 initializer holding its dims. The file stays tiny (BERT-large
is a few kilobytes), passes the ONNX checker, runs in any ONNX runtime, and the importer
reads every weight back as a constant of the same shape.

Small constants whose values the graph records in ``graph.meta["const_values"]`` (the zoo's
``Clip`` bounds of ReLU6, the attention scale ``1/sqrt(d)``, reshape shapes, split sizes,
position ids) are written as real initializers with those values, in the tensor's dtype and
shape; a recorded constant of more than ``MAX_VALUE_ELEMS`` elements stays a zero fill.

Constants whose *values* decide shapes (a Reshape target, Unsqueeze axes, Slice bounds...)
are written as real initializers derived from the tensor shapes around the op; attributes
that the target opset moved to inputs (``axes``, ``split``, ``pads``, ``shape``, Clip bounds)
are moved there.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper

from npuweave.fileio import write_bytes
from npuweave.workload.graph import Graph, Op

DEFAULT_OPSET = 17
#: Recorded constants up to this many elements are written with their values.
MAX_VALUE_ELEMS = 4096
_IR_FOR_OPSET = [(21, 10), (19, 9), (15, 8), (13, 7), (12, 7), (10, 5), (9, 4), (7, 3)]

Shapes = Callable[[str], tuple[int, ...]]

# (op type, first opset taking the values as inputs, attribute names in input order, from
# input slot)
_ATTR_TO_INPUT = [
    ("Unsqueeze", 13, ("axes",), 1), ("Squeeze", 13, ("axes",), 1),
    ("ReduceSum", 13, ("axes",), 1), ("Split", 13, ("split",), 1), ("Pad", 11, ("pads",), 1),
    ("Reshape", 5, ("shape",), 1), ("Slice", 10, ("starts", "ends", "axes", "steps"), 1),
    ("Clip", 11, ("min", "max"), 1),
]


def _elem_type(dtype: str) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _derived_values(op: Op, shape: Shapes) -> dict[int, list[int]]:
    """Values for an op's shape-deciding constant inputs, from its input and output shapes."""
    x = shape(op.inputs[0]) if op.inputs and op.inputs[0] else ()
    y = shape(op.outputs[0]) if op.outputs else ()
    t = op.op_type
    if t in ("Reshape", "Expand"):
        return {1: list(y)}
    if t == "Tile":
        return {1: [b // a for a, b in zip(x, y, strict=True)]}
    if t == "Unsqueeze":
        return {1: _inserted_axes(x, y)}
    if t == "Squeeze":
        return {1: _inserted_axes(y, x)}
    if t == "Slice":
        return _slice_values(op, x, y, shape)
    if t == "Pad":
        return {1: [0] * len(x) + [b - a for a, b in zip(x, y, strict=True)]}
    if t == "Split":
        axis = int(op.attrs.get("axis", 0))
        return {1: [shape(o)[axis] for o in op.outputs]}
    if t == "Resize":
        return {3: list(y)}
    return {}


def _slice_values(op: Op, x: tuple[int, ...], y: tuple[int, ...],
                  shape: Shapes) -> dict[int, list[int]]:
    """Slice bounds keeping the first ``y[a]`` entries of each axis ``a`` (as many as the
    graph's bound tensors hold; the sliced axes first)."""
    n = shape(op.inputs[1])[0] if len(op.inputs) > 1 and op.inputs[1] else 0
    if len(op.inputs) > 3 and op.inputs[3]:
        changed = [i for i, (a, b) in enumerate(zip(x, y, strict=True)) if a != b]
        axes = (changed + [i for i in range(len(x)) if i not in changed])[:n]
    else:
        axes = list(range(n))
    return {1: [0] * n, 2: [y[a] for a in axes], 3: axes, 4: [1] * n}


def _inserted_axes(small: tuple[int, ...], big: tuple[int, ...]) -> list[int]:
    """Positions of size-1 dims in ``big`` that make it from ``small`` (any valid choice).

    Examples
    --------
    >>> _inserted_axes((3, 4), (1, 3, 1, 4))
    [0, 2]
    """
    axes: list[int] = []
    j = 0
    for i, d in enumerate(big):
        if j < len(small) and small[j] == d:
            j += 1  # matching first is always safe: only a 1 could be inserted instead
        else:
            axes.append(i)
    return axes


def _move_attrs(op: Op, opset: int) -> tuple[Op, dict[int, np.ndarray]]:
    """Move attributes that ``opset`` takes as inputs into explicit input values."""
    for op_type, since, names, slot in _ATTR_TO_INPUT:
        if op.op_type != op_type or opset < since or not any(n in op.attrs for n in names):
            continue
        attrs = dict(op.attrs)
        values: dict[int, np.ndarray] = {}
        inputs = list(op.inputs[:slot])
        for k, name in enumerate(names):
            if name in attrs:
                v = attrs.pop(name)
                dtype = np.float32 if op_type == "Clip" else np.int64
                values[slot + k] = np.asarray(v, dtype=dtype)
                inputs.append(f"{op.name}__{name}")
            else:
                inputs.append("")
        while inputs and not inputs[-1]:
            inputs.pop()
        return Op(op.name, op.op_type, tuple(inputs), op.outputs, attrs), values
    return op, {}


class _Writer:
    """Collects nodes and initializers while walking the graph."""

    def __init__(self, graph: Graph, opset: int) -> None:
        self.graph, self.opset = graph, opset
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.done: dict[str, tuple] = {}
        self.recorded: dict = graph.meta.get("const_values", {})

    def shape(self, name: str) -> tuple[int, ...]:
        return self.graph.tensors[name].shape

    def value(self, name: str, value: np.ndarray) -> str:
        """An initializer with real data; renamed if the name already holds another value."""
        key = (value.dtype.str, value.shape, tuple(value.ravel().tolist()))
        if name in self.done and self.done[name] != key:
            name = f"{name}__{len(self.done)}"
        if name not in self.done:
            self.done[name] = key
            self.inits.append(onnx.numpy_helper.from_array(value, name))
        return name

    def weight(self, name: str) -> None:
        """A zero-filled constant of the tensor's shape and type (no data in the file)."""
        if name in self.done:
            return
        t = self.graph.tensors[name]
        self.done[name] = ("weight",)
        dims = self.value(f"{name}__shape", np.asarray(t.shape, dtype=np.int64))
        fill = helper.make_tensor("value", _elem_type(t.dtype), [1], [0])
        self.nodes.append(helper.make_node("ConstantOfShape", [dims], [name],
                                           name=f"{name}__const", value=fill))

    def recorded_value(self, name: str) -> np.ndarray | None:
        """The recorded values of a small constant, shaped and typed as its tensor."""
        values = self.recorded.get(name)
        t = self.graph.tensors[name]
        if values is None or len(values) != t.numel or t.numel > MAX_VALUE_ELEMS:
            return None
        return np.asarray(values, dtype=np.dtype(t.dtype)).reshape(t.shape)

    def op(self, op: Op) -> None:
        op, moved = _move_attrs(op, self.opset)
        derived = {} if moved else _derived_values(op, self.shape)
        inputs = list(op.inputs)
        for slot, name in enumerate(op.inputs):
            if slot in moved:
                inputs[slot] = self.value(name, moved[slot])
            elif name and name in self.graph.tensors and self.graph.tensors[name].const:
                recorded = self.recorded_value(name)
                if recorded is not None:
                    inputs[slot] = self.value(name, recorded)
                elif slot in derived:
                    inputs[slot] = self.value(name, np.asarray(derived[slot], dtype=np.int64))
                else:
                    self.weight(name)
        attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in op.attrs.items()}
        node = helper.make_node(op.op_type, inputs, list(op.outputs), name=op.name)
        node.attribute.extend(helper.make_attribute(k, v) for k, v in sorted(attrs.items())
                              if v is not None)  # what make_node(**attrs) does
        self.nodes.append(node)


def to_onnx(graph: Graph, opset: int | None = None) -> onnx.ModelProto:
    """Write a graph as an ONNX model (weights as zero-filled ``ConstantOfShape``, recorded
    small constants with their values).

    Parameters
    ----------
    graph : the graph; its shapes are written as they are (batch included).
    opset : default-domain opset; the graph's ``meta["opset"]`` (set by the importer) or 17.

    Examples
    --------
    >>> from npuweave.workload.graph import Graph, Op, Tensor
    >>> ts = {"x": Tensor("x", (1, 8)), "y": Tensor("y", (1, 4)),
    ...       "w": Tensor("w", (8, 4), const=True)}
    >>> m = to_onnx(Graph("fc", [Op("fc", "MatMul", ("x", "w"), ("y",))], ts, ["x"], ["y"]))
    >>> [n.op_type for n in m.graph.node]
    ['ConstantOfShape', 'MatMul']
    """
    opset = int(opset or graph.meta.get("opset") or DEFAULT_OPSET)
    w = _Writer(graph, opset)
    for op in graph.ops:
        w.op(op)

    def info(name: str) -> onnx.ValueInfoProto:
        t = graph.tensors[name]
        return helper.make_tensor_value_info(name, _elem_type(t.dtype), list(t.shape))

    g = helper.make_graph(w.nodes, graph.name or "npuweave", [info(n) for n in graph.inputs],
                          [info(n) for n in graph.outputs], initializer=w.inits)
    ir = next(ir for since, ir in _IR_FOR_OPSET if opset >= since)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="npuweave", ir_version=ir)
    # the opset has its own field and recorded constants are in the file as initializers
    meta = {"source": graph.source,
            **{k: v for k, v in graph.meta.items() if k not in ("opset", "const_values")}}
    helper.set_model_props(model, {f"npuweave.{k}": str(v) for k, v in meta.items()})
    return model


def save_onnx(graph: Graph, path: str | os.PathLike[str], opset: int | None = None) -> None:
    """Write ``to_onnx(graph)`` to ``path`` atomically.

    Examples
    --------
    >>> save_onnx(graph, "bert-base.onnx")  # doctest: +SKIP
    """
    write_bytes(path, to_onnx(graph, opset).SerializeToString())


__all__ = ["DEFAULT_OPSET", "MAX_VALUE_ELEMS", "save_onnx", "to_onnx"]
