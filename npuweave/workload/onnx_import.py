"""ONNX import: an ``.onnx`` file to a ``Graph`` with static shapes at batch 1.

Steps: read the file without external data; fix the runtime input shapes (the batch dim
becomes 1, because layers are per sample); learn every tensor's shape with ONNX shape
inference and constant folding (``shapes.ShapeState``); check that every remaining op is
supported and has shapes, reporting all offenders in one ``ModelImportError``; build the
``Graph``. Nodes whose inputs are all constants (weights made by ``Constant`` or
``ConstantOfShape``, shape arithmetic) are folded away: their outputs are const tensors.

The model's declared batch (dim 0 of its first runtime input, or 1 when symbolic) or the
``batch`` argument is kept in ``graph.meta["batch"]``, for the cost model's default.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from pathlib import Path

import onnx
from onnx import helper

from npuweave.errors import ModelImportError
from npuweave.workload.checks import check_graph
from npuweave.workload.graph import Graph, Op, Tensor
from npuweave.workload.layer import check_batch
from npuweave.workload.opinfo import RECURRENT_OPS, SUPPORTED_OPS
from npuweave.workload.shapes import ShapeState, attrs_of, static_shape

MIN_OPSET = 7
_LIST_MAX = 20  # offending nodes named in one message


def import_onnx(path: str | Path, batch: int | None = None,
                dims: dict[str, int] | None = None) -> Graph:
    """Import an ONNX model as a ``Graph`` at batch 1.

    Parameters
    ----------
    path : the ``.onnx`` file; weights may be absent (only their dims are used).
    batch : the batch size to record in ``graph.meta["batch"]`` instead of the declared one.
    dims : values for symbolic input dims other than the batch (e.g. ``{"seq": 128}``).

    Raises
    ------
    ModelImportError : unreadable file, unsupported ops or shapes that cannot be inferred.
    ConfigError : a batch below 1.

    Examples
    --------
    >>> g = import_onnx("resnet50.onnx", batch=8)   # doctest: +SKIP
    >>> g.meta["batch"], g.tensor(g.inputs[0]).shape  # doctest: +SKIP
    (8, (1, 3, 224, 224))
    """
    batch = None if batch is None else check_batch(batch)
    path = Path(path)
    model = read_model(path)
    opset = _opset(model, path)
    g = model.graph
    state = ShapeState(list(g.node), opset)
    for init in g.initializer:
        _check_initializer(init, path)
        state.add_initializer(init)
    declared = _add_inputs(state, g, dims or {}, path)
    _check_outputs(state.nodes, g, path)
    try:
        state.resolve(list(g.output), list(model.opset_import))
    except onnx.shape_inference.InferenceError as exc:  # e.g. a Conv without its input
        msg = str(exc).splitlines()[0][:200] if str(exc) else "no message"
        raise ModelImportError(f"{path}: ONNX shape inference failed ({msg}); check the model "
                               "with onnx.checker.check_model") from None
    runtime = [n for n in state.nodes if not all(o in state.const for o in n.output if o)]
    names = _node_names(state.nodes)  # keyed by id(): the same NodeProto objects throughout
    _check_supported(runtime, names, path)
    _check_shapes(runtime, names, state, g, model, declared, path)
    graph = _build(runtime, names, state, g, path)
    check_graph(graph, str(path))
    graph.meta.update({"batch": batch or declared or 1, "declared_batch": declared,
                       "opset": opset, "producer": model.producer_name})
    return graph


MAX_MODEL_BYTES = 2**31  # protobuf's own limit for one message


def read_model(path: Path) -> onnx.ModelProto:
    """Load an ONNX file without external data, turning every failure into one line."""
    if path.is_dir():
        raise ModelImportError(f"{path}: is a directory, not an ONNX file; give the .onnx file")
    if not path.exists():
        raise ModelImportError(f"{path}: no such file; check the model path")
    if not path.is_file():
        raise ModelImportError(f"{path}: not a regular file (a pipe or device); save the model "
                               "to a file and give its path")
    if path.stat().st_size > MAX_MODEL_BYTES:
        raise ModelImportError(f"{path}: {path.stat().st_size} bytes, over the limit "
                               f"{MAX_MODEL_BYTES} (npuweave.workload.onnx_import."
                               "MAX_MODEL_BYTES; protobuf cannot read more than 2 GiB): keep "
                               "the weights as external data")
    hint = "re-export it (torch.onnx.export, tf2onnx) or check that the download is complete"
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # protobuf raises DecodeError, RuntimeWarning, ValueError...
        raise ModelImportError(f"{path}: not a readable ONNX model ({type(exc).__name__}); "
                               f"{hint}") from None
    if not model.graph.node or not model.opset_import:
        raise ModelImportError(f"{path}: not an ONNX model (no graph or opset found); {hint}")
    bad = next(chain((o.domain for o in model.opset_import if isinstance(o.domain, bytes)),
                     _undecodable_names(model.graph)), None)
    if bad is not None:  # protobuf hands back bytes for a name that is not UTF-8 text
        raise ModelImportError(f"{path}: the name {bad!r} in the graph is not UTF-8 text (a "
                               f"corrupt file?); {hint}")
    return model


def _undecodable_names(g: onnx.GraphProto) -> Iterator[bytes]:
    """Every tensor, value or node name of ``g`` that protobuf could not decode as text."""
    for vi in chain(g.input, g.output, g.value_info, g.initializer):
        if isinstance(vi.name, bytes):
            yield vi.name
    for node in g.node:
        for name in chain((node.name, node.op_type, node.domain), node.input, node.output,
                          (a.name for a in node.attribute)):
            if isinstance(name, bytes):
                yield name


def _opset(model: onnx.ModelProto, path: Path) -> int:
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if not versions:
        found = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
        raise ModelImportError(f"{path}: the model imports no standard ONNX opset (only "
                               f"{found}); add the default domain ('') to opset_import, e.g. "
                               "onnx.helper.make_opsetid('', 13), and re-export")
    opset = versions[0]
    if opset < MIN_OPSET:
        raise ModelImportError(
            f"{path}: ONNX opset {opset} is older than {MIN_OPSET}; upgrade the model with "
            f"onnx.version_converter.convert_version(model, 13)")
    return opset


_DATA_TYPES = frozenset(onnx.TensorProto.DataType.values()) - {onnx.TensorProto.UNDEFINED}


def _check_initializer(init: onnx.TensorProto, path: Path) -> None:
    if init.data_type not in _DATA_TYPES or any(d < 0 for d in init.dims):
        raise ModelImportError(f"{path}: initializer '{init.name}' has data type "
                               f"{init.data_type} and dims {list(init.dims)}; the file is "
                               "damaged or hand-edited: re-export the model")


def _batch_axis(name: str, nodes: list[onnx.NodeProto]) -> int:
    """0, except for a sequence-major input read directly by LSTM/GRU/RNN (layout 0)."""
    for node in nodes:
        if node.op_type in RECURRENT_OPS and node.input and node.input[0] == name:
            return 1 if attrs_of(node).get("layout", 0) == 0 else 0
    return 0


def _add_inputs(state: ShapeState, g: onnx.GraphProto, dims: dict[str, int],
                path: Path) -> int | None:
    """Give each runtime input a static shape with batch 1; return the declared batch."""
    inits = {i.name for i in g.initializer}
    declared: int | None = None
    problems: list[str] = []
    bad_dims: list[str] = []
    for k, vi in enumerate(i for i in g.input if i.name not in inits):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            problems.append(f"input '{vi.name}' has no shape")
            continue
        axis = _batch_axis(vi.name, list(g.node)) if len(tt.shape.dim) > 1 else 0
        batch_dim = tt.shape.dim[axis] if len(tt.shape.dim) > axis else None
        symbol = batch_dim.dim_param if batch_dim is not None else ""
        shape = []
        for j, d in enumerate(tt.shape.dim):
            if j == axis:
                if k == 0 and d.HasField("dim_value") and d.dim_value > 0:
                    declared = int(d.dim_value)
                shape.append(1)
            elif d.HasField("dim_value") and d.dim_value > 0:
                shape.append(int(d.dim_value))
            elif d.HasField("dim_value"):
                bad_dims.append(f"input '{vi.name}' dim {j} is {d.dim_value}")
            elif d.dim_param and d.dim_param == symbol:
                shape.append(1)
            elif d.dim_param in dims:
                shape.append(int(dims[d.dim_param]))
            else:
                problems.append(f"input '{vi.name}' dim {j} ('{d.dim_param or '?'}') is unknown")
        state.add_input(vi.name, tt.elem_type, tuple(shape))
    if bad_dims:
        raise ModelImportError(f"{path}: {'; '.join(bad_dims)}; every input dim must be >= 1: "
                               "fix the input shape in the model and re-export")
    if problems:
        raise ModelImportError(f"{path}: {'; '.join(problems)}; give the model static input "
                               "shapes (e.g. onnxsim --overwrite-input-shape), or from Python "
                               "pass import_onnx(path, dims={'name': value})")
    return declared


def _node_names(nodes) -> dict[int, str]:
    """A unique name per node (by position): its own, or ``<OpType>_<index>``."""
    names: dict[int, str] = {}
    seen: set[str] = set()
    for idx, node in enumerate(nodes):
        name = node.name or f"{node.op_type}_{idx}"
        if name in seen:
            name = f"{name}_{idx}"
        seen.add(name)
        names[id(node)] = name
    return names


def _check_outputs(nodes: list[onnx.NodeProto], g: onnx.GraphProto, path: Path) -> None:
    """Every graph output must come from somewhere (a truncated or hand-edited file fails)."""
    made = {o for n in nodes for o in n.output} | {i.name for i in g.input}
    made |= {i.name for i in g.initializer}
    orphans = [o.name for o in g.output if o.name not in made]
    if not g.output or orphans:
        what = f"outputs {orphans} are produced by no node" if orphans else "it has no outputs"
        raise ModelImportError(f"{path}: the graph is incomplete ({what}); the file may be "
                               f"truncated or edited: re-export the model")


def _listing(items: list[str]) -> str:
    more = f", and {len(items) - _LIST_MAX} more" if len(items) > _LIST_MAX else ""
    return ", ".join(items[:_LIST_MAX]) + more


def _check_supported(runtime: list[onnx.NodeProto], names: dict[int, str], path: Path) -> None:
    bad = [f"'{names[id(n)]}' ({(n.domain + '::') if n.domain not in ('', 'ai.onnx') else ''}"
           f"{n.op_type})" for n in runtime
           if n.domain not in ("", "ai.onnx") or n.op_type not in SUPPORTED_OPS]
    if bad:
        raise ModelImportError(
            f"{path}: {len(bad)} unsupported op(s): {_listing(bad)}; npuweave lowers standard "
            f"ONNX ops (npuweave.workload.opinfo.SUPPORTED_OPS): replace these or re-export")


def _check_shapes(runtime, names, state: ShapeState, g, model, declared, path: Path) -> None:
    used = {i for n in runtime for i in n.input if i} | {o.name for o in g.output}
    bad = []
    for node in runtime:
        wanted = [o for o in node.output if o and o in used] or list(node.output[:1])
        wanted += [i for i in node.input if i]
        if any(t not in state.shapes for t in wanted):
            bad.append(f"'{names[id(node)]}' ({node.op_type})")
    if not bad:
        return
    why = state.first_error(list(g.output), list(model.opset_import))
    hint = (f" (the model declares batch {declared}: an op that hard-codes it cannot run at "
            f"batch 1; re-export with a dynamic batch)") if declared and declared > 1 else ""
    raise ModelImportError(
        f"{path}: shapes cannot be inferred for {len(bad)} node(s): {_listing(bad)}{hint}; "
        f"give the model static input shapes or fold its constants (onnxsim)"
        + (f"; shape inference says: {why}" if why else ""))


def _dtype(elem_type: int, tensor: str, path: Path) -> str:
    try:
        return helper.tensor_dtype_to_np_dtype(elem_type).name
    except Exception:  # bfloat16, float8...: keep ONNX's own name
        pass
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        raise ModelImportError(f"{path}: tensor '{tensor}' has element type {elem_type}, "
                               "which is not an ONNX data type; re-export the model or check "
                               "that the file is complete") from None


def _build(runtime, names, state: ShapeState, g: onnx.GraphProto, path: Path) -> Graph:
    ops, tensors = [], {}
    for node in runtime:
        ops.append(Op(names[id(node)], node.op_type, tuple(node.input), tuple(node.output),
                      attrs_of(node)))
        for t in list(node.input) + list(node.output):
            if t and t not in tensors and t in state.shapes:
                dtype = _dtype(state.elem_types.get(t, 1), t, path)
                tensors[t] = Tensor(t, state.shapes[t], dtype, t in state.const)
    inits = {i.name for i in g.initializer}
    inputs = [i.name for i in g.input if i.name not in inits]
    for name in inputs:
        tensors.setdefault(name, Tensor(name, state.shapes[name],
                                        _dtype(state.elem_types[name], name, path)))
    outputs = [o.name for o in g.output if o.name in tensors and not tensors[o.name].const]
    return Graph(path.stem, ops, tensors, inputs, outputs, source=str(path))


__all__ = ["import_onnx", "check_batch", "read_model", "static_shape"]
