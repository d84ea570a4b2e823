"""``maestro``: MAESTRO's runtime for its NVDLA-like weight-stationary dataflow (``kcp_ws``).

MAESTRO (maestro-project/maestro) analyses a dataflow written as directives over the seven
convolution dimensions N, K, C, R, S, Y, X (Y, X are the *input* rows and columns, without
padding; the output is ``(Y - R) // stride + 1``). Its ``kcp_ws`` mapping puts output channels
K one per cluster, a ``P``-wide tile of input channels C one per PE inside a cluster, and slides
an ``R x S`` window over Y and X one output position at a time. A missing N directive is
unrolled whole (``TemporalMap(N, N)``), so every PE works through all N samples per step.

We use ``P = npu.pe_rows`` (cluster size). An NPU of several arrays (NNP-I's 12 ICEs) is costed
per engine (``engine_slices``): the layer's output channels are dealt to the ``arrays * cores``
independent arrays in near-equal slices, each slice is one MAESTRO run on one array of
``P * clusters = rows * cols`` PEs, and the layer takes as long as its slowest engine.
``maestro-pooled`` instead pools every array into one MAESTRO array of ``rows * cols * arrays *
cores`` PEs (the former reading; docs/REPRODUCTION.md, "AI-MT, NCF and NNP-I"). With the NoC bandwidth unconstrained, MAESTRO's cost engine gives (derivation in
``docs/COST_MODEL.md``; checked cycle-exact by ``benchmarks/maestro_crosscheck.py``):

* a PE step computes ``N * R * S`` partial sums, one per cycle (one SIMD lane);
* the inner cluster runs one step, which is its first ("all init") step: compute plus one
  NoC transfer of one cycle (one hop, one cycle per hop, one send): ``N*R*S + 1``;
* the outer level iterates ``ceil(K / clusters) * ceil(C / P) * Yo * Xo`` steps; a steady step
  costs ``max(ingress, inner, egress) = N*R*S + 1``, the first adds its ingress transfer: ``+ 1``.

So ``cycles = ceil(K / clusters) * ceil(C / P) * Yo * Xo * (N*R*S + 1) + 1``. Depthwise layers use
MAESTRO's own MobileNetV2 ``DSCONV`` mapping (C spatial across all PEs, one level):
``cycles = ceil(C / PEs) * Yo * Xo * N*R*S + 1``.

With ``npu.maestro_noc_bw = B`` elements per cycle (MAESTRO's ``noc_bw_cstr``), a transfer of
``t`` elements takes ``ceil(t / B)`` cycles and each step's ingress and egress come from
MAESTRO's reuse analysis per iteration case (``_noc_cycles``; closed form, same document).

Layers map onto those dimensions as MAESTRO's own model files do: a conv keeps its geometry
(Y, X are the padded input extents that give our output size), batch goes into N; an FC/GEMM
layer is K = out, C = in, R = S = Y = X = 1 with its rows (sequence positions) times the batch
in N, as MAESTRO's Transformer mapping puts ``Seq_Len`` in N. Independent products (conv groups,
attention heads times batch, recurrent time steps) are separate MAESTRO layer runs back to back.
Vector work is not modelled by MAESTRO; it runs on the vector unit after the array, as in
``systolic-ws``. DRAM traffic is the shared model of ``npuweave.cost.traffic``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import isqrt

from npuweave.cost.systolic import serial_cost
from npuweave.cost.traffic import cdiv
from npuweave.cost.types import LayerCost
from npuweave.hardware.npu import NPU
from npuweave.workload.layer import Layer, LayerKind


@dataclass(frozen=True, slots=True)
class MaestroDims:
    """One MAESTRO layer run: the seven dimensions (Y, X = input extents) and the stride.

    ``depthwise`` selects MAESTRO's ``DSCONV`` mapping; ``runs`` is how many identical runs
    execute back to back (conv groups, heads x batch, time steps).
    """

    n: int
    k: int
    c: int
    r: int = 1
    s: int = 1
    y: int = 1
    x: int = 1
    stride: tuple[int, int] = (1, 1)
    depthwise: bool = False
    runs: int = 1

    @property
    def out_yx(self) -> tuple[int, int]:
        """Output rows and columns: ``(Y - R) // stride + 1`` (MAESTRO's valid convolution)."""
        return ((self.y - self.r) // self.stride[0] + 1, (self.x - self.s) // self.stride[1] + 1)


def kcp_ws_cycles(d: MaestroDims, cluster: int, pes: int, noc_bw: int = 0) -> int:
    """MAESTRO "Runtime (Cycles)" of one ``kcp_ws`` run (``DSCONV`` when ``d.depthwise``).

    ``noc_bw`` is MAESTRO's NoC bandwidth in elements per cycle; 0 leaves it unconstrained.

    Examples
    --------
    >>> kcp_ws_cycles(MaestroDims(n=1, k=8, c=16, r=3, s=3, y=10, x=10), cluster=4, pes=16)
    5121
    >>> kcp_ws_cycles(MaestroDims(n=1, k=8, c=16, r=3, s=3, y=10, x=10), 4, 16, noc_bw=1)
    42309
    """
    if noc_bw > 0:
        return _noc_cycles(d, cluster, pes, noc_bw)
    yo, xo = d.out_yx
    step = d.n * d.r * d.s
    if d.depthwise:
        return cdiv(d.c, pes) * yo * xo * step + 1
    return cdiv(d.k, pes // cluster) * cdiv(d.c, cluster) * yo * xo * (step + 1) + 1


def _noc_cycles(d: MaestroDims, cluster: int, pes: int, bw: int) -> int:
    """Runtime with a NoC of ``bw`` elements per cycle (derivation in docs/COST_MODEL.md).

    The spatially mapped dimension (K over clusters; C over PEs for ``DSCONV``) runs in
    ``outer`` iterations of ``width`` units, the last one with ``units - (outer-1) * width``.
    """
    width, units = (pes, d.c) if d.depthwise else (pes // cluster, d.k)
    outer = cdiv(units, width)
    if outer == 1:
        body, first, _ = _iteration(d, cluster, units, bw, only_partial=units < width)
        return body + first
    body, first, later = _iteration(d, cluster, width, bw)
    last_body, _, last_later = _iteration(d, cluster, units - (outer - 1) * width, bw)
    return body + first + (outer - 2) * (body + later) + last_body + last_later


def _iteration(d: MaestroDims, cluster: int, active: int, bw: int,
               only_partial: bool = False) -> tuple[int, int, int]:
    """One iteration of the spatial dimension with ``active`` clusters (or PEs).

    Returns the cycles of its steps after the first, and of its first step when it is the
    layer's first (``compute + ingress``) or a later one (``max(ingress, compute, egress)``,
    double buffering, like every other step). Ingress per step: a new input column when X
    slides, a new row when Y slides with a single X position, the whole window when Y advances
    and X resets, the window plus the new weights when C advances, the weights alone when the
    spatial dimension advances. Egress: N outputs per active cluster, N * (active - 1) when
    one partial iteration is all there is (MAESTRO's edge accounting).
    """
    # a transfer of t elements: MAESTRO's GetOutStandingDelay with one hop of one cycle,
    # ceil(t / bw), which is 0 for t = 0; written -(-t // bw) inline (hot path)
    yo, xo = d.out_yx
    n, rs = d.n, d.r * d.s
    if d.depthwise:
        c_steps, lanes, compute, weights = 1, active, n * rs, active * rs
    else:
        c_steps = cdiv(d.c, cluster)
        lanes = d.c if c_steps == 1 else cluster  # MAESTRO keeps a full tile at a C edge
        compute = n * rs - (-lanes * rs * (n + 1) // bw)  # the cluster's own init step
        weights = lanes * active * rs
    floor = max(compute, -(-n * (max(1, active - 1) if only_partial else active) // bw))
    window = n * lanes * rs
    slide_x = n * lanes * d.r * min(d.stride[1], d.s)
    step_y = n * lanes * min(d.stride[0], d.r) * d.s if xo == 1 else window
    body = (c_steps * yo * (xo - 1) * max(-(-slide_x // bw), floor)
            + c_steps * (yo - 1) * max(-(-step_y // bw), floor)
            + (c_steps - 1) * max(-(-(window + weights) // bw), floor))
    later = max(-(-(window + weights if d.depthwise else weights) // bw), floor)
    return body, compute - (-(window + weights) // bw), later


def _conv_dims(layer: Layer, batch: int) -> MaestroDims | None:
    """The conv's own MAESTRO dimensions.

    A pool fused after the conv composes the layer's ``geometry`` (larger window, output after
    the pool), so the conv's own window and output come from the GEMM instead: ``R * S =
    k / (C / groups)`` and ``Yo * Xo = m``, square when the geometry's input is square. The
    runtime depends only on those products, K and C; the stride is ``round(H / Yo)``.
    """
    geo = layer.geometry
    if geo is None or layer.gemm is None:
        return None
    count, m, k, n = layer.gemm
    (kh, kw), (sh, sw) = geo.kernel, geo.stride
    _, oh, ow = geo.out_chw
    c = geo.in_chw[0] // geo.groups
    if oh * ow != m or kh * kw * c != k:
        kh, kw = _square(k // c)
        oh, ow = _square(m) if geo.in_chw[1] == geo.in_chw[2] else (m, 1)
        sh, sw = max(1, round(geo.in_chw[1] / oh)), max(1, round(geo.in_chw[2] / ow))
    y, x = (oh - 1) * sh + kh, (ow - 1) * sw + kw
    if count > 1 and k == kh * kw and geo.groups == geo.in_chw[0]:
        return MaestroDims(batch, 1, count, kh, kw, y, x, (sh, sw), depthwise=True, runs=n)
    return MaestroDims(batch, n, c, kh, kw, y, x, (sh, sw), runs=count)


def _square(area: int) -> tuple[int, int]:
    """``(a, a)`` when ``area`` is a perfect square, else ``(area, 1)``."""
    side = isqrt(area)
    return (side, side) if side * side == area else (area, 1)


def maestro_dims(layer: Layer, batch: int) -> MaestroDims | None:
    """The MAESTRO run(s) that stand for ``layer`` at ``batch`` (None: no PE-array work).

    Examples
    --------
    >>> from npuweave.workload.layer import Layer, LayerKind
    >>> fc = Layer("fc", LayerKind.GEMM, ("Gemm",), (1, 128, 768, 3072), 0, 0, 0, 0, 0)
    >>> maestro_dims(fc, 2)
    MaestroDims(n=256, k=3072, c=768, r=1, s=1, y=1, x=1, stride=(1, 1), depthwise=False, runs=1)
    """
    if layer.gemm is None or 0 in layer.gemm:
        return None
    if layer.kind is LayerKind.CONV:
        dims = _conv_dims(layer, batch)
        if dims is not None:
            return dims
    count, m, k, n = layer.gemm
    if layer.kind is LayerKind.MATMUL:
        return MaestroDims(m, n, k, runs=count * batch)
    return MaestroDims(m * batch, n, k, runs=count)


def engine_slices(dims: MaestroDims, engines: int) -> list[MaestroDims]:
    """The MAESTRO runs of one layer on ``engines`` independent arrays, one per busy engine.

    The output channels (``K``; a depthwise layer's channels ``C``) are dealt in near-equal
    slices, the first ``K mod engines`` one channel more; an engine without a channel is idle
    and not listed. Every engine sees the whole input, so the slices' MACs and weights add up
    to the layer's.

    Examples
    --------
    >>> [d.k for d in engine_slices(MaestroDims(n=1, k=26, c=8), 12)]
    [3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
    >>> len(engine_slices(MaestroDims(n=1, k=10, c=8), 12))
    10
    """
    total = dims.c if dims.depthwise else dims.k
    q, r = divmod(total, engines)
    shares = [q + (1 if e < r else 0) for e in range(min(engines, total))]
    if dims.depthwise:
        return [replace(dims, c=share) for share in shares]
    return [replace(dims, k=share) for share in shares]


def engine_cycles(layer: Layer, npu: NPU, batch: int = 1) -> list[int]:
    """PE-array cycles of ``layer`` on each busy engine of ``npu`` (MAESTRO per engine)."""
    dims = maestro_dims(layer, batch)
    if dims is None:
        return []
    per = npu.pe_rows * npu.pe_cols
    return [dims.runs * kcp_ws_cycles(d, npu.pe_rows, per, npu.maestro_noc_bw)
            for d in engine_slices(dims, npu.arrays * npu.cores)]


def maestro_gemm_cycles(layer: Layer, npu: NPU, batch: int = 1, pooled: bool = False) -> int:
    """PE-array cycles of ``layer`` under MAESTRO ``kcp_ws`` (0 for layers without a GEMM):
    its slowest engine's (``engine_cycles``), or with ``pooled`` one run on all PEs at once.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> maestro_gemm_cycles(fc, preset("prema"))  # 1 K step x 2 C steps x (1 + 1), plus 1
    5
    """
    dims = maestro_dims(layer, batch)
    if dims is None:
        return 0
    if pooled or npu.arrays * npu.cores == 1:
        pes = npu.pe_rows * npu.pe_cols * npu.arrays * npu.cores
        return dims.runs * kcp_ws_cycles(dims, npu.pe_rows, pes, npu.maestro_noc_bw)
    return max(engine_cycles(layer, npu, batch))


def maestro(layer: Layer, npu: NPU, batch: int, weight_bits: int) -> LayerCost:
    """Cost of ``layer`` with MAESTRO ``kcp_ws`` array cycles (per engine) plus vector-unit
    cycles.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> round(maestro(fc, preset("prema"), 1, 16).compute_s * 1e9, 2)  # 5 cycles at 700 MHz
    7.14
    """
    return serial_cost(layer, npu, batch, weight_bits, maestro_gemm_cycles(layer, npu, batch))


def maestro_pooled(layer: Layer, npu: NPU, batch: int, weight_bits: int) -> LayerCost:
    """``maestro`` with every array pooled into one MAESTRO array (the former reading)."""
    return serial_cost(layer, npu, batch, weight_bits,
                       maestro_gemm_cycles(layer, npu, batch, pooled=True))
