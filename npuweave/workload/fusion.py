"""Fusion: partition a ``Graph``'s ops into groups, each of which becomes one ``Layer``.

Rules (one pass over the ops in topological order, linear in the graph size):

* Constant ops (all inputs constant) and shape-only ops (``opinfo.FREE_OPS``) join no group;
  a free op's outputs are *aliases* of its data input and belong to that input's group.
* A main op (Conv, Gemm, MatMul, LSTM/GRU/RNN, embedding Gather) and a Concat always start
  a new group.
* A vector op joins the group of one of its inputs when that group is still *open*, i.e.
  nothing outside it reads it yet and every pending use of every tensor it has produced is
  an input of this op. That covers sole-consumer chains (Conv -> BN -> Relu -> MaxPool) and
  residual Adds (the Add joins the group of the input produced last). Otherwise it starts a
  vector group of its own.
* Windowed pooling (``opinfo.POOL_OPS``) never joins a group headed by a Concat: a layer's
  ``geometry`` maps output rows to rows of its *first* input, and a Concat layer has several
  inputs at the pre-pool resolution. The pool becomes a vector layer of its own (with the
  pool's geometry); global pooling, which needs whole rows anyway, still fuses.
* **Branches re-join their source.** A vector group *S* whose every input comes from one
  group *G* (say ``sigmoid(x)``, or the mean and variance chain of a decomposed LayerNorm)
  merges back into *G* when an op reads both and nothing else reads either: *G*'s only
  other reader is *S* (or several such branches), every pending use of *G* and *S* is an
  input of this op, and the op then joins *G*. So ``x * sigmoid(x)`` after a Conv is one
  layer (Conv, Sigmoid, Mul), and a ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add
  LayerNorm fuses whole into the layer before it. A branch with an outside reader keeps
  its own layer, so every layer still has a single output.
* A group that anything outside it reads is closed (its ``readers`` are not empty).

Groups are ordered by their last op, which keeps the layer list topologically sorted: a
group's outputs are only read once its last op has run. A merge only redirects the branch
to its source (union-find); each group's op list is built in graph order at the end, so the
pass stays linear however the branches nest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from npuweave.workload.graph import Graph, Op
from npuweave.workload.opinfo import FREE_OPS, JOIN_OPS, MAIN_OPS, POOL_OPS

GRAPH_INPUT = -1


@dataclass
class Group:
    """Ops fused into one layer: ``ops[0]`` is the head (main op or first vector op)."""

    index: int
    ops: list[Op]
    last: int            # position of the last member in graph.ops
    pending: int = 0     # uses of the group's tensors not yet seen
    members: set[str] = field(default_factory=set)
    readers: set[int] = field(default_factory=set)  # other groups reading it (closed if any)
    sources: set[int] = field(default_factory=set)  # other groups (or inputs) it reads
    merged_into: int | None = None                  # set when a branch re-joined its source
    head: str = ""       # op type of the first op
    pools: bool = False  # holds windowed pooling (which never joins a Concat layer)

    @property
    def closed(self) -> bool:
        return bool(self.readers)


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


class _Partition:
    """Groups under construction; merged groups forward to the group they joined."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.groups: list[Group] = []
        self.owner: dict[str, int] = {t: GRAPH_INPUT for t in graph.inputs}
        self.group_of: dict[str, int] = {}

    def find(self, g: int) -> int:
        """The live group that ``g`` was merged into (with path compression)."""
        root = g
        while root != GRAPH_INPUT and (nxt := self.groups[root].merged_into) is not None:
            root = nxt
        while g != root:
            grp = self.groups[g]
            g, grp.merged_into = grp.merged_into, root  # type: ignore[assignment]
        return root

    def edges(self, op: Op) -> dict[int, int]:
        """How many of ``op``'s data inputs each (live) group provides."""
        edges: dict[int, int] = {}
        for t in op.inputs:
            if t and not _is_const(self.graph, t):
                g = self.find(self.owner.get(t, GRAPH_INPUT))
                edges[g] = edges.get(g, 0) + 1
        return edges

    def add(self, op: Op, pos: int, target: Group, edges: dict[int, int],
            out_uses: int) -> None:
        for g, n in edges.items():
            if g != target.index:
                target.sources.add(g)
            if g != GRAPH_INPUT:
                self.groups[g].pending -= n
                if g != target.index:
                    self.groups[g].readers.add(target.index)
        target.head = target.head or op.op_type
        target.pools |= op.op_type in POOL_OPS
        self.group_of[op.name] = target.index
        target.last = pos
        target.pending += out_uses
        for t in op.outputs:
            if t:
                self.owner[t] = target.index

    def alias(self, op: Op, edges: dict[int, int], out_uses: int) -> None:
        """A free op passes its data input's group on to its outputs."""
        data = next(t for t in op.inputs if t and not _is_const(self.graph, t))
        src = self.find(self.owner.get(data, GRAPH_INPUT))
        for g, n in edges.items():
            if g != GRAPH_INPUT:
                self.groups[g].pending -= n
                if g != src:
                    self.groups[g].readers.add(src)
        if src != GRAPH_INPUT:
            self.groups[src].pending += out_uses
        for t in op.outputs:
            if t:
                self.owner[t] = src

    def absorb(self, into: Group, branch: Group) -> None:
        """Merge ``branch`` into ``into`` (its ops are collected in ``live_groups``)."""
        into.pending += branch.pending
        into.pools |= branch.pools
        into.readers.discard(branch.index)
        into.sources |= branch.sources - {into.index}
        into.last = max(into.last, branch.last)
        branch.merged_into = into.index

    def owners(self) -> dict[str, int]:
        return {t: self.find(g) for t, g in self.owner.items()}

    def live_groups(self) -> list[Group]:
        """Unmerged groups with their ops in graph order, ordered by their last op."""
        for op in self.graph.ops:
            g = self.group_of.get(op.name)
            if g is not None:
                grp = self.groups[self.find(g)]
                grp.ops.append(op)
                grp.members.add(op.name)
        live = [g for g in self.groups if g.merged_into is None]
        return sorted(live, key=lambda g: g.last)


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
    part = _Partition(graph)
    roles: dict[str, str] = {}
    for pos, op in enumerate(graph.ops):
        r = roles[op.name] = role(op, graph)
        if r == "const":
            continue
        edges = part.edges(op)
        out_uses = sum(uses.get(t, 0) for t in op.outputs if t)
        if r == "free":
            part.alias(op, edges, out_uses)
            continue
        target = None
        if r == "vector":
            if _rejoin_branches(part, edges, op):
                edges = part.edges(op)
            target = _open_group(part.groups, edges, op)
        if target is None:
            target = Group(len(part.groups), [], pos)
            part.groups.append(target)
        part.add(op, pos, target, edges, out_uses)
    return Fusion(part.live_groups(), part.owners(), roles)


def _takes(grp: Group, pools: bool) -> bool:
    """Whether ops (with windowed pooling if ``pools``) may fuse into ``grp``: no windowed
    pooling after a Concat."""
    return not (pools and grp.head in JOIN_OPS)


def _is_branch(part: _Partition, grp: Group, source: int, n: int) -> bool:
    """A vector group fed by ``source`` alone whose remaining uses are ``n`` inputs of the
    op at hand (so nothing else will ever read it)."""
    return (grp.head not in MAIN_OPS | JOIN_OPS and not grp.readers
            and grp.pending == n and {part.find(s) for s in grp.sources} == {source})


def _rejoin_branches(part: _Partition, edges: dict[int, int], op: Op) -> bool:
    """Merge branch groups back into their source when ``op`` closes the diamond.

    Only when ``op`` reads nothing but the source, its branches and graph inputs, so that it
    then joins the merged group and no branch output leaves it.
    """
    inner = set(edges) - {GRAPH_INPUT}
    for g in inner:
        grp = part.groups[g]
        branches = {s for s in inner - {g} if _is_branch(part, part.groups[s], g, edges[s])}
        if (branches and inner == branches | {g} and grp.pending == edges[g]
                and grp.readers <= branches
                and _takes(grp, op.op_type in POOL_OPS or any(part.groups[s].pools
                                                               for s in branches))):
            for s in sorted(branches):
                part.absorb(grp, part.groups[s])
            return True
    return False


def _open_group(groups: list[Group], edges: dict[int, int], op: Op) -> Group | None:
    """The open input group, produced last, whose pending uses are all this op's inputs."""
    best: Group | None = None
    for g, n in edges.items():
        if g == GRAPH_INPUT:
            continue
        grp = groups[g]
        if (not grp.closed and grp.pending == n and _takes(grp, op.op_type in POOL_OPS)
                and (best is None or grp.last > best.last)):
            best = grp
    return best
