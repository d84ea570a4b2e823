"""Read a layer list as a tensor graph: who produces and consumes what, and each tensor's H.

Every tensor is named after the layer that produces it; the graph input is ``@input``. Each
tensor gets a height ``h`` (the axis the compiler slices) and a per-sample element count, so
``elems / h`` elements make one row. Layers the grouping cannot reason about (no backward-H
rule) are marked with the reason; they run ungrouped.
"""

from __future__ import annotations

from dataclasses import dataclass

from npuweave.workload.layer import Layer, LayerKind

GRAPH_INPUT = "@input"

# Ops that map output row r to input row r (elementwise, activations, per-channel norms,
# channel concat). A vector layer made only of these passes H ranges through.
PASS_THROUGH_OPS = frozenset({
    "Abs", "Add", "BatchNormalization", "Cast", "Clip", "Concat", "Div", "Dropout", "Elu",
    "Erf", "Exp", "Gelu", "HardSigmoid", "HardSwish", "Identity", "InstanceNormalization",
    "LeakyRelu", "Log", "LRN", "Max", "Mean", "Min", "Mish", "Mul", "Neg", "Pow", "PRelu",
    "QuantizeLinear", "DequantizeLinear", "Reciprocal", "Relu", "Selu", "Sigmoid", "Softplus",
    "Softsign", "Sqrt", "Sub", "Sum", "Tanh", "ThresholdedRelu", "Where",
})


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """An activation tensor: per-sample ``elems``, height ``h``, producer and consumers."""

    name: str
    producer: int  # layer index, -1 for a graph input
    elems: int
    h: int
    consumers: tuple[int, ...]

    @property
    def row_elems(self) -> int:
        return -(-self.elems // self.h)


@dataclass(frozen=True, slots=True)
class ModelView:
    """Layers plus the tensor graph the compiler needs (built by ``analyze_layers``)."""

    layers: tuple[Layer, ...]
    tensors: dict[str, TensorInfo]
    inputs: tuple[tuple[str, ...], ...]  # per layer: tensor names, in the layer's order
    unsupported: tuple[str, ...]  # per layer: "" if the grouping understands it, else why
    whole: tuple[bool, ...]  # per layer: needs its whole input height (refuses H slicing)

    def output(self, i: int) -> TensorInfo:
        return self.tensors[self.layers[i].name]

    def whole_h(self, i: int) -> bool:
        """True when layer ``i`` needs its whole input height (it refuses H slicing)."""
        return self.whole[i]


def needs_whole_h(layer: Layer) -> bool:
    return not layer.splittable_h or layer.kind in (LayerKind.GEMM, LayerKind.MATMUL)


def unsupported_reason(layer: Layer) -> str:
    """Why the grouping cannot handle ``layer`` ("" when it can)."""
    if layer.kind in (LayerKind.RECURRENT, LayerKind.EMBEDDING):
        return f"{layer.kind} layers have no layer-group rule"
    if layer.kind is LayerKind.CONV and layer.geometry is None:
        return "conv without geometry (kernel, stride, pads unknown)"
    if layer.kind is LayerKind.VECTOR and layer.geometry is None and layer.splittable_h:
        unknown = sorted(set(layer.ops) - PASS_THROUGH_OPS)
        if unknown:
            return f"no backward-H rule for op(s) {', '.join(unknown)}"
    return ""


def _tensor_name(raw: str, names: set[str]) -> str:
    if raw in names:
        return raw
    return GRAPH_INPUT if raw == "" else f"@{raw}"


def _output_h(layer: Layer, in_h: int) -> int:
    g = layer.geometry
    if g is not None:  # a fused global pool leaves fewer elements than out_chw says
        c, h, w = g.out_chw
        return h if layer.out_elems == c * h * w else 1
    if needs_whole_h(layer):
        return 1
    return in_h if in_h > 0 and layer.out_elems % in_h == 0 else 1


def _graph_input(layer: Layer, pos: int, known: int) -> tuple[int, int]:
    """(elems, h) of a graph input read by ``layer`` at position ``pos``."""
    g = layer.geometry
    if g is not None and pos == 0:
        c, h, w = g.in_chw
        return c * h * w, h
    return max(layer.in_elems - known, 1), 1


def analyze_layers(layers: tuple[Layer, ...] | list[Layer]) -> ModelView:
    """Build the tensor graph of ``layers`` (which must be in topological order).

    Examples
    --------
    >>> from npuweave.workload.layer import Layer, LayerKind
    >>> relu = Layer("r", LayerKind.VECTOR, ("Relu",), None, 0, 8, 0, 8, 8, inputs=("",))
    >>> analyze_layers([relu]).tensors["r"].consumers
    ()
    """
    layers = tuple(layers)
    names = {layer.name for layer in layers}
    found: dict[str, list] = {}  # name -> [producer, elems, h, consumers]
    inputs = []
    for i, layer in enumerate(layers):
        ins = tuple(_tensor_name(raw, names) for raw in layer.inputs)
        inputs.append(ins)
        known = sum(found[t][1] for t in ins if t in found and found[t][0] >= 0)
        for pos, t in enumerate(ins):
            if t not in found:
                elems, h = _graph_input(layer, pos, known)
                found[t] = [-1, elems, h, []]
            if i not in found[t][3]:
                found[t][3].append(i)
        in_h = found[ins[0]][2] if ins else 1
        found[layer.name] = [i, max(layer.out_elems, 1), _output_h(layer, in_h), []]
    tensors = {n: TensorInfo(n, p, e, max(h, 1), tuple(c)) for n, (p, e, h, c) in found.items()}
    reasons = tuple(unsupported_reason(layer) for layer in layers)
    whole = tuple(needs_whole_h(layer) for layer in layers)
    return ModelView(layers, tensors, tuple(inputs), reasons, whole)
