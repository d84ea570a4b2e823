"""``Layer``: the schedulable unit every later stage works on.

A layer is one weighted op (Conv, Gemm, MatMul with a constant operand, LSTM/GRU/RNN, an
embedding lookup) with the elementwise ops, activations, normalizations and pooling that
follow it fused in; an activation-by-activation MatMul (attention); or a standalone vector op.

All element counts are **per sample** (batch 1); the cost model scales by batch. Weight
counts do not scale with batch.

Every weighted or matmul layer is described as a GEMM so one cost model serves them all:
``gemm = (count, m, k, n)`` means ``count`` independent products of an (m x k) activation
matrix with a (k x n) operand, per sample, executed one after another:

* Conv (groups g): count=g, m=OH*OW, k=(C/g)*KH*KW, n=Cout/g (depthwise: k=KH*KW, n=1).
* Gemm / MatMul with weights: count=1, m=rows per sample (1, or the sequence length), k, n.
* Attention MatMul: count=heads (or leading dims), m, k, n from the two operand shapes;
  the "weights" are the second activation, so ``weight_elems`` is 0.
* LSTM/GRU/RNN: count=seq_len time steps, m=1, k=input+hidden, n=gates*hidden; the same
  weights serve every step (they are counted once in ``weight_elems``).
* Embedding: no GEMM (``gemm`` is None); ``gather_elems`` table elements are read per sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from npuweave.errors import ConfigError

MAX_BATCH = 1 << 16  # samples per inference; far past any NPU's batch


def check_batch(batch: object) -> int:
    """Validate a batch size (samples per inference): an integer of at least 1.

    Layers are per sample; the batch is applied by the cost model and recorded by the importer,
    and both validate it here.

    Examples
    --------
    >>> check_batch(4)
    4
    """
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ConfigError(f'"batch" must be an integer >= 1, got {batch!r}; '
                          f'use batch=1 or more (--batch 1 on the command line)')
    if batch > MAX_BATCH:
        raise ConfigError(f'"batch" {batch} is over the limit {MAX_BATCH} '
                          "(npuweave.workload.layer.MAX_BATCH; raise it there if you mean it)")
    return batch


class LayerKind(str, Enum):
    CONV = "conv"
    GEMM = "gemm"            # fully connected / MatMul with a constant operand
    MATMUL = "matmul"        # activation x activation (attention); no weights
    RECURRENT = "recurrent"  # LSTM / GRU / RNN over a sequence
    EMBEDDING = "embedding"  # table lookup (Gather on a constant table)
    VECTOR = "vector"        # standalone pooling / elementwise / normalization

    def __str__(self) -> str:  # rich tables and CSVs print the plain value
        return self.value


@dataclass(frozen=True, slots=True)
class Geometry:
    """Spatial shape of a conv or pooling layer, for layer-group slicing (NCHW, per sample).

    ``pads`` are (top, left, bottom, right), as ONNX orders them (h_begin, w_begin, h_end, w_end).
    """

    in_chw: tuple[int, int, int]
    out_chw: tuple[int, int, int]
    kernel: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1


@dataclass(frozen=True, slots=True)
class Layer:
    """One schedulable layer (see the module docstring for the GEMM convention).

    Attributes
    ----------
    name : unique within the model (the main op's name).
    kind : what the PE array does with it.
    ops : op types lowered into this layer, main op first (e.g. ``("Conv", "Relu")``).
    gemm : ``(count, m, k, n)`` per sample, or None for vector/embedding layers.
    macs : multiply-accumulates per sample.
    vector_ops : elementwise operations per sample (fused activations, pooling, norms...).
    weight_elems : parameters held in DRAM (biases included); 0 for attention/vector layers.
    gather_elems : table elements read per sample (embedding layers only).
    in_elems : input activation elements per sample (all runtime inputs, summed).
    out_elems : output activation elements per sample.
    inputs : names of the layers whose outputs this layer reads (``""`` = a graph input).
    geometry : spatial shape for convs and pooling, else None.
    splittable_h : False when the layer needs its whole input height at once (global
        pooling, attention, FC), which ends a layer group in the compiler.
    """

    name: str
    kind: LayerKind
    ops: tuple[str, ...]
    gemm: tuple[int, int, int, int] | None
    macs: int
    vector_ops: int
    weight_elems: int
    in_elems: int
    out_elems: int
    gather_elems: int = 0
    inputs: tuple[str, ...] = ()
    geometry: Geometry | None = None
    splittable_h: bool = True
    attrs: tuple[tuple[str, object], ...] = field(default=())

    @property
    def has_weights(self) -> bool:
        return self.weight_elems > 0


def toy_fc() -> Layer:
    """The fully connected layer of the cost models' examples: 256 inputs to 10 outputs per
    sample, one (1 x 256) @ (256 x 10) GEMM of 2560 MACs, 2570 weights (biases included), no
    vector work.

    Examples
    --------
    >>> fc = toy_fc()
    >>> fc.gemm, fc.macs, fc.weight_elems, fc.vector_ops
    ((1, 1, 256, 10), 2560, 2570, 0)
    """
    return Layer("fc", LayerKind.GEMM, ("Gemm",), (1, 1, 256, 10), 2560, 0, 2570, 256, 10)
