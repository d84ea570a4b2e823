"""What npuweave knows about each ONNX op type: its role in lowering and its vector cost.

Every op type the importer accepts is in exactly one role:

* ``MAIN_OPS``: the op carries the layer's multiply-accumulates (Conv, Gemm, MatMul,
  recurrent cells) or is an embedding lookup (Gather on a constant table; a Gather on an
  activation is a free slice).
* ``FREE_OPS``: shape and data-movement views that cost nothing and vanish in lowering.
* ``VECTOR_OPS``: elementwise ops, activations, normalizations, softmax, pooling, reductions,
  resizing; they fuse into the layer before them or form a vector layer of their own.
* ``JOIN_OPS``: vector ops that gather several tensors (Concat); they always start a layer.

Vector cost rule (``vector_ops``, per sample): one operation per output element for
elementwise ops and activations; 2 for a standalone BatchNormalization (scale and shift; it
costs nothing when folded into a preceding Conv/Gemm); 5 for LayerNorm-like ops (mean,
variance, subtract, scale, shift); 3 for softmax (exp, sum, divide); ``size + 3`` for LRN;
kernel area per output element for pooling; one per input element for global pooling and
reductions; one per output element for Concat and Resize (a copy).
"""

from __future__ import annotations

MAIN_OPS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul", "LSTM", "GRU", "RNN", "Gather"})
RECURRENT_OPS = frozenset({"LSTM", "GRU", "RNN"})
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# vector work per time step and hidden unit, beyond the gate GEMM: LSTM applies 3 sigmoids
# and 2 tanh and updates the cell with 3 products and 1 sum; GRU 2 sigmoids, 1 tanh, 3
# products and 2 sums; a plain RNN one activation.
RECURRENT_VECTOR = {"LSTM": 9, "GRU": 8, "RNN": 1}

FREE_OPS = frozenset({
    "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Shape",
    "Size", "Cast", "CastLike", "Slice", "Split", "Expand", "Pad", "Tile", "Constant",
    "ConstantOfShape", "GatherElements", "DepthToSpace", "SpaceToDepth", "Range",
})

UNARY_OPS = frozenset({
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Selu",
    "Celu", "Gelu", "Softplus", "Softsign", "Mish", "Clip", "Erf", "Exp", "Log", "Sqrt",
    "Reciprocal", "Neg", "Abs", "Floor", "Ceil", "Round", "Sign", "Not", "Sin", "Cos",
    "ThresholdedRelu", "Shrink", "IsNaN", "IsInf",
})
BINARY_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mean", "Sum", "Where", "Equal", "Greater",
    "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Mod",
})
NORM_OPS = frozenset({
    "LayerNormalization", "InstanceNormalization", "GroupNormalization", "LpNormalization",
    "MeanVarianceNormalization",
})
SOFTMAX_OPS = frozenset({"Softmax", "LogSoftmax", "Hardmax"})
POOL_OPS = frozenset({"MaxPool", "AveragePool", "LpPool"})
GLOBAL_POOL_OPS = frozenset({"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
REDUCE_OPS = frozenset({
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin", "CumSum",
})
RESIZE_OPS = frozenset({"Resize", "Upsample"})
JOIN_OPS = frozenset({"Concat"})

VECTOR_OPS = (
    UNARY_OPS | BINARY_OPS | NORM_OPS | SOFTMAX_OPS | POOL_OPS | GLOBAL_POOL_OPS | REDUCE_OPS
    | RESIZE_OPS | JOIN_OPS | {"BatchNormalization", "LRN"}
)
SUPPORTED_OPS = MAIN_OPS | FREE_OPS | VECTOR_OPS

# ops whose constant operands fold into the weights (Mul/Div) or the bias (Add/Sub/BN) of a
# preceding Conv/Gemm when they are per-channel or scalar
SCALE_FOLD_OPS = frozenset({"Mul", "Div"})
SHIFT_FOLD_OPS = frozenset({"Add", "Sub", "BatchNormalization"})


def vector_cost(op_type: str, attrs: dict, in_numel: int, out_numel: int,
                kernel_area: int = 1) -> int:
    """Vector operations of one op per sample, by the rule in the module docstring.

    Examples
    --------
    >>> vector_cost("Softmax", {}, 10, 10)
    30
    >>> vector_cost("MaxPool", {}, 64, 16, kernel_area=4)
    64
    """
    if op_type == "BatchNormalization":
        return 2 * out_numel
    if op_type in NORM_OPS:
        return 5 * out_numel
    if op_type in SOFTMAX_OPS:
        return 3 * out_numel
    if op_type == "LRN":
        return (int(attrs.get("size", 1)) + 3) * out_numel
    if op_type in POOL_OPS:
        return kernel_area * out_numel
    if op_type in GLOBAL_POOL_OPS or op_type in REDUCE_OPS:
        return in_numel
    return out_numel


def mixes_rows(op_type: str, attrs: dict, rank: int) -> bool:
    """True when an op on an NCHW activation needs whole input rows (columns of H) at once.

    Such an op ends a layer group in the compiler (``Layer.splittable_h`` False).

    Examples
    --------
    >>> mixes_rows("Relu", {}, 4), mixes_rows("GlobalAveragePool", {}, 4)
    (False, True)
    """
    if op_type in GLOBAL_POOL_OPS or op_type in RESIZE_OPS or op_type == "InstanceNormalization":
        return True
    if op_type in {"GroupNormalization", "MeanVarianceNormalization"}:
        return True
    if op_type in SOFTMAX_OPS or op_type == "LpNormalization":
        # before opset 13 softmax flattened everything from ``axis`` on, so only a softmax
        # over the last axis (W) is known to keep rows apart
        return int(attrs.get("axis", -1)) % rank != rank - 1
    if op_type == "LayerNormalization":
        return int(attrs.get("axis", -1)) % rank <= 2
    if op_type in REDUCE_OPS:
        axes = attrs.get("axes")
        if axes is None:
            return True
        return any(int(a) % rank == 2 for a in axes)
    if op_type == "Concat":
        return int(attrs.get("axis", 1)) % rank == 2
    return False
