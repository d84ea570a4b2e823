"""Fusion: partition a ``Graph``'s ops into groups, each of which becomes one ``Layer``.

Rules (one pass over the ops in topological order, linear in the graph size):

* Constant ops (all inputs constant) and shape-only ops (``opinfo.FREE_OPS``) join no group;
  a free op's outputs are *aliases* of its data input and belong to that input's group.
* A main op (Conv, Gemm, MatMul, LSTM/GRU/RNN, embedding Gather) and a Concat always start
  a new group.
* A vector op joins the group of one of its inputs when that group is still *open*, i.e.
  every pending use of every tensor the group has produced is an input of this op. That
  covers sole-consumer chains (Conv -> BN -> Relu -> MaxPool) and residual Adds (the Add
  joins the group of the input produced last). Otherwise it starts a vector group of its
  own; so ``x * sigmoid(x)`` after a Conv becomes Conv, then (Sigmoid, Mul): the Sigmoid is
  not the Conv's only reader, and a layer keeps a single output.
* A group that anything outside it reads is closed.

Groups are ordered by their last op, which keeps the layer list topologically sorted: a
group's outputs are only read once its last op has run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from npuweave.workload.graph import Graph, Op
from npuweave.workload.opinfo import FREE_OPS, JOIN_OPS, MAIN_OPS

GRAPH_INPUT = -1


@dataclass
class Group:
    """Ops fused into one layer: ``ops[0]`` is the head (main op or first vector op)."""

    index: int
    ops: list[Op]
    last: int            # position of the last member in graph.ops
    pending: int = 0     # uses of the group's tensors not yet seen
    closed: bool = False
    members: set[str] = field(default_factory=set)


def role(op: Op, graph: Graph) -> str:
    """``"const"``, ``"free"``, ``"main"``, ``"join"`` or ``"vector"`` for one op.

    Examples
    --------
    >>> from npuweave.workload.graph import Graph, Op, Tensor
    >>> g = Graph("g", [], {"x": Tensor("x", (1, 4))}, ["x"], [])
    >>> role(Op("r", "Relu", ("x",), ("y",)), g)
    'vector'
    """
    data = [t for t in op.inputs if t and not _is_const(graph, t)]
    if not data and op.inputs:
        return "const"
    if op.op_type == "Gather":
        return "main" if _is_const(graph, op.inputs[0]) else "free"
    if op.op_type in MAIN_OPS:
        return "main"
    if op.op_type in FREE_OPS:
        return "free"
    return "join" if op.op_type in JOIN_OPS else "vector"


def _is_const(graph: Graph, name: str) -> bool:
    t = graph.tensors.get(name)
    return t is not None and t.const


def use_counts(graph: Graph) -> dict[str, int]:
    """How many op inputs (plus graph outputs) read each tensor."""
    uses: dict[str, int] = {}
    for op in graph.ops:
        for t in op.inputs:
            if t:
                uses[t] = uses.get(t, 0) + 1
    for t in graph.outputs:
        uses[t] = uses.get(t, 0) + 1
    return uses


@dataclass
class Fusion:
    """The result of ``fuse``: groups in layer order and each tensor's owning group."""

    groups: list[Group]
    owner: dict[str, int]
    roles: dict[str, str]


def fuse(graph: Graph) -> Fusion:
    """Partition ``graph.ops`` into fused groups (see the module docstring for the rules).

    Examples
    --------
    >>> from npuweave.workload.graph import Graph, Op, Tensor
    >>> ts = {n: Tensor(n, (1, 8)) for n in "xyz"} | {"w": Tensor("w", (8, 8), const=True)}
    >>> ops = [Op("fc", "MatMul", ("x", "w"), ("y",)), Op("act", "Relu", ("y",), ("z",))]
    >>> [[op.name for op in g.ops] for g in fuse(Graph("g", ops, ts, ["x"], ["z"])).groups]
    [['fc', 'act']]
    """
    uses = use_counts(graph)
    owner: dict[str, int] = {t: GRAPH_INPUT for t in graph.inputs}
    groups: list[Group] = []
    roles: dict[str, str] = {}
    for pos, op in enumerate(graph.ops):
        r = roles[op.name] = role(op, graph)
        if r == "const":
            continue
        edges: dict[int, int] = {}
        for t in op.inputs:
            if t and not _is_const(graph, t):
                g = owner.get(t, GRAPH_INPUT)
                edges[g] = edges.get(g, 0) + 1
        out_uses = sum(uses.get(t, 0) for t in op.outputs if t)
        if r == "free":
            _alias(op, graph, owner, groups, edges, out_uses)
            continue
        target = _open_group(groups, edges) if r == "vector" else None
        if target is None:
            target = Group(len(groups), [], pos)
            groups.append(target)
        for g, n in edges.items():
            if g != GRAPH_INPUT:
                groups[g].pending -= n
                groups[g].closed |= g != target.index
        target.ops.append(op)
        target.members.add(op.name)
        target.last = pos
        target.pending += out_uses
        for t in op.outputs:
            if t:
                owner[t] = target.index
    ordered = sorted(groups, key=lambda g: g.last)
    return Fusion(ordered, owner, roles)


def _alias(op: Op, graph: Graph, owner: dict[str, int], groups: list[Group],
           edges: dict[int, int], out_uses: int) -> None:
    """A free op passes its data input's group on to its outputs."""
    data = next(t for t in op.inputs if t and not _is_const(graph, t))
    src = owner.get(data, GRAPH_INPUT)
    for g, n in edges.items():
        if g != GRAPH_INPUT:
            groups[g].pending -= n
            if g != src:
                groups[g].closed = True
    if src != GRAPH_INPUT:
        groups[src].pending += out_uses
    for t in op.outputs:
        if t:
            owner[t] = src


def _open_group(groups: list[Group], edges: dict[int, int]) -> Group | None:
    """The open input group, produced last, whose pending uses are all this op's inputs."""
    best: Group | None = None
    for g, n in edges.items():
        if g == GRAPH_INPUT:
            continue
        grp = groups[g]
        if not grp.closed and grp.pending == n and (best is None or grp.last > best.last):
            best = grp
    return best
