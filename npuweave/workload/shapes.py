"""Static shapes for every tensor of an ONNX graph: ONNX shape inference plus constant folding.

The importer fixes the runtime input shapes (batch 1), then alternates two steps until
nothing new is learned: fold the constant shape computations that can be evaluated (``Shape``
of a tensor whose shape is known, and the integer arithmetic after it), and run
``onnx.shape_inference`` on a lean copy of the graph in which folded values are initializers
and weights are typed inputs (so their data, absent or not, is never copied).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper

from npuweave.workload.fold import MAX_FOLD_ELEMS, fold

Shape = tuple[int, ...]

# ops whose outputs change from run to run even on constant inputs
_RUNTIME_ONLY = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike",
                           "RandomUniformLike", "Multinomial", "Bernoulli"})
_MAX_ROUNDS = 8


def static_shape(value_type: onnx.TypeProto) -> Shape | None:
    """The shape in an ONNX type if every dim is a number, else None.

    Examples
    --------
    >>> from onnx import helper, TensorProto
    >>> vi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])
    >>> static_shape(vi.type)
    (1, 3)
    """
    tt = value_type.tensor_type
    if not tt.HasField("shape"):
        return None
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(int(d.dim_value))
    return tuple(dims)


def attrs_of(node: onnx.NodeProto) -> dict:
    """A node's attributes as plain Python values (tensors stay ``TensorProto``)."""
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        elif isinstance(v, list):
            v = [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


@dataclass
class ShapeState:
    """What is known about the graph's tensors: static shapes, element types, constants."""

    nodes: list[onnx.NodeProto]
    opset: int
    shapes: dict[str, Shape] = field(default_factory=dict)
    elem_types: dict[str, int] = field(default_factory=dict)
    const: set[str] = field(default_factory=set)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    weights: list[onnx.ValueInfoProto] = field(default_factory=list)
    inputs: list[onnx.ValueInfoProto] = field(default_factory=list)
    protos: dict[str, onnx.TensorProto] = field(default_factory=dict)
    settled: set[int] = field(default_factory=set)  # nodes that no later pass can change

    def add_initializer(self, init: onnx.TensorProto) -> None:
        self.const.add(init.name)
        self.shapes[init.name] = tuple(int(d) for d in init.dims)
        self.elem_types[init.name] = init.data_type
        if _has_small_value(init):
            self.protos[init.name] = init
        else:
            self.weights.append(helper.make_tensor_value_info(init.name, init.data_type,
                                                              list(init.dims)))

    def add_input(self, name: str, elem_type: int, shape: Shape) -> None:
        self.shapes[name] = shape
        self.elem_types[name] = elem_type
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, list(shape)))

    def fold_pass(self) -> int:
        """Mark constant node outputs and evaluate what can be; return how many were new."""
        new = 0
        for idx, node in enumerate(self.nodes):
            if idx in self.settled:
                continue
            outs = [o for o in node.output if o]
            ins = [i for i in node.input if i]
            if node.op_type in ("Shape", "Size") and ins and ins[0] in self.shapes:
                self.const.update(outs)
                self.values[outs[0]] = _shape_value(node, self.shapes[ins[0]])
                self.settled.add(idx)
                new += 1
                continue
            if node.op_type in _RUNTIME_ONLY or not all(i in self.const for i in ins):
                continue
            self.const.update(outs)
            if not all(self.has_value(i) for i in ins):
                continue
            self.settled.add(idx)
            args = [self.value(i) if i else None for i in node.input]
            result = fold(node.op_type, attrs_of(node), args, self.opset)
            if result is not None:
                for name, val in zip(outs, result, strict=False):
                    self.values[name] = val
                    self.shapes[name] = tuple(val.shape)
                new += 1
        return new

    def has_value(self, name: str) -> bool:
        return name in self.values or name in self.protos

    def value(self, name: str) -> np.ndarray:
        """A constant's value (initializers are converted on first use)."""
        if name not in self.values:
            self.values[name] = numpy_helper.to_array(self.protos[name])
        return self.values[name]

    def _lean_model(self, outputs: list[onnx.ValueInfoProto],
                    opset_imports: list) -> onnx.ModelProto:
        """The graph of the nodes not folded, with known values as initializers."""
        kept = [n for n in self.nodes if not all(o in self.values for o in n.output if o)]
        used = {i for n in kept for i in n.input}
        inits = [self.protos[k] if k in self.protos else numpy_helper.from_array(self.values[k], k)
                 for k in used if self.has_value(k)]
        outs = [helper.make_empty_tensor_value_info(o.name) for o in outputs]
        graph = helper.make_graph(kept, "infer", self.inputs + self.weights, outs,
                                  initializer=inits)
        model = helper.make_model(graph, opset_imports=opset_imports)
        model.ir_version = onnx.IR_VERSION
        return model

    def infer(self, outputs: list[onnx.ValueInfoProto], opset_imports: list) -> None:
        """Run ONNX shape inference on the nodes not folded yet; record static shapes."""
        model = self._lean_model(outputs, opset_imports)
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False)
        for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
            shape = static_shape(vi.type)
            if shape is not None and vi.name not in self.shapes:
                self.shapes[vi.name] = shape
                self.elem_types[vi.name] = vi.type.tensor_type.elem_type

    def resolve(self, outputs: list[onnx.ValueInfoProto], opset_imports: list) -> None:
        """Fold and infer until a round learns nothing new."""
        self.fold_pass()
        for _ in range(_MAX_ROUNDS):
            self.infer(outputs, opset_imports)
            if self.fold_pass() == 0:  # no new value: inferring again would learn nothing
                break

    def first_error(self, outputs: list[onnx.ValueInfoProto], opset_imports: list) -> str:
        """The message of strict shape inference, to explain why shapes are missing."""
        model = self._lean_model(outputs, opset_imports)
        try:
            onnx.shape_inference.infer_shapes(model, strict_mode=True)
        except Exception as exc:  # onnx raises several types; only the text is wanted
            return str(exc).strip().splitlines()[-1][:300]
        return ""


def _shape_value(node: onnx.NodeProto, shape: Shape) -> np.ndarray:
    if node.op_type == "Size":
        return np.array(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    attrs = attrs_of(node)
    start, end = attrs.get("start", 0), attrs.get("end", len(shape))
    return np.array(shape[start:end], dtype=np.int64)


_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "int64_data", "double_data",
                "uint64_data", "string_data")


def _has_small_value(init: onnx.TensorProto) -> bool:
    """True if the initializer's data is present and small (shape data, not weights)."""
    numel = int(np.prod(init.dims, dtype=np.int64)) if init.dims else 1
    if numel > MAX_FOLD_ELEMS or init.data_location == onnx.TensorProto.EXTERNAL:
        return False
    if init.raw_data:
        itemsize = helper.tensor_dtype_to_np_dtype(init.data_type).itemsize
        return len(init.raw_data) == numel * itemsize
    return any(len(getattr(init, f)) > 0 for f in _DATA_FIELDS[1:]) or numel == 0
