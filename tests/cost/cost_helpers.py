"""Hand-built layers and NPUs for the cost-model tests (the zoo is tested separately)."""

from __future__ import annotations

from npuweave.hardware import NPU
from npuweave.workload.layer import Layer, LayerKind


def npu(rows: int = 4, cols: int = 4, arrays: int = 1, **kw: object) -> NPU:
    """A toy NPU: 1 GHz, 1 GB/s (1 byte per cycle), 1 MiB buffers, 16-bit, no latency."""
    spec: dict[str, object] = dict(name="toy", pe_rows=rows, pe_cols=cols, arrays=arrays,
                                   clock_hz=1e9, dram_bw=1e9, weight_buffer=1 << 20,
                                   act_buffer=1 << 20)
    spec.update(kw)
    return NPU(**spec)  # type: ignore[arg-type]


def gemm(m: int, k: int, n: int, count: int = 1, kind: LayerKind = LayerKind.GEMM,
         name: str = "g", vector_ops: int = 0, weights: int | None = None) -> Layer:
    """A layer of ``count`` (m x k) @ (k x n) products with consistent element counts."""
    if weights is None:
        weights = 0 if kind is LayerKind.MATMUL else count * k * n
    in_elems = count * m * k + (count * k * n if kind is LayerKind.MATMUL else 0)
    return Layer(name=name, kind=kind, ops=("MatMul",), gemm=(count, m, k, n),
                 macs=count * m * k * n, vector_ops=vector_ops, weight_elems=weights,
                 in_elems=in_elems, out_elems=count * m * n)


def conv(cin: int, cout: int, hw: int, kernel: int = 3, groups: int = 1,
         name: str = "conv") -> Layer:
    """A stride-1, same-padded square conv on an ``hw x hw`` map (ReLU fused)."""
    k = (cin // groups) * kernel * kernel
    n = cout // groups
    m = hw * hw
    return Layer(name=name, kind=LayerKind.CONV, ops=("Conv", "Relu"), gemm=(groups, m, k, n),
                 macs=groups * m * k * n, vector_ops=cout * m,
                 weight_elems=cout * k + cout, in_elems=cin * m, out_elems=cout * m)


def vector(ops: int, elems: int, name: str = "v") -> Layer:
    return Layer(name=name, kind=LayerKind.VECTOR, ops=("Add",), gemm=None, macs=0,
                 vector_ops=ops, weight_elems=0, in_elems=elems, out_elems=elems)
