"""A small graph IR: ``Tensor``s with static shapes and ``Op``s in topological order.

Both the ONNX importer and the built-in zoo produce a ``Graph``; ``lower`` turns it into the
ordered list of schedulable ``Layer``s. Shapes are fully static (batch included) once a graph
is built; ``Graph.with_batch`` is the importer's business, not the IR's.

Op types use ONNX spellings (``Conv``, ``Gemm``, ``MatMul``, ``Relu``...), so a zoo graph can be
exported as ONNX without translation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Tensor:
    """A value in the graph.

    ``const`` marks parameters (weights, biases, embedding tables) and other compile-time
    constants; their values are never needed, only their shapes.
    """

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    const: bool = False

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True, slots=True)
class Op:
    """One operator: ONNX op type, input/output tensor names, and attributes.

    An empty string in ``inputs`` is an omitted optional input, as in ONNX.
    """

    name: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)


@dataclass(slots=True)
class Graph:
    """A DNN as ops in topological order plus every tensor they touch.

    Parameters
    ----------
    name : model name (zoo name or ONNX file stem).
    ops : ops in a valid topological order.
    tensors : every tensor by name, with static shape.
    inputs, outputs : names of the graph's runtime inputs and outputs (constants excluded).
    source : where it came from (file path or ``zoo:<name>``), for error messages.
    """

    name: str
    ops: list[Op]
    tensors: dict[str, Tensor]
    inputs: list[str]
    outputs: list[str]
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def tensor(self, name: str) -> Tensor:
        return self.tensors[name]

    def producers(self) -> dict[str, Op]:
        """Map each tensor name to the op that produces it."""
        return {out: op for op in self.ops for out in op.outputs}

    def consumers(self) -> dict[str, list[Op]]:
        """Map each tensor name to the ops that read it, in op order."""
        users: dict[str, list[Op]] = {}
        for op in self.ops:
            for name in op.inputs:
                if name:
                    users.setdefault(name, []).append(op)
        return users
