"""GEMM dims, weights and spatial geometry of the ops that head a layer.

Shapes are per sample (the graph is at batch 1). ``head_dims`` returns a ``HeadDims`` record
that ``lower`` completes with the fused ops; see ``layer.py`` for the GEMM convention.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from npuweave.workload.graph import Graph, Op
from npuweave.workload.layer import Geometry, LayerKind
from npuweave.workload.opinfo import GATES, RECURRENT_OPS, RECURRENT_VECTOR


@dataclass(frozen=True, slots=True)
class HeadDims:
    """What the head op of a layer contributes on its own."""

    kind: LayerKind
    gemm: tuple[int, int, int, int] | None = None
    weight_elems: int = 0
    channels: int = 0        # output channels a per-channel scale or shift folds into
    has_bias: bool = False
    gather_elems: int = 0
    vector_ops: int = 0
    geometry: Geometry | None = None

    @property
    def macs(self) -> int:
        return prod(self.gemm) if self.gemm else 0


def _shape(graph: Graph, name: str) -> tuple[int, ...]:
    return graph.tensors[name].shape


def _numel(graph: Graph, name: str) -> int:
    return graph.tensors[name].numel if name else 0


def _const(graph: Graph, name: str) -> bool:
    return bool(name) and graph.tensors[name].const


def same_pads(in_size: int, out_size: int, stride: int, eff_kernel: int,
              mode: str) -> tuple[int, int]:
    """Begin and end padding of one spatial dim for ``auto_pad`` SAME_UPPER / SAME_LOWER.

    Examples
    --------
    >>> same_pads(224, 112, 2, 7, "SAME_UPPER")
    (2, 3)
    """
    total = max((out_size - 1) * stride + eff_kernel - in_size, 0)
    small = total // 2
    return (small, total - small) if mode == "SAME_UPPER" else (total - small, small)


def window(op: Op, in_hw: tuple[int, ...], out_hw: tuple[int, ...],
           kernel: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Strides, dilations and (begin..., end...) pads of a conv or pool, ``auto_pad`` applied."""
    nd = len(kernel)
    strides = tuple(op.attrs.get("strides", [1] * nd))
    dil = tuple(op.attrs.get("dilations", [1] * nd))
    mode = op.attrs.get("auto_pad", "NOTSET")
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        pairs = [same_pads(in_hw[i], out_hw[i], strides[i], dil[i] * (kernel[i] - 1) + 1, mode)
                 for i in range(nd)]
        pads = tuple(p[0] for p in pairs) + tuple(p[1] for p in pairs)
    elif mode == "VALID":
        pads = (0,) * (2 * nd)
    else:
        pads = tuple(op.attrs.get("pads", [0] * (2 * nd)))
    return strides, dil, pads


def geometry(op: Op, x: tuple[int, ...], y: tuple[int, ...], kernel: tuple[int, ...],
             groups: int = 1) -> Geometry | None:
    """NCHW geometry of a 1-D or 2-D conv/pool (1-D as height 1); None for other ranks."""
    if len(x) not in (3, 4):
        return None
    strides, dil, pads = window(op, x[2:], y[2:], kernel)
    if len(x) == 3:  # (N, C, L): a row of height 1
        return Geometry((x[1], 1, x[2]), (y[1], 1, y[2]), (1, kernel[0]), (1, strides[0]),
                        (0, pads[0], 0, pads[1]), (1, dil[0]), groups)
    return Geometry((x[1], x[2], x[3]), (y[1], y[2], y[3]), (kernel[0], kernel[1]),
                    (strides[0], strides[1]), (pads[0], pads[1], pads[2], pads[3]),
                    (dil[0], dil[1]), groups)


def _bias(graph: Graph, op: Op, index: int) -> int:
    return _numel(graph, op.inputs[index]) if len(op.inputs) > index else 0


def _conv(graph: Graph, op: Op) -> HeadDims:
    x, w, y = _shape(graph, op.inputs[0]), _shape(graph, op.inputs[1]), _shape(graph, op.outputs[0])
    g = int(op.attrs.get("group", 1))
    kernel = tuple(w[2:])
    if op.op_type == "ConvTranspose":  # W is (Cin, Cout/g, k...): each input pixel scatters
        gemm = (g, prod(x[2:]), x[1] // g, w[1] * prod(kernel))
    else:
        gemm = (g, prod(y[2:]), w[1] * prod(kernel), w[0] // g)
    bias = _bias(graph, op, 2)
    # a transposed conv's rows do not map to input rows through a window: no geometry
    geom = geometry(op, x, y, kernel, g) if op.op_type == "Conv" else None
    return HeadDims(LayerKind.CONV, gemm, prod(w) + bias, y[1], bias > 0, geometry=geom)


def _gemm(graph: Graph, op: Op) -> HeadDims:
    a, b = _shape(graph, op.inputs[0]), _shape(graph, op.inputs[1])
    m, k = (a[1], a[0]) if op.attrs.get("transA", 0) else (a[0], a[1])
    n = b[0] if op.attrs.get("transB", 0) else b[1]
    bias = _bias(graph, op, 2) if len(op.inputs) > 2 and _const(graph, op.inputs[2]) else 0
    if _const(graph, op.inputs[1]):
        return HeadDims(LayerKind.GEMM, (1, m, k, n), prod(b) + bias, n, bias > 0)
    if _const(graph, op.inputs[0]):  # weights on the left: the activation's columns are rows
        return HeadDims(LayerKind.GEMM, (1, n, k, m), prod(a) + bias, m, bias > 0)
    return HeadDims(LayerKind.MATMUL, (1, m, k, n))


def _matmul(graph: Graph, op: Op) -> HeadDims:
    a, b = _shape(graph, op.inputs[0]), _shape(graph, op.inputs[1])
    a = (1, *a) if len(a) == 1 else a
    b = (*b, 1) if len(b) == 1 else b
    k = a[-1]
    if _const(graph, op.inputs[1]) and len(b) == 2:  # one weight matrix for every row
        return HeadDims(LayerKind.GEMM, (1, prod(a[:-1]), k, b[-1]), prod(b), b[-1])
    if _const(graph, op.inputs[0]) and len(a) == 2:
        return HeadDims(LayerKind.GEMM, (prod(b[:-2]), b[-1], k, a[0]), prod(a), a[0])
    lead = _broadcast(a[:-2], b[:-2])
    kind = LayerKind.GEMM if _const(graph, op.inputs[1]) or _const(graph, op.inputs[0]) \
        else LayerKind.MATMUL
    weights = sum(prod(_shape(graph, t)) for t in op.inputs if _const(graph, t))
    return HeadDims(kind, (prod(lead), a[-2], k, b[-1]), weights if kind == LayerKind.GEMM else 0)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b, strict=True))


def _recurrent(graph: Graph, op: Op) -> HeadDims:
    x, w = _shape(graph, op.inputs[0]), _shape(graph, op.inputs[1])
    directions, gates_h, inp = w
    hidden = gates_h // GATES[op.op_type]
    steps = x[0] if op.attrs.get("layout", 0) == 0 else x[1]
    weight_slots = (1, 2, 3, 7) if op.op_type == "LSTM" else (1, 2, 3)
    weights = sum(_numel(graph, op.inputs[i]) for i in weight_slots
                  if i < len(op.inputs) and _const(graph, op.inputs[i]))
    vec = directions * steps * hidden * RECURRENT_VECTOR[op.op_type]
    return HeadDims(LayerKind.RECURRENT, (directions * steps, 1, inp + hidden, gates_h),
                    weights, vector_ops=vec)


def _embedding(graph: Graph, op: Op) -> HeadDims:
    return HeadDims(LayerKind.EMBEDDING, None, _numel(graph, op.inputs[0]),
                    gather_elems=_numel(graph, op.outputs[0]))


def head_dims(graph: Graph, op: Op) -> HeadDims:
    """Dims of a main op (Conv, Gemm, MatMul, recurrent, embedding); VECTOR for the rest.

    Examples
    --------
    >>> from npuweave.workload.graph import Graph, Op, Tensor
    >>> ts = {"x": Tensor("x", (1, 32, 8, 8)), "y": Tensor("y", (1, 32, 8, 8)),
    ...       "w": Tensor("w", (32, 1, 3, 3), const=True)}
    >>> dw = Op("dw", "Conv", ("x", "w"), ("y",), {"group": 32, "pads": [1, 1, 1, 1]})
    >>> head_dims(Graph("g", [dw], ts, ["x"], ["y"]), dw).gemm
    (32, 64, 9, 1)
    """
    if op.op_type in ("Conv", "ConvTranspose"):
        return _conv(graph, op)
    if op.op_type == "Gemm":
        return _gemm(graph, op)
    if op.op_type == "MatMul":
        return _matmul(graph, op)
    if op.op_type in RECURRENT_OPS:
        return _recurrent(graph, op)
    if op.op_type == "Gather":
        return _embedding(graph, op)
    return HeadDims(LayerKind.VECTOR)
