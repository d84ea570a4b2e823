"""Backward H: from the output rows a slice must produce to the input rows each layer reads.

For a conv or pool with kernel ``k``, stride ``s``, dilation ``d`` and top padding ``p``,
output rows ``[a, b)`` read input rows ``[a*s - p, (b-1)*s - p + (k-1)*d + 1)``, clipped to
the input height (the clipped part is padding, synthesized on chip). Elementwise layers and
the non-spatial operands of a fused layer (the shortcut of a conv+add) pass ranges through.
A layer that needs its whole input height reads all of it.

``propagate_ranges`` runs this over a group from its outputs back to its inputs: each
tensor's rows for a slice are the hull of what its in-group readers need, plus its own share
of the height when it leaves the group.
"""

from __future__ import annotations

from npuweave.compile.layergroup.slicing import Rows, hull, rows, split_range
from npuweave.compile.layergroup.span import GroupSpan
from npuweave.compile.layergroup.tensors import ModelView
from npuweave.workload.layer import Layer


def conv_input_rows(out: Rows, kernel: int, stride: int, pad: int, dilation: int,
                    in_h: int) -> Rows:
    """Input rows a conv/pool reads to produce output rows ``out``.

    Examples
    --------
    3x3, stride 1, pad 1 on H=8: output rows [0, 4) need input rows [-1, 5) -> [0, 5).

    >>> conv_input_rows((0, 4), 3, 1, 1, 1, 8)
    (0, 5)
    """
    if out is None:
        return None
    lo = out[0] * stride - pad
    hi = (out[1] - 1) * stride - pad + (kernel - 1) * dilation + 1
    lo, hi = max(lo, 0), min(hi, in_h)
    return (lo, hi) if hi > lo else None


def input_rows(layer: Layer, pos: int, out: Rows, out_h: int, in_h: int,
               whole: bool) -> Rows:
    """Rows of input ``pos`` that ``layer`` reads to produce its output rows ``out``."""
    if out is None:
        return None
    if whole:
        return (0, in_h)
    g = layer.geometry
    if g is not None and pos == 0:
        return conv_input_rows(out, g.kernel[0], g.stride[0], g.pads[0], g.dilation[0], in_h)
    return out if in_h == out_h else (0, in_h)


def propagate_ranges(view: ModelView, span: GroupSpan, h_slices: int,
                     index: int) -> dict[str, Rows]:
    """Rows of every tensor the group touches in H slice ``index`` of ``h_slices``.

    Group outputs get their own even share of their height (so the stored slices tile it
    exactly); every layer then computes the hull of what its readers need.
    """
    need: dict[str, Rows] = {}
    for name in span.outputs:
        need[name] = split_range(view.tensors[name].h, h_slices, index)
    for i in reversed(span.indices):
        layer = view.layers[i]
        out = view.output(i)
        r = need.get(out.name)
        whole = view.whole_h(i)
        for pos, t in enumerate(view.inputs[i]):
            r_in = input_rows(layer, pos, r, out.h, view.tensors[t].h, whole)
            need[t] = hull(need.get(t), r_in)
    return need


def duplicated_rows(ranges: list[Rows]) -> int:
    """Rows loaded or computed more than once across slices: total length minus union.

    Examples
    --------
    The seed's example, h = 100: [0, 80) and [20, 100) duplicate 60 rows.

    >>> duplicated_rows([(0, 80), (20, 100)])
    60
    """
    spans = sorted(r for r in ranges if r is not None)
    union, reach = 0, None
    for lo, hi in spans:
        if reach is None or lo >= reach:
            union += hi - lo
            reach = hi
        elif hi > reach:
            union += hi - reach
            reach = hi
    return sum(rows(r) for r in spans) - union


def too_much_duplication(view: ModelView, span: GroupSpan,
                         per_slice: list[dict[str, Rows]]) -> str:
    """The first tensor read in the group whose duplicated rows exceed half its height.

    Returns the tensor's name, or "" when the group passes the h/2 rule.
    """
    for i in span.indices:
        for t in view.inputs[i]:
            h = view.tensors[t].h
            if 2 * duplicated_rows([s.get(t) for s in per_slice]) > h:
                return t
    return ""
