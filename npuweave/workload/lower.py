"""Lowering: a ``Graph`` (batch 1) to the ordered list of schedulable ``Layer``s.

``fusion.fuse`` decides which ops form each layer; this module measures each group.

Weight rule (``weight_elems``): the head's weights and bias, plus the constant operands of
the ops fused after it, except those that fold away. Right after a Conv/Gemm, while only
affine ops have followed, a BatchNormalization and a Mul/Div/Add/Sub by a per-channel or
scalar constant fold into the weights and the bias; a layer that gains a shift this way
and had no bias gets one (``channels`` elements). Folded ops cost no vector work either.
After a nonlinearity, a BatchNormalization keeps 2 parameters per channel (scale, shift);
other constant operands count in full, scalars never. Attention (MATMUL) and VECTOR layers
hold no weights, as ``Layer`` specifies.

A fold needs the op to be the only reader of its input: in a fused diamond such as
``x * sigmoid(x)`` or a decomposed LayerNorm (see ``fusion``), the conv's output is read
twice and an Add/Mul on one branch must not be folded into the shared weights.

Geometry: a conv's, or a pooling layer's; when pooling is fused after a conv the layer's
geometry is the composition (effective kernel ``kc + (kp - 1) * sc``, stride ``sc * sp``,
pads ``pc + pp * sc``), so that output rows still map to input rows for H-slicing. A
geometry always describes the layer's *first* input, which is why windowed pooling never
fuses into a Concat layer (its several inputs are at the pre-pool resolution): a Concat
then MaxPool lowers to a pass-through Concat layer and a pooling layer with the pool's
geometry (``in_chw`` = the concat output), both of which the layer-group compiler slices.
"""

from __future__ import annotations

from dataclasses import replace
from math import prod

from npuweave.workload.dims import HeadDims, geometry, head_dims
from npuweave.workload.fusion import GRAPH_INPUT, Fusion, Group, fuse, use_counts
from npuweave.workload.graph import Graph, Op
from npuweave.workload.layer import Geometry, Layer, LayerKind
from npuweave.workload.opinfo import (
    GLOBAL_POOL_OPS,
    POOL_OPS,
    SCALE_FOLD_OPS,
    SHIFT_FOLD_OPS,
    mixes_rows,
    vector_cost,
)

_WEIGHTED = (LayerKind.CONV, LayerKind.GEMM, LayerKind.RECURRENT, LayerKind.EMBEDDING)


def lower(graph: Graph) -> list[Layer]:
    """Lower a batch-1 graph to layers in a valid execution order.

    Examples
    --------
    >>> from npuweave.workload.graph import Graph, Op, Tensor
    >>> ts = {"x": Tensor("x", (1, 64)), "y": Tensor("y", (1, 10)), "z": Tensor("z", (1, 10)),
    ...       "w": Tensor("w", (64, 10), const=True), "b": Tensor("b", (10,), const=True)}
    >>> ops = [Op("fc", "Gemm", ("x", "w", "b"), ("y",)), Op("sm", "Softmax", ("y",), ("z",))]
    >>> [(l.name, l.ops, l.macs, l.weight_elems) for l in lower(Graph("g", ops, ts, ["x"], ["z"]))]
    [('fc', ('Gemm', 'Softmax'), 640, 650)]
    """
    fusion = fuse(graph)
    exits = _exits(graph, fusion)
    names = {g.index: g.ops[0].name for g in fusion.groups}
    uses = use_counts(graph)
    return [_layer(graph, fusion, grp, exits, names, uses) for grp in fusion.groups]


def _exits(graph: Graph, fusion: Fusion) -> set[str]:
    """Tensors produced in a group and read outside it (or graph outputs), by alias root."""
    root: dict[str, str] = {}
    producer_group: dict[str, int] = {}
    for grp in fusion.groups:
        for op in grp.ops:
            for t in op.outputs:
                root[t] = t
                producer_group[t] = grp.index
    member_of = {op.name: grp.index for grp in fusion.groups for op in grp.ops}
    out: set[str] = set()
    for op in graph.ops:
        r = fusion.roles.get(op.name)
        for t in op.inputs:
            if t not in root:
                continue
            if r == "free":
                for o in op.outputs:
                    root[o] = root[t]
            elif r != "const" and member_of.get(op.name) != producer_group[root[t]]:
                out.add(root[t])
    out.update(root[t] for t in graph.outputs if t in root)
    return out


def _layer(graph: Graph, fusion: Fusion, grp: Group, exits: set[str],
           names: dict[int, str], uses: dict[str, int]) -> Layer:
    head = grp.ops[0]
    hd = head_dims(graph, head)
    if hd.kind == LayerKind.VECTOR:
        hd = replace(hd, geometry=_pool_geometry(graph, head))
    weights, vec, geom = _fused(graph, grp, hd, uses)
    external = _external_inputs(graph, fusion, grp)
    outs = [t for op in grp.ops for t in op.outputs if t in exits]
    out_elems = sum(graph.tensors[t].numel for t in outs) or graph.tensors[head.outputs[0]].numel
    return Layer(
        name=head.name,
        kind=hd.kind,
        ops=tuple(op.op_type for op in grp.ops),
        gemm=hd.gemm,
        macs=hd.macs,
        vector_ops=vec,
        weight_elems=weights if hd.kind in _WEIGHTED else 0,
        in_elems=sum(graph.tensors[t].numel for t, _ in external),
        out_elems=out_elems,
        gather_elems=hd.gather_elems,
        inputs=tuple(dict.fromkeys(names.get(g, "") for _, g in external)),
        geometry=geom,
        splittable_h=_splittable(graph, grp, hd.kind, geom),
        attrs=(("members", tuple(op.name for op in grp.ops)),),
    )


def _external_inputs(graph: Graph, fusion: Fusion, grp: Group) -> list[tuple[str, int]]:
    """Distinct activation tensors the group reads from elsewhere, with their owner group."""
    seen: dict[str, int] = {}
    for op in grp.ops:
        for t in op.inputs:
            if t and not graph.tensors[t].const and t not in seen:
                g = fusion.owner.get(t, GRAPH_INPUT)
                if g != grp.index:
                    seen[t] = g
    return list(seen.items())


def _fused(graph: Graph, grp: Group, hd: HeadDims,
           uses: dict[str, int]) -> tuple[int, int, Geometry | None]:
    """Weights, vector ops and geometry of the head plus its fused ops."""
    affine = hd.kind in (LayerKind.CONV, LayerKind.GEMM) and hd.channels > 0
    weights, vec, needs_bias, geom = hd.weight_elems, hd.vector_ops, False, hd.geometry
    members = grp.ops if hd.kind == LayerKind.VECTOR else grp.ops[1:]
    for op in members:
        consts = [t for t in op.inputs if t and graph.tensors[t].const]
        data = [t for t in op.inputs if t and not graph.tensors[t].const]
        folds = (affine and len(data) == 1 and uses.get(data[0], 0) == 1
                 and op.op_type in SCALE_FOLD_OPS | SHIFT_FOLD_OPS
                 and all(graph.tensors[t].numel in (1, hd.channels) for t in consts))
        affine = folds
        if folds:
            needs_bias |= op.op_type in SHIFT_FOLD_OPS
            continue
        weights += _param_elems(graph, op, consts)
        vec += _op_vector(graph, op, data)
        if op.op_type in POOL_OPS and op is not grp.ops[0]:
            geom = _compose(geom, _pool_geometry(graph, op))
    if needs_bias and not hd.has_bias:
        weights += hd.channels
    return weights, vec, geom


def _param_elems(graph: Graph, op: Op, consts: list[str]) -> int:
    if op.op_type == "BatchNormalization":  # mean and variance fold into scale and shift
        return 2 * graph.tensors[op.inputs[1]].numel
    return sum(graph.tensors[t].numel for t in consts if graph.tensors[t].numel > 1)


def _op_vector(graph: Graph, op: Op, data: list[str]) -> int:
    out = graph.tensors[op.outputs[0]].numel
    inp = graph.tensors[data[0]].numel if data else out
    area = prod(op.attrs.get("kernel_shape", [1])) if op.op_type in POOL_OPS else 1
    return vector_cost(op.op_type, op.attrs, inp, out, area)


def _pool_geometry(graph: Graph, op: Op) -> Geometry | None:
    if op.op_type not in POOL_OPS:
        return None
    x, y = graph.tensors[op.inputs[0]].shape, graph.tensors[op.outputs[0]].shape
    return geometry(op, x, y, tuple(op.attrs.get("kernel_shape", [1] * (len(x) - 2))))


def _compose(first: Geometry | None, then: Geometry | None) -> Geometry | None:
    """The geometry of ``then`` applied to the output of ``first`` (one window, no dilation)."""
    if first is None or then is None:
        return first
    (dh, dw), (kh, kw), (ph, pw) = first.dilation, first.kernel, then.kernel
    sh, sw = first.stride
    kernel = (dh * (kh - 1) + 1 + (ph - 1) * sh, dw * (kw - 1) + 1 + (pw - 1) * sw)
    stride = (sh * then.stride[0], sw * then.stride[1])
    p, q = first.pads, then.pads
    pads = (p[0] + q[0] * sh, p[1] + q[1] * sw, p[2] + q[2] * sh, p[3] + q[3] * sw)
    return Geometry(first.in_chw, then.out_chw, kernel, stride, pads, (1, 1), first.groups)


def _splittable(graph: Graph, grp: Group, kind: LayerKind, geom: Geometry | None) -> bool:
    """Rows of the output need only a band of input rows (4-D conv and vector layers)."""
    if kind not in (LayerKind.CONV, LayerKind.VECTOR) or (kind == LayerKind.CONV and geom is None):
        return False
    if geom is not None and geom.out_chw[1] == 1 and geom.in_chw[1] > 1:
        return False  # a single output row reads every input row
    head = grp.ops[0]
    data = [t for t in head.inputs if t and not graph.tensors[t].const]
    if not data or len(graph.tensors[data[0]].shape) != 4:
        return False
    for op in grp.ops:
        if op.op_type in GLOBAL_POOL_OPS or mixes_rows(op.op_type, op.attrs, 4):
            return False
    return True
