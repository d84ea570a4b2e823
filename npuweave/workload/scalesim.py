"""SCALE-Sim topology CSV files: read them as a workload, write layers as one.

SCALE-Sim (v2 and v3) describes a network as a CSV with one layer per row, in two forms:

* **conv**: ``Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
  Num Filter, Strides,`` (one stride for both directions);
* **GEMM** (``Layer, M, N, K,``): an (M x K) input times a (K x N) filter, M output rows.

Its parser has quirks that a compatible reader must share:

* the first line is a header and is always skipped; blank lines are skipped;
* each row is split on commas and **its last field is dropped**, so rows end with a trailing
  comma (a row without one loses its stride; we report that instead of guessing);
* there is **no padding**: the IFMAP size is the already padded input, and the output is
  ``ceil((IFMAP - Filter + Stride) / Stride)``: a last window that runs past the input still
  counts (one more row than ``(IFMAP - Filter) // Stride + 1`` when the stride does not divide);
* a conv layer whose name contains ``DP`` is **depthwise**: SCALE-Sim runs it as ``Channels``
  separate one-channel layers of ``Num Filter`` filters each;
* a field after the stride may hold a sparsity ratio ``N:M`` (v3); further fields are ignored.

``read_topology`` turns a file into a ``Graph`` of ``Conv``/``MatMul`` ops, each on its own
input (SCALE-Sim layers are independent); depthwise rows become one grouped conv whose
``count`` of products equals SCALE-Sim's channel layers, so ``systolic-ws`` gives the same
cycles. ``write_topology`` writes lowered layers in the conv form: convolutions as they are
(the padded input as far as the windows reach), GEMM-like layers as 1x1 convs over an ``m x 1`` input, and
layers of several products (attention heads, recurrent steps, grouped convs) as ``DP`` rows.
Layers without array work (pooling, elementwise, embeddings) have no SCALE-Sim form and are
listed as skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from npuweave.errors import ConfigError, ModelImportError
from npuweave.fileio import write_text
from npuweave.workload.graph import Graph
from npuweave.workload.layer import Layer, LayerKind

CONV_HEADER = ("Layer name", "IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width",
               "Channels", "Num Filter", "Strides")
GEMM_HEADER = ("Layer", "M", "N", "K")
_CONV_FIELDS = CONV_HEADER[1:]


@dataclass(frozen=True, slots=True)
class TopologyRow:
    """One SCALE-Sim conv-form layer (sizes as SCALE-Sim reads them: input already padded)."""

    name: str
    ifmap_h: int
    ifmap_w: int
    filter_h: int
    filter_w: int
    channels: int
    filters: int
    stride: int

    @property
    def ofmap(self) -> tuple[int, int]:
        """Output height and width as SCALE-Sim computes them:
        ``ceil((IFMAP - Filter + Stride) / Stride)``, which counts a ragged last window."""
        return (-(-(self.ifmap_h - self.filter_h + self.stride) // self.stride),
                -(-(self.ifmap_w - self.filter_w + self.stride) // self.stride))

    @property
    def depthwise(self) -> bool:
        """SCALE-Sim's convention: a name containing ``DP`` marks a depthwise layer."""
        return "DP" in self.name

    def cells(self) -> list[str]:
        return [self.name, *(str(v) for v in (self.ifmap_h, self.ifmap_w, self.filter_h,
                                               self.filter_w, self.channels, self.filters,
                                               self.stride))]


def _int_field(path: str, line: int, name: str, field: str, text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ConfigError(f"{path}:{line}: layer {name!r}: {field} must be an integer, got "
                          f"{text.strip()!r}") from None
    if value < 1:
        raise ConfigError(f"{path}:{line}: layer {name!r}: {field} must be >= 1, got {value}")
    return value


def _rows(path: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header cells and ``(line number, fields)`` of each layer row, SCALE-Sim's way."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ModelImportError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ModelImportError(f"{path}: is a directory, not a SCALE-Sim topology") from None
    except UnicodeDecodeError:
        raise ModelImportError(f"{path}: not a text file; a SCALE-Sim topology is CSV") from None
    lines = text.splitlines()
    if not lines:
        raise ModelImportError(f"{path}: empty file; a SCALE-Sim topology starts with a header")
    rows = []
    for number, raw in enumerate(lines[1:], start=2):
        row = raw.strip()
        if not row or not row.replace(",", "").strip():
            continue  # blank or all-empty rows (spreadsheet exports) carry no layer
        rows.append((number, row.split(",")[:-1]))  # SCALE-Sim drops the last field
    return [c.strip() for c in lines[0].split(",")], rows


def topology_form(header: list[str]) -> str:
    """``"gemm"`` for a ``Layer, M, N, K`` header, else ``"conv"``.

    Examples
    --------
    >>> topology_form(["Layer", "M", "N", "K", ""])
    'gemm'
    """
    return "gemm" if [c.lower() for c in header[1:4]] == ["m", "n", "k"] else "conv"


def _conv_row(path: str, line: int, fields: list[str]) -> TopologyRow:
    name = fields[0].strip() if fields else ""
    if len(fields) < 8:
        raise ConfigError(
            f"{path}:{line}: layer {name or '?'!r} has {len(fields)} of 8 fields before the last "
            f"comma; SCALE-Sim drops each row's last field, so end every row with a comma: "
            f"'name, ifmap h, ifmap w, filter h, filter w, channels, filters, stride,'")
    if not name:
        raise ConfigError(f"{path}:{line}: the layer name (first field) is empty")
    vals = [_int_field(path, line, name, f, t) for f, t in zip(_CONV_FIELDS, fields[1:8],
                                                                 strict=True)]
    row = TopologyRow(name, *vals)
    if row.filter_h > row.ifmap_h or row.filter_w > row.ifmap_w:
        raise ConfigError(f"{path}:{line}: layer {name!r}: filter {row.filter_h}x{row.filter_w} "
                          f"is larger than the IFMAP {row.ifmap_h}x{row.ifmap_w}; SCALE-Sim has "
                          f"no padding, so give the padded IFMAP size")
    return row


def read_topology(path: str | os.PathLike[str], form: str | None = None) -> Graph:
    """Read a SCALE-Sim topology CSV (conv or GEMM form, detected from the header).

    Examples
    --------
    >>> from npuweave.workload import lower
    >>> g = read_topology("alexnet.csv")                # doctest: +SKIP
    >>> [l.gemm for l in lower(g)][:1]                 # doctest: +SKIP
    [(1, 3025, 363, 96)]
    """
    from npuweave.workload.zoo.builder import GraphBuilder

    p = str(path)
    header, rows = _rows(p)
    form = form or topology_form(header)
    if form not in ("conv", "gemm"):
        raise ConfigError(f"topology form must be 'conv' or 'gemm', got {form!r}")
    b = GraphBuilder(Path(p).stem)
    outputs = []
    for index, (line, fields) in enumerate(rows):
        if form == "gemm":
            outputs.append(_add_gemm(b, p, line, fields, index))
        else:
            outputs.append(_add_conv(b, _conv_row(p, line, fields), index))
    if not outputs:
        raise ModelImportError(f"{p}: no layer rows after the header")
    graph = b.finish(outputs)
    graph.source = f"scalesim:{p}"
    graph.meta["batch"] = 1
    return graph


def _add_conv(b, row: TopologyRow, index: int) -> str:
    """A Conv op computing exactly SCALE-Sim's output size: a ragged last window is padded
    (bottom/right) instead of dropped, as SCALE-Sim's ``ceil`` counts it."""
    x = b.input(f"ifmap{index}", (1, row.channels, row.ifmap_h, row.ifmap_w))
    groups = row.channels if row.depthwise else 1
    oh, ow = row.ofmap
    pad_h = (oh - 1) * row.stride + row.filter_h - row.ifmap_h
    pad_w = (ow - 1) * row.stride + row.filter_w - row.ifmap_w
    cout = row.filters * groups
    w = b.weight(f"{row.name}.weight", (cout, row.channels // groups, row.filter_h,
                                         row.filter_w))
    attrs = {"kernel_shape": [row.filter_h, row.filter_w], "strides": [row.stride] * 2,
             "pads": [0, 0, pad_h, pad_w], "dilations": [1, 1], "group": groups}
    return b.op("Conv", [x, w], (1, cout, oh, ow), attrs, name=row.name)


def _add_gemm(b, path: str, line: int, fields: list[str], index: int) -> str:
    name = fields[0].strip() if fields else ""
    if len(fields) < 4 or not name:
        raise ConfigError(f"{path}:{line}: a GEMM row is 'name, M, N, K,' with a trailing comma "
                          f"(SCALE-Sim drops each row's last field); got {len(fields)} fields")
    m, n, k = (_int_field(path, line, name, f, t) for f, t in zip("MNK", fields[1:4],
                                                                   strict=True))
    x = b.input(f"ifmap{index}", (1, m, k))
    return b.linear(x, n, bias=False, name=name)


def topology_rows(layers: list[Layer] | tuple[Layer, ...], graph: Graph | None = None
                  ) -> tuple[list[TopologyRow], list[tuple[str, str]]]:
    """SCALE-Sim conv-form rows of ``layers``, and ``(layer, reason)`` for those skipped.

    With the ``graph`` the layers were lowered from, a convolution is written with its own
    kernel, stride and padded input even when pooling was fused into its layer; without it
    (or where the conv cannot be written as it is) the layer's GEMM is written instead, which
    keeps its products and cycles.

    Examples
    --------
    >>> from npuweave.workload import load_graph, lower
    >>> g = load_graph("resnet50")
    >>> rows, skipped = topology_rows(lower(g), g)
    >>> rows[0].cells()
    ['conv1', '229', '229', '7', '7', '3', '64', '2']
    """
    ops = {op.name: op for op in graph.ops} if graph is not None else {}
    rows: list[TopologyRow] = []
    skipped: list[tuple[str, str]] = []
    for layer in layers:
        name = layer.name.replace(",", "_")
        if layer.gemm is None:
            skipped.append((layer.name, f"{layer.kind} layer: no work on the systolic array"))
            continue
        row = None
        if layer.kind is LayerKind.CONV and layer.name in ops:
            row = _from_conv_op(name, ops[layer.name], graph)  # type: ignore[arg-type]
        if row is None or _products(row) != layer.gemm:
            count, m, k, n = layer.gemm
            dp = count > 1
            row = TopologyRow(_dp_name(name, dp), m, k if dp else 1, 1, k if dp else 1,
                              count if dp else k, n, 1)
        rows.append(row)
    return rows, skipped


def _products(row: TopologyRow) -> tuple[int, int, int, int]:
    """``(count, m, k, n)`` of a row as SCALE-Sim runs it (depthwise: one per channel)."""
    oh, ow = row.ofmap
    if row.depthwise:
        return (row.channels, oh * ow, row.filter_h * row.filter_w, row.filters)
    return (1, oh * ow, row.channels * row.filter_h * row.filter_w, row.filters)


def _dp_name(name: str, depthwise: bool) -> str:
    if depthwise:
        return name if "DP" in name else f"{name}_DP"
    return name.replace("DP", "Dp")  # SCALE-Sim would take any "DP" for depthwise


def _from_conv_op(name: str, op, graph: Graph) -> TopologyRow | None:
    """The row of a ``Conv`` op, or None when SCALE-Sim cannot express it (dilation, unequal
    strides, groups other than 1 or one per channel)."""
    if op.op_type != "Conv" or len(op.inputs) < 2:
        return None
    _, c, _, _ = graph.tensors[op.inputs[0]].shape
    cout, _, kh, kw = graph.tensors[op.inputs[1]].shape
    _, _, oh, ow = graph.tensors[op.outputs[0]].shape
    sh, sw = (int(v) for v in op.attrs.get("strides", (1, 1)))
    groups = int(op.attrs.get("group", 1))
    if sh != sw or any(int(d) != 1 for d in op.attrs.get("dilations", (1, 1))):
        return None
    if groups not in (1, c):
        return None
    # the padded input the outputs actually read: SCALE-Sim's ceil then gives the same output
    # size as ONNX's floor (padding rows no window reaches would add a SCALE-Sim output row)
    hp, wp = (oh - 1) * sh + kh, (ow - 1) * sw + kw
    return TopologyRow(_dp_name(name, groups > 1), hp, wp, kh, kw, c, cout // groups, sh)


def topology_text(rows: list[TopologyRow]) -> str:
    """The CSV text, spelled as SCALE-Sim's own files: header and rows end with a comma."""
    lines = [", ".join(CONV_HEADER) + ","]
    lines += [", ".join(r.cells()) + "," for r in rows]
    return "\n".join(lines) + "\n"


def write_topology(path: str | os.PathLike[str], layers: list[Layer] | tuple[Layer, ...],
                   graph: Graph | None = None) -> list[tuple[str, str]]:
    """Write ``layers`` as a SCALE-Sim conv-form topology; returns the skipped layers.

    Pass the ``graph`` they were lowered from to keep convolutions' own shapes (see
    ``topology_rows``).

    Examples
    --------
    >>> from npuweave.workload import load_graph, lower
    >>> g = load_graph("resnet50")
    >>> skipped = write_topology("rn.csv", lower(g), g)  # doctest: +SKIP
    """
    rows, skipped = topology_rows(layers, graph)
    if not rows:
        raise ConfigError(f"{path}: no layer has work on the systolic array; nothing to write")
    write_text(path, topology_text(rows))
    return skipped
