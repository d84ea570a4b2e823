"""``GraphBuilder``: write a zoo model as ONNX-spelled ops, with shapes computed as you go.

Every method takes input tensor names, appends one op (or a short fixed sequence) to the
graph, and returns the output tensor name. Shapes are NCHW for images and batch-first
``[1, seq, features]`` for sequences; the batch is always 1 (the cost model applies batch).

Weights are ``Tensor(const=True)`` with shapes only. Constants whose *values* matter for
an exporter or for shape inference (``Reshape`` shapes, ``Split`` sizes, ``Clip`` bounds,
position ids, a scale factor) are constants too, and their values are recorded in
``graph.meta["const_values"]`` (name -> tuple of numbers); a constant that is not in that
map is a learned parameter.

Op types, attribute names and input orders follow the ONNX operator specification at
opset 20 (``LayerNormalization`` needs 17, ``Gelu`` needs 20), so a zoo graph can be written
as an ONNX file without translation.

Examples
--------
>>> b = GraphBuilder("tiny")
>>> x = b.input("image", (1, 3, 8, 8))
>>> y = b.relu(b.conv(x, 4, k=3))
>>> b.shape(y)
(1, 4, 8, 8)
>>> g = b.finish([y])
>>> [op.op_type for op in g.ops]
['Conv', 'Relu']
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from npuweave.workload.graph import Graph, Op, Tensor

#: The ONNX opset whose spellings the zoo uses (the newest op it needs is ``Gelu``).
ZOO_OPSET = 20


def _pair(v: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    a, b = v
    return (int(a), int(b))


def _pool_len(size: int, k: int, s: int, p0: int, p1: int, ceil: bool) -> int:
    span = size + p0 + p1 - k
    n = -(-span // s) if ceil else span // s
    return n + 1


class GraphBuilder:
    """Accumulates ops and tensors for one model; ``finish`` returns the ``Graph``.

    Parameters
    ----------
    name : model name; the graph's ``source`` becomes ``zoo:<name>``.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.ops: list[Op] = []
        self.tensors: dict[str, Tensor] = {}
        self.inputs: list[str] = []
        self.values: dict[str, tuple[float | int, ...]] = {}
        self._scope: list[str] = []
        self._used: set[str] = set()

    # -- naming and bookkeeping ---------------------------------------------------------------
    @contextmanager
    def scope(self, name: str) -> Iterator[None]:
        """Prefix every op and weight created inside the block with ``name/``."""
        self._scope.append(name)
        try:
            yield
        finally:
            self._scope.pop()

    def _unique(self, base: str) -> str:
        name = "/".join([*self._scope, base])
        if name in self._used:
            i = 1
            while f"{name}_{i}" in self._used:
                i += 1
            name = f"{name}_{i}"
        self._used.add(name)
        return name

    def shape(self, x: str) -> tuple[int, ...]:
        """Static shape of tensor ``x``."""
        return self.tensors[x].shape

    def input(self, name: str, shape: Sequence[int], dtype: str = "float32") -> str:
        """Declare a runtime graph input."""
        self._used.add(name)
        self.tensors[name] = Tensor(name, tuple(shape), dtype)
        self.inputs.append(name)
        return name

    def weight(self, base: str, shape: Sequence[int]) -> str:
        """A learned parameter (values never materialized)."""
        name = self._unique(base)
        self.tensors[name] = Tensor(name, tuple(int(d) for d in shape), "float32", const=True)
        return name

    def value(self, base: str, values: Sequence[float | int], dtype: str = "int64",
              shape: Sequence[int] | None = None) -> str:
        """A constant whose values are recorded (shapes, sizes, bounds, indices)."""
        name = self._unique(base)
        shp = (len(values),) if shape is None else tuple(shape)
        self.tensors[name] = Tensor(name, shp, dtype, const=True)
        self.values[name] = tuple(values)
        return name

    def op(self, op_type: str, inputs: Sequence[str], out_shape: Sequence[int],
           attrs: dict | None = None, name: str | None = None, dtype: str = "float32") -> str:
        """Append one single-output op and return its output name (the op's name)."""
        return self.multi(op_type, inputs, [out_shape], attrs, name, dtype)[0]

    def multi(self, op_type: str, inputs: Sequence[str], out_shapes: Sequence[Sequence[int]],
              attrs: dict | None = None, name: str | None = None,
              dtype: str = "float32") -> list[str]:
        """Append one op with one output per shape; the first output is named like the op."""
        opname = self._unique(name or op_type.lower())
        outs = [opname] + [f"{opname}:{i}" for i in range(1, len(out_shapes))]
        for out, shp in zip(outs, out_shapes, strict=True):
            self.tensors[out] = Tensor(out, tuple(int(d) for d in shp), dtype)
        self.ops.append(Op(opname, op_type, tuple(inputs), tuple(outs), dict(attrs or {})))
        return outs

    def finish(self, outputs: Sequence[str]) -> Graph:
        """Close the graph with ``outputs`` as its results."""
        return Graph(
            name=self.name, ops=self.ops, tensors=self.tensors, inputs=list(self.inputs),
            outputs=list(outputs), source=f"zoo:{self.name}",
            meta={"const_values": dict(self.values), "opset": ZOO_OPSET},
        )

    # -- convolution and pooling --------------------------------------------------------------
    def conv(self, x: str, cout: int, k: int | Sequence[int], stride: int = 1,
             pad: int | Sequence[int] | None = None, groups: int = 1, bias: bool = False,
             name: str = "conv") -> str:
        """2-D convolution; ``pad=None`` keeps 'same' size for odd kernels (``k // 2``)."""
        n, c, h, w = self.shape(x)
        kh, kw = _pair(k)
        ph, pw = (kh // 2, kw // 2) if pad is None else _pair(pad)
        s = _pair(stride)
        assert c % groups == 0 and cout % groups == 0, (x, c, cout, groups)
        oh = (h + 2 * ph - kh) // s[0] + 1
        ow = (w + 2 * pw - kw) // s[1] + 1
        ins = [x, self.weight(f"{name}.weight", (cout, c // groups, kh, kw))]
        if bias:
            ins.append(self.weight(f"{name}.bias", (cout,)))
        attrs = {"kernel_shape": [kh, kw], "strides": list(s), "pads": [ph, pw, ph, pw],
                 "dilations": [1, 1], "group": groups}
        return self.op("Conv", ins, (n, cout, oh, ow), attrs, name=name)

    def bn(self, x: str, eps: float = 1e-5, name: str = "bn") -> str:
        """Inference BatchNormalization (scale, bias, running mean and variance per channel)."""
        c = self.shape(x)[1]
        ins = [x] + [self.weight(f"{name}.{p}", (c,)) for p in ("scale", "bias", "mean", "var")]
        return self.op("BatchNormalization", ins, self.shape(x), {"epsilon": eps}, name=name)

    def maxpool(self, x: str, k: int, stride: int, pad: int = 0, ceil: bool = False) -> str:
        return self._pool("MaxPool", x, k, stride, pad, ceil)

    def avgpool(self, x: str, k: int, stride: int, pad: int = 0, ceil: bool = False) -> str:
        return self._pool("AveragePool", x, k, stride, pad, ceil)

    def _pool(self, op_type: str, x: str, k: int, stride: int, pad: int, ceil: bool) -> str:
        n, c, h, w = self.shape(x)
        oh = _pool_len(h, k, stride, pad, pad, ceil)
        ow = _pool_len(w, k, stride, pad, pad, ceil)
        attrs = {"kernel_shape": [k, k], "strides": [stride, stride],
                 "pads": [pad, pad, pad, pad], "ceil_mode": int(ceil)}
        if op_type == "AveragePool":
            attrs["count_include_pad"] = 0
        return self.op(op_type, [x], (n, c, oh, ow), attrs)

    def gap(self, x: str) -> str:
        """GlobalAveragePool to ``(N, C, 1, 1)``."""
        n, c = self.shape(x)[:2]
        return self.op("GlobalAveragePool", [x], (n, c, 1, 1))

    def lrn(self, x: str, size: int = 5, alpha: float = 1e-4, beta: float = 0.75,
            bias: float = 1.0) -> str:
        """Local response normalization across channels (AlexNet, GoogLeNet)."""
        attrs = {"size": size, "alpha": alpha, "beta": beta, "bias": bias}
        return self.op("LRN", [x], self.shape(x), attrs)

    def flatten(self, x: str, axis: int = 1) -> str:
        shp = self.shape(x)
        return self.op("Flatten", [x], (math.prod(shp[:axis]), math.prod(shp[axis:])),
                       {"axis": axis})

    # -- activations and elementwise ----------------------------------------------------------
    def relu(self, x: str) -> str:
        return self.op("Relu", [x], self.shape(x))

    def relu6(self, x: str) -> str:
        """ReLU6 as ``Clip(x, 0, 6)`` with the bounds as recorded scalar constants."""
        lo = self.value("clip.min", (0.0,), "float32", shape=())
        hi = self.value("clip.max", (6.0,), "float32", shape=())
        return self.op("Clip", [x, lo, hi], self.shape(x))

    def unary(self, op_type: str, x: str) -> str:
        """Any shape-preserving one-input op: ``Tanh``, ``Sigmoid``, ``Gelu``..."""
        return self.op(op_type, [x], self.shape(x))

    def gelu(self, x: str) -> str:
        return self.op("Gelu", [x], self.shape(x), {"approximate": "none"})

    def softmax(self, x: str, axis: int = -1) -> str:
        return self.op("Softmax", [x], self.shape(x), {"axis": axis})

    def binary(self, op_type: str, a: str, b: str) -> str:
        """Broadcasting ``Add``/``Mul``/``Sub``/``Div`` (numpy rules)."""
        sa, sb = self.shape(a), self.shape(b)
        rank = max(len(sa), len(sb))
        sa, sb = (1,) * (rank - len(sa)) + sa, (1,) * (rank - len(sb)) + sb
        assert all(p == q or 1 in (p, q) for p, q in zip(sa, sb, strict=True)), (a, b, sa, sb)
        return self.op(op_type, [a, b], tuple(max(p, q) for p, q in zip(sa, sb, strict=True)))

    def add(self, a: str, b: str) -> str:
        return self.binary("Add", a, b)

    def mul(self, a: str, b: str) -> str:
        return self.binary("Mul", a, b)

    def scale(self, x: str, factor: float) -> str:
        """Multiply by a recorded scalar constant (attention's 1/sqrt(d))."""
        return self.binary("Mul", x, self.value("scale", (factor,), "float32", shape=()))

    def bias(self, x: str, name: str = "bias") -> str:
        """Add a learned bias over the last axis."""
        return self.add(x, self.weight(name, (self.shape(x)[-1],)))

    # -- fully connected and matrix products --------------------------------------------------
    def gemm(self, x: str, n: int, bias: bool = True, name: str = "fc") -> str:
        """``Gemm`` on a 2-D input with a PyTorch-layout weight ``(n, k)`` (``transB=1``)."""
        m, k = self.shape(x)
        ins = [x, self.weight(f"{name}.weight", (n, k))]
        if bias:
            ins.append(self.weight(f"{name}.bias", (n,)))
        return self.op("Gemm", ins, (m, n), {"transB": 1}, name=name)

    def linear(self, x: str, n: int, bias: bool = True, name: str = "linear") -> str:
        """``MatMul`` by a ``(k, n)`` weight on any-rank input, then an optional bias ``Add``."""
        shp = self.shape(x)
        w = self.weight(f"{name}.weight", (shp[-1], n))
        y = self.op("MatMul", [x, w], (*shp[:-1], n), name=name)
        return self.bias(y, f"{name}.bias") if bias else y

    def matmul(self, a: str, b: str) -> str:
        """Batched ``MatMul`` of two tensors with equal leading dims (attention)."""
        sa, sb = self.shape(a), self.shape(b)
        assert sa[:-2] == sb[:-2] and sa[-1] == sb[-2], (a, b, sa, sb)
        return self.op("MatMul", [a, b], (*sa[:-1], sb[-1]))

    def layernorm(self, x: str, eps: float = 1e-12, name: str = "ln") -> str:
        """``LayerNormalization`` over the last axis with learned scale and bias."""
        d = self.shape(x)[-1]
        ins = [x, self.weight(f"{name}.scale", (d,)), self.weight(f"{name}.bias", (d,))]
        return self.op("LayerNormalization", ins, self.shape(x), {"axis": -1, "epsilon": eps},
                       name=name)

    def embedding(self, ids: str, vocab: int, dim: int, name: str = "embedding") -> str:
        """``Gather`` rows of a learned ``(vocab, dim)`` table."""
        table = self.weight(f"{name}.weight", (vocab, dim))
        return self.op("Gather", [table, ids], (*self.shape(ids), dim), {"axis": 0}, name=name)

    # -- shape manipulation -------------------------------------------------------------------
    def reshape(self, x: str, shape: Sequence[int]) -> str:
        shape = tuple(int(d) for d in shape)
        assert math.prod(shape) == math.prod(self.shape(x)), (x, self.shape(x), shape)
        return self.op("Reshape", [x, self.value("shape", shape)], shape)

    def transpose(self, x: str, perm: Sequence[int]) -> str:
        shp = self.shape(x)
        return self.op("Transpose", [x], tuple(shp[p] for p in perm), {"perm": list(perm)})

    def concat(self, xs: Sequence[str], axis: int = 1) -> str:
        shapes = [self.shape(x) for x in xs]
        ax = axis % len(shapes[0])
        out = list(shapes[0])
        out[ax] = sum(s[ax] for s in shapes)
        return self.op("Concat", list(xs), out, {"axis": axis})

    def split(self, x: str, sizes: Sequence[int], axis: int = -1) -> list[str]:
        """``Split`` into pieces of ``sizes`` along ``axis`` (one op, several outputs)."""
        shp = self.shape(x)
        ax = axis % len(shp)
        assert sum(sizes) == shp[ax], (x, shp, sizes)
        shapes = [(*shp[:ax], size, *shp[ax + 1:]) for size in sizes]
        ins = [x, self.value("split.sizes", tuple(sizes))]
        return self.multi("Split", ins, shapes, {"axis": axis})

    def slice(self, x: str, axis: int, start: int, end: int) -> str:
        """``Slice`` one axis to ``[start, end)``."""
        out = list(self.shape(x))
        out[axis % len(out)] = end - start
        ins = [x, self.value("starts", (start,)), self.value("ends", (end,)),
               self.value("axes", (axis,))]
        return self.op("Slice", ins, out)

    def take(self, x: str, index: int, axis: int) -> str:
        """``Gather`` one position along ``axis`` of an activation (drops that axis)."""
        out = list(self.shape(x))
        del out[axis % len(out)]
        return self.op("Gather", [x, self.value("index", (index,), shape=())], out,
                       {"axis": axis})

    # -- recurrent ----------------------------------------------------------------------------
    def lstm(self, x: str, hidden: int, bidirectional: bool = False, name: str = "lstm",
             last: bool = False) -> str:
        """ONNX ``LSTM`` (default layout: time-major) wrapped to batch-first ``[1, T, F]``.

        Returns the per-step outputs ``[1, T, dirs*hidden]``, or with ``last=True`` the final
        hidden state ``[1, dirs*hidden]``. Weights: ``W (dirs, 4H, F)``, ``R (dirs, 4H, H)``,
        ``B (dirs, 8H)`` (input and recurrent biases, as ONNX and PyTorch keep them).
        """
        one, t, f = self.shape(x)
        d = 2 if bidirectional else 1
        xt = self.transpose(x, (1, 0, 2))
        ins = [xt, self.weight(f"{name}.W", (d, 4 * hidden, f)),
               self.weight(f"{name}.R", (d, 4 * hidden, hidden)),
               self.weight(f"{name}.B", (d, 8 * hidden))]
        attrs = {"hidden_size": hidden,
                 "direction": "bidirectional" if bidirectional else "forward"}
        shapes = [(t, d, one, hidden)] + ([(d, one, hidden)] if last else [])
        outs = self.multi("LSTM", ins, shapes, attrs, name=name)
        if last:
            return self.reshape(self.transpose(outs[1], (1, 0, 2)), (one, d * hidden))
        return self.reshape(self.transpose(outs[0], (2, 0, 1, 3)), (one, t, d * hidden))
