"""Validate an imported graph with ONNX's own op semantics before anything is costed.

ONNX shape inference is lenient: a 7x7 convolution on a 2x2 input gets output dims
``(8, -4, -4)``, a channel mismatch or a ``group`` that does not divide the channels passes
through. Costing such a graph multiplies negative dims into MACs, or divides by zero. This
pass rejects every op that could not run, naming the node and what to fix.
"""

from __future__ import annotations

from math import prod
from typing import Any

from npuweave.errors import ModelImportError
from npuweave.workload.graph import Graph, Op

_CONV = ("Conv", "ConvInteger", "QLinearConv")
# per tensor at batch 1: 2**36 elements is 256 GiB of float32, far past any NPU's DRAM; the
# layer-group search slices by rows, so a larger tensor only makes every command crawl
MAX_TENSOR_ELEMS = 2**36
_POOL = ("MaxPool", "AveragePool", "LpPool")


def check_graph(graph: Graph, source: str) -> None:
    """Raise ``ModelImportError`` for the first ops whose shapes or attributes cannot run.

    Examples
    --------
    >>> from npuweave.workload.graph import Graph, Op, Tensor
    >>> ts = {"x": Tensor("x", (1, 3, 2, 2)), "w": Tensor("w", (8, 3, 7, 7), const=True),
    ...       "y": Tensor("y", (1, 8, -4, -4))}
    >>> g = Graph("g", [Op("c", "Conv", ("x", "w"), ("y",))], ts, ["x"], ["y"])
    >>> check_graph(g, "m.onnx")
    Traceback (most recent call last):
    ...
    npuweave.errors.ModelImportError: m.onnx: node 'c' (Conv): kernel 7 (dilated 7) on axis 2 is larger than the padded input 2; the model cannot run: fix the node's attributes or input shapes and re-export
    """
    problems: list[str] = []
    for t in graph.tensors.values():
        if all(d >= 0 for d in t.shape) and prod(t.shape) > MAX_TENSOR_ELEMS:
            raise ModelImportError(
                f"{source}: tensor '{t.name}' {t.shape} has {prod(t.shape)} elements, over the "
                f"limit {MAX_TENSOR_ELEMS} (npuweave.workload.checks.MAX_TENSOR_ELEMS); give "
                "the model realistic input shapes")
    for op in graph.ops:
        msg = _check_op(graph, op)
        if msg:
            problems.append(f"node '{op.name}' ({op.op_type}): {msg}")
        if len(problems) >= 5:
            break
    if problems:
        raise ModelImportError(f"{source}: " + "; ".join(problems) + "; the model cannot run: "
                               "fix the node's attributes or input shapes and re-export")


def _shape(graph: Graph, name: str) -> tuple[int, ...] | None:
    t = graph.tensors.get(name) if name else None
    return None if t is None else t.shape


def _check_op(graph: Graph, op: Op) -> str:
    for t in (*op.inputs, *op.outputs):
        shape = _shape(graph, t)
        if shape is not None and any(d < 0 for d in shape):
            kind = "an output" if t in op.outputs else "an input"
            why = _conv_like(graph, op) if op.op_type in _CONV + _POOL else ""
            return why or f"{kind} '{t}' has a negative dim {shape}"
    if op.op_type in _CONV + _POOL:
        return _conv_like(graph, op)
    if op.op_type == "ConvTranspose":
        return _conv_transpose(graph, op)
    if op.op_type == "Gemm":
        return _gemm(graph, op)
    if op.op_type == "MatMul":
        return _matmul(graph, op)
    return ""


def _ints(value: Any, n: int, default: int, name: str) -> tuple[list[int], str]:
    if value is None:
        return [default] * n, ""
    vals = [int(v) for v in value]
    if len(vals) != n:
        return vals, f"{name} has {len(vals)} values for {n} spatial axes"
    return vals, ""


def _conv_like(graph: Graph, op: Op) -> str:
    x = _shape(graph, op.inputs[0])
    if x is None or len(x) < 3:
        return f"input must be (N, C, spatial...), got {x}" if x is not None else ""
    n_sp = len(x) - 2
    a = op.attrs
    is_conv = op.op_type in _CONV
    w = _shape(graph, op.inputs[3 if op.op_type == "QLinearConv" else 1]) if is_conv else None
    if is_conv and w is not None:
        msg = _conv_channels(x, w, a)
        if msg:
            return msg
        default_kernel = list(w[2:])
    else:
        default_kernel = []
    kernel = [int(k) for k in a.get("kernel_shape", default_kernel)]
    if len(kernel) != n_sp:
        return f"kernel_shape {kernel} does not match {n_sp} spatial axes of input {x}"
    strides, bad1 = _ints(a.get("strides"), n_sp, 1, "strides")
    dil, bad2 = _ints(a.get("dilations"), n_sp, 1, "dilations")
    pads, bad3 = _ints(a.get("pads"), 2 * n_sp, 0, "pads")
    for bad in (bad1, bad2, bad3):
        if bad:
            return bad
    if any(k < 1 for k in kernel) or any(s < 1 for s in strides) or any(d < 1 for d in dil):
        return (f"kernel {kernel}, strides {strides} and dilations {dil} must all be >= 1")
    if any(p < 0 for p in pads):
        return f"pads {pads} must be >= 0"
    if str(a.get("auto_pad", "NOTSET")) in ("SAME_UPPER", "SAME_LOWER"):
        return ""
    for i in range(n_sp):
        eff = dil[i] * (kernel[i] - 1) + 1
        padded = x[2 + i] + pads[i] + pads[i + n_sp]
        if eff > padded:
            return (f"kernel {kernel[i]} (dilated {eff}) on axis {2 + i} is larger than the "
                    f"padded input {padded}")
    return ""


def _conv_channels(x: tuple[int, ...], w: tuple[int, ...], a: dict[str, Any]) -> str:
    group = int(a.get("group", 1))
    if group < 1:
        return f"group={group}; it must be >= 1"
    if len(w) != len(x):
        return f"weight shape {w} has rank {len(w)}, input {x} has rank {len(x)}"
    channels = x[1]
    if channels % group:
        return f"group={group} does not divide the {channels} input channels"
    if w[0] % group:
        return f"group={group} does not divide the {w[0]} output channels"
    if w[1] * group != channels:
        return (f"weight shape {w} expects {w[1] * group} input channels "
                f"({w[1]} per group x group {group}), the input has {channels}")
    return ""


def _conv_transpose(graph: Graph, op: Op) -> str:
    x, w = _shape(graph, op.inputs[0]), _shape(graph, op.inputs[1])
    group = int(op.attrs.get("group", 1))
    if group < 1:
        return f"group={group}; it must be >= 1"
    if x is None or w is None or len(x) < 3:
        return ""
    if len(w) != len(x):
        return f"weight shape {w} has rank {len(w)}, input {x} has rank {len(x)}"
    if x[1] % group or w[0] != x[1]:
        return (f"weight shape {w} (C, M/group, k...) does not fit {x[1]} input channels "
                f"with group={group}")
    if any(int(s) < 1 for s in op.attrs.get("strides", [1])):
        return f"strides {list(op.attrs.get('strides', []))} must all be >= 1"
    return ""


def _gemm(graph: Graph, op: Op) -> str:
    a, b = _shape(graph, op.inputs[0]), _shape(graph, op.inputs[1])
    if a is None or b is None:
        return ""
    if len(a) != 2 or len(b) != 2:
        return f"inputs must be 2-D, got {a} and {b}"
    k_a = a[0] if op.attrs.get("transA", 0) else a[1]
    k_b = b[1] if op.attrs.get("transB", 0) else b[0]
    if k_a != k_b:
        return f"inner dims differ: A {a} gives K={k_a}, B {b} gives K={k_b} (transA/transB)"
    return ""


def _matmul(graph: Graph, op: Op) -> str:
    a, b = _shape(graph, op.inputs[0]), _shape(graph, op.inputs[1])
    if a is None or b is None or not a or not b:
        return ""
    k_a = a[-1]
    k_b = b[0] if len(b) == 1 else b[-2]
    if k_a != k_b:
        return f"inner dims differ: {a} @ {b}"
    if prod(a) == 0 or prod(b) == 0:
        return f"an input is empty: {a} @ {b}"
    return ""
