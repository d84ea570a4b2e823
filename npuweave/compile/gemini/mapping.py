"""Map a model onto a mesh of cores: layer groups split across cores, tiles sized to the L2.

The rule (docs/GEMINI_IR.md, "Emitting"):

1. **Groups** come from the layer-group compiler (``compile_groups``, greedy search) run for
   the whole batch on one core's L2 (the L2 is the compiler's local memory). A tensor that
   crosses a group boundary goes through DRAM; inside a group it stays on chip.
2. **Split across cores**: every group in N (contiguous sample ranges) when
   ``batch >= cores``; otherwise each layer of the group in H (contiguous output rows) when it
   has at least ``cores`` rows, else in K (output channels). Consumers read what they need
   from whichever core holds it (halo rows in H, all channels in K) over the mesh.
3. **Order and tiles on a core**: group by group; inside a group, the core's samples in chunks
   of the group's ``n_per_slice``; per chunk layer by layer; a layer is cut into the fewest
   row x channel tiles whose inputs, weights and output fit half the L2.

Everything here is pure data: :class:`Task` records what one workload computes.
"""

from __future__ import annotations

from dataclasses import dataclass

from npuweave.compile.gemini.geometry import fmap_bytes, weight_bytes
from npuweave.compile.gemini.model import Box
from npuweave.compile.layergroup import compile_groups
from npuweave.compile.layergroup.backward import conv_input_rows
from npuweave.errors import ConfigError, InfeasibleError
from npuweave.hardware import NPU
from npuweave.workload.layer import Layer, LayerKind

#: a workload's inputs + weight + output may take at most this share of the L2
WORKING_SET_SHARE = 0.5
#: samples per core chunk when the group compiler gives none
CHW = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Task:
    """One workload: ``layer`` (index) computing the absolute ofmap ``box`` on ``core``."""

    core: int
    layer: int
    box: Box
    group: int
    split: str


@dataclass(frozen=True, slots=True)
class Mapping:
    """The tasks of a model on ``cores`` cores, in execution order (per core ascending)."""

    layers: tuple[Layer, ...]
    shapes: tuple[CHW, ...]
    input_shape: CHW
    group_of: tuple[int, ...]
    splits: tuple[str, ...]
    tasks: tuple[Task, ...]
    batch: int
    cores: int


def out_shape(layer: Layer) -> CHW:
    """``(C, H, W)`` of a layer's output per sample.

    Convolutions and pools: their geometry. A GEMM without geometry ``(count, m, k, n)``
    (transformer projections, attention): ``count * n`` channels by ``m`` rows (the sequence),
    so it can be split in rows. Anything else: ``(elements, 1, 1)``.
    """
    g = layer.geometry
    if g is not None and g.out_chw[0] * g.out_chw[1] * g.out_chw[2] == layer.out_elems:
        return g.out_chw
    if layer.gemm is not None:
        count, m, _, n = layer.gemm
        if count * m * n == layer.out_elems and m > 1:
            return (count * n, m, 1)
    return (layer.out_elems, 1, 1)


def weight_box(layer: Layer, k0: int = 0, k1: int | None = None) -> Box | None:
    """The weight box ``[0, K, C, R*S]`` of output channels ``k0..k1`` (None: no weights)."""
    if not layer.has_weights or layer.gemm is None:
        return None
    count, _, k, n = layer.gemm
    kk = count * n
    cin, rs = k, 1
    g = layer.geometry
    if g is not None and g.groups >= 1 and g.in_chw[0] // g.groups and k % (g.in_chw[0] // g.groups) == 0:
        cin = g.in_chw[0] // g.groups
        rs = k // cin
    hi = kk - 1 if k1 is None else k1
    return Box((0, k0, 0, 0), (0, hi, cin - 1, rs - 1))


def input_box(layer: Layer, in_shape: CHW, out: Box, main: bool) -> Box:
    """The part of an input tensor (shape ``in_shape``) that the ofmap ``out`` needs."""
    c, h, w = in_shape
    n0, n1 = out.lower[0], out.upper[0]
    pe = layer.gemm is not None
    oc = out_shape(layer)
    c0, c1 = (0, c - 1) if pe or c != oc[0] else (out.lower[1], out.upper[1])
    g = layer.geometry
    row_wise = g is None and h == oc[1] and (main or layer.kind is not LayerKind.MATMUL)
    if main and g is not None and g.in_chw == in_shape and oc == g.out_chw:
        rows = conv_input_rows((out.lower[2], out.upper[2] + 1), g.kernel[0], g.stride[0],
                               g.pads[0], g.dilation[0], h)
        h0, h1 = (rows[0], rows[1] - 1) if rows is not None else (0, h - 1)
    elif (c, h, w) == oc and layer.kind is not LayerKind.MATMUL or row_wise:
        # an elementwise partner, or a row-wise GEMM (row r of the output reads row r);
        # an attention MatMul's second operand is read whole
        h0, h1 = out.lower[2], out.upper[2]
    else:
        h0, h1 = 0, h - 1
    return Box((n0, c0, h0, 0), (n1, c1, h1, w - 1))


def split_range(total: int, parts: int, index: int) -> tuple[int, int]:
    """Piece ``index`` of ``[0, total)`` in ``parts`` nearly equal pieces (may be empty).

    Examples
    --------
    >>> [split_range(10, 3, k) for k in range(3)]
    [(0, 3), (3, 6), (6, 10)]
    """
    return index * total // parts, (index + 1) * total // parts


def layer_split(shape: CHW, batch: int, cores: int) -> str:
    """``N`` when every core gets samples, else ``H`` when every core gets rows, else ``K``."""
    if cores == 1 or batch >= cores:
        return "N"
    return "H" if shape[1] >= cores else "K"


def _core_parts(split: str, shape: CHW, batch: int, cores: int) -> list[Box]:
    """The box of each core's share of a layer output (empty shares dropped)."""
    c, h, w = shape
    parts = []
    for core in range(cores):
        if split == "N":
            lo, hi = split_range(batch, cores, core)
            box = Box((lo, 0, 0, 0), (hi - 1, c - 1, h - 1, w - 1))
        elif split == "H":
            lo, hi = split_range(h, cores, core)
            box = Box((0, 0, lo, 0), (batch - 1, c - 1, hi - 1, w - 1))
        else:
            lo, hi = split_range(c, cores, core)
            box = Box((0, lo, 0, 0), (batch - 1, hi - 1, h - 1, w - 1))
        parts.append(box if box.ordered else Box((1,), (0,)))
    return parts


def _powers(n: int) -> list[int]:
    """1, 2, 4, ... below ``n``, then ``n``: the piece counts the tile search tries."""
    return sorted({min(n, 1 << e) for e in range(max(n, 1).bit_length() + 1)})


def _cut(box: Box, axis: int, pieces: int) -> list[Box]:
    lo, hi = box.lower[axis], box.upper[axis]
    out = []
    for i in range(pieces):
        a, b = split_range(hi - lo + 1, pieces, i)
        if b > a:
            lower, upper = list(box.lower), list(box.upper)
            lower[axis], upper[axis] = lo + a, lo + b - 1
            out.append(Box(tuple(lower), tuple(upper)))
    return out


class _Planner:
    def __init__(self, layers: tuple[Layer, ...], l2_bytes: int) -> None:
        self.layers = layers
        self.index = {lay.name: i for i, lay in enumerate(layers)}
        first = layers[0]
        g = first.geometry
        self.input_shape: CHW = g.in_chw if g is not None else (first.in_elems, 1, 1)
        self.budget = int(l2_bytes * WORKING_SET_SHARE)
        self.shapes: list[CHW] = []
        for lay in layers:
            self.shapes.append(self._shape(lay))

    def _shape(self, layer: Layer) -> CHW:
        """:func:`out_shape`, except that a vector layer without geometry (layer norm,
        softmax, elementwise ops) keeps the shape of its first input when the sizes agree."""
        shape = out_shape(layer)
        if layer.gemm is None and layer.geometry is None and layer.inputs:
            src = self.in_shape(layer.inputs[0])
            if src[0] * src[1] * src[2] == layer.out_elems:
                return src
        return shape

    def in_shape(self, name: str) -> CHW:
        i = self.index.get(name)
        return self.shapes[i] if i is not None and i < len(self.shapes) else self.input_shape

    def working_set(self, i: int, box: Box) -> int:
        layer = self.layers[i]
        total = fmap_bytes(box, 8, 8)
        wb = weight_box(layer, box.lower[1], box.upper[1])
        if wb is not None:
            total += weight_bytes(wb)
        for j, name in enumerate(layer.inputs or ("",)):
            total += fmap_bytes(input_box(layer, self.in_shape(name), box, j == 0), 8, 8)
        return total

    def _fits(self, i: int, boxes: list[Box]) -> bool:
        return all(self.working_set(i, t) <= self.budget for t in boxes)

    def tiles(self, i: int, box: Box) -> list[Box]:
        """``box`` cut into the fewest row x channel tiles that each fit the budget (channel
        cuts shrink the weights, row cuts the feature maps; powers of two of each)."""
        rows, chans = box.shape[2], box.shape[1]
        best: list[Box] | None = None
        for kp in _powers(chans):
            if best is not None and kp >= len(best):
                break
            for rp in _powers(rows):
                cut = [k for r in _cut(box, 2, rp) for k in _cut(r, 1, kp)]
                if self._fits(i, cut):
                    if best is None or len(cut) < len(best):
                        best = cut
                    break
        if best is not None:
            return best
        one = _cut(_cut(box, 2, rows)[0], 1, chans)[0]
        raise InfeasibleError(
            f"layer {self.layers[i].name!r}: one output row and channel of {box} with its "
            f"inputs and weights needs {self.working_set(i, one):,} bytes, more than half the "
            f"L2 ({self.budget:,} bytes); use an NPU with a larger l2_bytes")


def plan(layers: tuple[Layer, ...] | list[Layer], npu: NPU, cores: int, batch: int) -> Mapping:
    """Split ``layers`` across ``cores`` cores of ``npu`` at ``batch`` samples (rule above).

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload import load_layers
    >>> m = plan(load_layers("resnet50"), preset("gemini-like"), cores=4, batch=4)  # doctest: +SKIP
    >>> sorted({t.core for t in m.tasks})  # doctest: +SKIP
    [0, 1, 2, 3]
    """
    layers = tuple(layers)
    if cores < 1 or batch < 1:
        raise ConfigError(f"cores and batch must be >= 1 (got cores={cores}, batch={batch})")
    l2 = npu.l2_bytes or npu.lmem_bytes
    if l2 <= 0:
        raise ConfigError(f"NPU {npu.name!r} has no per-core L2 (l2_bytes); use the "
                          "'gemini-like' preset or set l2_bytes in the NPU spec")
    core_npu = _core_npu(npu, l2)
    groups = compile_groups(layers, core_npu, batch=batch, method="greedy").groups
    p = _Planner(layers, l2)
    group_of, splits, tasks = [0] * len(layers), [], []
    for gi, g in enumerate(groups):
        ids = list(range(g.first, g.first + len(g.layers)))
        for i in ids:
            group_of[i] = gi
        split = "".join(sorted({layer_split(p.shapes[i], batch, cores) for i in ids}))
        splits.append(split)
        tasks += _group_tasks(p, ids, gi, batch, cores, max(1, g.n_per_slice))
    return Mapping(layers, tuple(p.shapes), p.input_shape, tuple(group_of), tuple(splits),
                   tuple(tasks), batch, cores)


def _core_npu(npu: NPU, l2: int) -> NPU:
    from dataclasses import replace

    return replace(npu, cores=1, mesh=(1, 1), lmem_bytes=l2, lmem_banks=max(1, npu.lmem_banks))


def _group_tasks(p: _Planner, ids: list[int], gi: int, batch: int, cores: int,
                 n_per_slice: int) -> list[Task]:
    splits = {i: layer_split(p.shapes[i], batch, cores) for i in ids}
    parts = {i: _core_parts(splits[i], p.shapes[i], batch, cores) for i in ids}
    order: list[Task] = []
    for core in range(cores):
        if batch >= cores:
            n0, n1 = split_range(batch, cores, core)
            n1 -= 1
        else:
            n0, n1 = 0, batch - 1
        for c0 in range(n0, n1 + 1, n_per_slice):
            chunk = (c0, min(n1, c0 + n_per_slice - 1))
            for i in ids:
                part = parts[i][core]
                if not part.ordered:
                    continue
                box = Box((chunk[0], *part.lower[1:]), (chunk[1], *part.upper[1:]))
                order += [Task(core, i, t, gi, splits[i]) for t in p.tiles(i, box)]
    return order
