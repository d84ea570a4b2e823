"""Constant folding of the small shape computations found in exported ONNX models.

Exporters build Reshape targets from chains such as ``Shape -> Gather -> Unsqueeze ->
Concat``; once every activation shape is static these chains are constants, and folding them
lets ONNX shape inference see the Reshape target. Only ops that appear in such chains are
evaluated, with numpy, and only on small tensors: weights produced by ``ConstantOfShape`` stay
unevaluated constants whose shape alone matters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from onnx import numpy_helper

# a folded value larger than this is not materialized (it is a weight, not a shape)
MAX_FOLD_ELEMS = 4096

Array = np.ndarray
Folder = Callable[[dict[str, Any], list[Array], int], list[Array]]


def _axes(attrs: dict[str, Any], inputs: list[Array], pos: int) -> list[int] | None:
    if len(inputs) > pos and inputs[pos] is not None and inputs[pos].size:
        return [int(a) for a in inputs[pos].ravel()]
    axes = attrs.get("axes")
    return None if axes is None else [int(a) for a in axes]


def _constant(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    if "value" in attrs:
        return [numpy_helper.to_array(attrs["value"])]
    for key, dtype in (("value_float", np.float32), ("value_int", np.int64)):
        if key in attrs:
            return [np.array(attrs[key], dtype=dtype)]
    for key, dtype in (("value_floats", np.float32), ("value_ints", np.int64)):
        if key in attrs:
            return [np.array(list(attrs[key]), dtype=dtype)]
    raise ValueError("Constant without a supported value attribute")


def _constant_of_shape(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    shape = [int(d) for d in inputs[0].ravel()]
    fill = numpy_helper.to_array(attrs["value"]).ravel() if "value" in attrs else np.zeros(1, "f4")
    # a float fill makes a weight: its shape is all that matters, so it stays unevaluated
    if fill.dtype.kind == "f":
        raise ValueError("not a shape computation")
    return [np.full(_small(shape), fill[0], dtype=fill.dtype)]


def _unsqueeze(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    x = inputs[0]
    axes = _axes(attrs, inputs, 1) or []
    rank = x.ndim + len(axes)
    shape = list(x.shape)
    for a in sorted(a % rank for a in axes):
        shape.insert(a, 1)
    return [x.reshape(shape)]


def _squeeze(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    axes = _axes(attrs, inputs, 1)
    x = inputs[0]
    return [np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(a % x.ndim for a in axes))]


def _slice(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    x = inputs[0]
    if opset < 10:
        starts, ends = attrs["starts"], attrs["ends"]
        axes, steps = attrs.get("axes", range(len(starts))), [1] * len(starts)
    else:
        starts, ends = inputs[1].tolist(), inputs[2].tolist()
        axes = _axes({}, inputs, 3) or list(range(len(starts)))
        steps = inputs[4].tolist() if len(inputs) > 4 and inputs[4] is not None else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps, strict=False):
        index[int(a) % x.ndim] = slice(int(s), int(e), int(st))
    return [x[tuple(index)]]


def _reshape(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    x = inputs[0]
    target = [int(d) for d in (inputs[1].ravel() if len(inputs) > 1 else attrs["shape"])]
    target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    return [x.reshape(target)]


def _gather(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    return [np.take(inputs[0], inputs[1].astype(np.int64), axis=int(attrs.get("axis", 0)))]


def _concat(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    return [np.concatenate([np.atleast_1d(a) for a in inputs], axis=int(attrs.get("axis", 0)))]


def _cast(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    from onnx import helper

    return [inputs[0].astype(helper.tensor_dtype_to_np_dtype(int(attrs["to"])))]


def _div(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    a, b = inputs
    if np.issubdtype(a.dtype, np.integer):  # ONNX integer division truncates toward zero
        return [np.trunc(a / b).astype(a.dtype)]
    return [(a / b).astype(a.dtype)]


def _small(shape: Sequence[int]) -> tuple[int, ...]:
    """Refuse (as 'not a shape computation') an output too large to materialize."""
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims) or int(np.prod(dims, dtype=object)) > MAX_FOLD_ELEMS:
        raise ValueError("not a shape computation")
    return dims


def _expand(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    # size first: the target shape comes from the file and may claim billions of elements
    out = _small(np.broadcast_shapes(inputs[0].shape, _small(inputs[1].ravel().tolist())))
    return [np.broadcast_to(inputs[0], out).copy()]


def _range(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    start, limit, delta = (x.item() for x in inputs[:3])
    if delta == 0:
        raise ValueError("Range with delta 0")
    _small([max(int(np.ceil((limit - start) / delta)), 0)])
    return [np.arange(start, limit, delta)]


def _where(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
    _small(np.broadcast_shapes(inputs[0].shape, inputs[1].shape, inputs[2].shape))
    return [np.where(inputs[0], inputs[1], inputs[2])]


def _binary(fn: Callable[[Array, Array], Array]) -> Folder:
    def folder(attrs: dict[str, Any], inputs: list[Array], opset: int) -> list[Array]:
        _small(np.broadcast_shapes(inputs[0].shape, inputs[1].shape))
        return [np.asarray(fn(inputs[0], inputs[1]))]

    return folder


def _unary(fn: Callable[[Array], Array]) -> Folder:
    return lambda attrs, inputs, opset: [np.asarray(fn(inputs[0]))]


FOLDERS: dict[str, Folder] = {
    "Constant": _constant,
    "ConstantOfShape": _constant_of_shape,
    "Identity": _unary(lambda a: a),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Slice": _slice,
    "Reshape": _reshape,
    "Flatten": lambda attrs, i, o: [i[0].reshape(
        int(np.prod(i[0].shape[: int(attrs.get("axis", 1))])), -1)],
    "Gather": _gather,
    "Concat": _concat,
    "Cast": _cast,
    "Add": _binary(np.add),
    "Sub": _binary(np.subtract),
    "Mul": _binary(np.multiply),
    "Div": _div,
    "Max": _binary(np.maximum),
    "Min": _binary(np.minimum),
    "Equal": _binary(np.equal),
    "Less": _binary(np.less),
    "Greater": _binary(np.greater),
    "Neg": _unary(np.negative),
    "Abs": _unary(np.abs),
    "Floor": _unary(np.floor),
    "Ceil": _unary(np.ceil),
    "Sqrt": _unary(np.sqrt),
    "Not": _unary(np.logical_not),
    "Where": _where,
    "Expand": _expand,
    "Range": _range,
    "Transpose": lambda attrs, i, o: [np.transpose(i[0], attrs.get("perm"))],
    "ReduceProd": lambda attrs, i, o: [np.prod(i[0], keepdims=bool(attrs.get("keepdims", 1)))],
}


def fold(op_type: str, attrs: dict[str, Any], inputs: Sequence[Array | None],
         opset: int) -> list[Array] | None:
    """Evaluate a constant node with numpy, or return None when it cannot or should not be.

    Examples
    --------
    >>> import numpy as np
    >>> fold("Concat", {"axis": 0}, [np.array([1]), np.array([-1])], 13)[0].tolist()
    [1, -1]
    """
    folder = FOLDERS.get(op_type)
    if folder is None:
        return None
    try:
        outs = folder(attrs, list(inputs), opset)  # type: ignore[arg-type]
    except (ValueError, KeyError, IndexError, TypeError, ZeroDivisionError, OverflowError,
            MemoryError):
        return None
    if any(np.asarray(o).size > MAX_FOLD_ELEMS for o in outs):
        return None
    return [np.asarray(o) for o in outs]
