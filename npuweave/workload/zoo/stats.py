"""Graph-level counts for zoo models: weighted ops, MACs, parameters.

These count straight from the ``Graph`` (not through ``lower``), so tests can cross-check
the lowering against them and ``docs/MODELS.md`` can be regenerated with::

    python -m npuweave.workload.zoo.stats

Conventions: one MAC per multiply-accumulate of a Conv, Gemm, MatMul or LSTM gate product
(elementwise ops, pooling and normalizations count none); an LSTM step costs
``4*hidden*(input+hidden)`` MACs per direction. Parameters are every constant tensor that
is not a recorded value (see ``builder``), i.e. weights, biases, all four BatchNorm vectors
and embedding tables.
"""

from __future__ import annotations

import math

from npuweave.workload.graph import Graph, Op

#: ops that carry their own weights and become weighted layers when lowered.
WEIGHTED_TYPES = frozenset({"Conv", "Gemm", "LSTM", "GRU", "RNN"})


def _is_param(graph: Graph, name: str) -> bool:
    t = graph.tensors.get(name)
    return t is not None and t.const and name not in graph.meta.get("const_values", {})


def op_macs(graph: Graph, op: Op) -> int:
    """Multiply-accumulates of one op at the graph's batch (0 for non-GEMM ops)."""
    shape = graph.tensors
    if op.op_type == "Conv":
        w = shape[op.inputs[1]].shape
        return math.prod(shape[op.outputs[0]].shape) * math.prod(w[1:])
    if op.op_type == "Gemm":
        a = shape[op.inputs[0]].shape
        k = a[0] if op.attrs.get("transA", 0) else a[1]
        return math.prod(shape[op.outputs[0]].shape) * k
    if op.op_type == "MatMul":
        return math.prod(shape[op.outputs[0]].shape) * shape[op.inputs[0]].shape[-1]
    if op.op_type == "LSTM":
        t, batch, feat = shape[op.inputs[0]].shape
        dirs, gates_h, _ = shape[op.inputs[1]].shape
        hidden = gates_h // 4
        return t * batch * dirs * gates_h * (feat + hidden)
    return 0


def is_weighted(graph: Graph, op: Op) -> bool:
    """True for ops that lower to a layer with weights (incl. embedding lookups)."""
    if op.op_type in WEIGHTED_TYPES:
        return True
    if op.op_type == "MatMul":
        return any(_is_param(graph, i) for i in op.inputs)
    if op.op_type == "Gather":
        return _is_param(graph, op.inputs[0])
    return False


def is_attention(graph: Graph, op: Op) -> bool:
    """True for activation-by-activation MatMuls (no weights)."""
    return op.op_type == "MatMul" and not is_weighted(graph, op)


def param_count(graph: Graph) -> int:
    """Learned parameters: constant tensors that are not recorded values."""
    return sum(t.numel for name, t in graph.tensors.items() if _is_param(graph, name))


def total_macs(graph: Graph) -> int:
    return sum(op_macs(graph, op) for op in graph.ops)


def summarize(graph: Graph) -> dict[str, float | int | str]:
    """Counts for one model: weighted ops, attention MatMuls, GMACs, M params, weight MB (16 b)."""
    params = param_count(graph)
    return {
        "model": graph.name,
        "weighted": sum(is_weighted(graph, op) for op in graph.ops),
        "attention": sum(is_attention(graph, op) for op in graph.ops),
        "gmacs": total_macs(graph) / 1e9,
        "params_m": params / 1e6,
        "weight_mb16": params * 2 / 1e6,
    }


def markdown_table() -> str:
    """The model table of ``docs/MODELS.md`` (default parameters, batch 1)."""
    from npuweave.workload import zoo

    rows = ["| model | aliases | weighted ops | attention MatMuls | GMACs | params (M) | "
            "weight MB (16 b) |", "|---|---|---:|---:|---:|---:|---:|"]
    for name in zoo.names():
        s = summarize(zoo.build(name))
        aliases = ", ".join(zoo.aliases(name)) or "-"
        rows.append(f"| `{name}` | {aliases} | {s['weighted']} | {s['attention']} | "
                    f"{s['gmacs']:.4g} | {s['params_m']:.2f} | {s['weight_mb16']:.1f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
