"""``maestro`` cost model: hand-worked cycles, MAESTRO's own numbers, and zoo invariants."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cost_helpers import gemm, npu
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.cost import layer_cost, profile
from npuweave.cost.maestro import MaestroDims, kcp_ws_cycles, maestro_dims, maestro_gemm_cycles
from npuweave.hardware import preset
from npuweave.workload import load_layers
from npuweave.workload.layer import Geometry, Layer, LayerKind


def _conv(cin: int, cout: int, hw: int, kernel: int, stride: int, groups: int = 1) -> Layer:
    pad = kernel // 2
    out = (hw + 2 * pad - kernel) // stride + 1
    k, n = (cin // groups) * kernel * kernel, cout // groups
    geo = Geometry((cin, hw, hw), (cout, out, out), (kernel, kernel), (stride, stride),
                   (pad, pad, pad, pad), (1, 1), groups)
    return Layer("c", LayerKind.CONV, ("Conv",), (groups, out * out, k, n),
                 groups * out * out * k * n, 0, cout * k, cin * hw * hw, cout * out * out,
                 geometry=geo)


def test_fc_by_hand() -> None:
    """FC 10 -> 6 on a 4x4 array: 4 clusters of P=4 PEs; K=6, C=10, N=1, R=S=1.

    K steps ceil(6/4) = 2, C steps ceil(10/4) = 3, one position: 6 steps of (N*R*S + 1) = 2
    cycles, plus the first step's ingress cycle: 6 * 2 + 1 = 13.
    """
    assert maestro_gemm_cycles(gemm(1, 10, 6), npu()) == 13


def test_fc_rows_go_to_n() -> None:
    """The same FC over 5 rows at batch 3: N = 15, so each step is 15 + 1: 6 * 16 + 1 = 97."""
    assert maestro_gemm_cycles(gemm(5, 10, 6), npu(), batch=3) == 97


def test_conv_by_hand() -> None:
    """3x3 conv, 16 -> 8 channels, 8x8 map, stride 1, same padding, on 16 PEs in 4 clusters.

    MAESTRO sees Y = X = 10 (padded input), output 8x8 = 64 positions; K steps 8/4 = 2, C steps
    16/4 = 4: 512 steps of 3*3 + 1 = 10 cycles, plus 1: 5121 (the number MAESTRO prints for the
    same layer, see the cross-check).
    """
    assert maestro_gemm_cycles(_conv(16, 8, 8, 3, 1), npu()) == 5121


def test_strided_conv_and_batch_by_hand() -> None:
    """3x3 stride 2 on 9x9 (pad 1): output 5x5; K=5 over 4 clusters: 2 steps, C=6: 2 steps.

    At batch 2 a step computes N*R*S = 18 partial sums: 2 * 2 * 25 * 19 + 1 = 1901.
    """
    assert maestro_gemm_cycles(_conv(6, 5, 9, 3, 2), npu(), batch=2) == 1901


def test_depthwise_by_hand() -> None:
    """Depthwise 3x3 over 20 channels, 8x8: C spread over all 16 PEs: 2 steps of C, 64
    positions, 9 cycles each, plus 1: 2 * 64 * 9 + 1 = 1153."""
    layer = _conv(20, 20, 8, 3, 1, groups=20)
    assert maestro_dims(layer, 1) == MaestroDims(1, 1, 20, 3, 3, 10, 10, (1, 1), True, 1)
    assert maestro_gemm_cycles(layer, npu()) == 1153


def test_attention_runs_per_head_and_sample() -> None:
    """Attention (2 heads, 4x8 @ 8x4) at batch 3: 6 runs of K=4, C=8, N=4 on 4x4:
    1 K step x 2 C steps x (4 + 1) + 1 = 11 cycles each, 66 in all."""
    layer = gemm(4, 8, 4, count=2, kind=LayerKind.MATMUL)
    assert maestro_gemm_cycles(layer, npu(), batch=3) == 66


def test_arrays_add_clusters() -> None:
    """Two 4x4 arrays: 32 PEs, cluster 4, 8 clusters; FC 10 -> 6 has one K step: 3 * 2 + 1."""
    assert maestro_gemm_cycles(gemm(1, 10, 6), npu(arrays=2)) == 7


def test_compute_seconds_and_traffic() -> None:
    """13 cycles at 1 GHz; weights 60 x 2 bytes, shared traffic model."""
    cost = layer_cost(gemm(1, 10, 6), npu(), model="maestro")
    assert cost.compute_s == pytest.approx(13e-9)
    assert cost.weight_bytes == 120
    assert cost.macs == 60


# From MAESTRO (maestro-project/maestro @ 4eb08d1, built from source by
# benchmarks/maestro_crosscheck.py): its "Runtime" for the kcp_ws mapping of each zoo layer,
# cluster = array rows, NoC and off-chip bandwidth unconstrained.
MAESTRO_GOLDEN = [
    ("mobilenetv2", "block2/conv_1", "memory-centric", 1, 28225),
    ("mobilenetv2", "block2/conv_1", "compute-centric", 16, 451585),
    ("resnet50", "conv1", "memory-centric", 1, 627201),
    ("resnet50", "conv1", "compute-centric", 16, 9847041),
    ("resnet50", "layer1.0/conv2", "memory-centric", 16, 454721),
    ("resnet50", "layer2.0/downsample", "memory-centric", 1, 12545),
    ("resnet50", "layer2.0/downsample", "compute-centric", 16, 53313),
    ("resnext50", "layer2.0/conv2", "memory-centric", 1, 7841),
    ("bert-base", "layer0/qkv", "memory-centric", 1, 13933),
    ("bert-base", "layer0/qkv", "memory-centric", 16, 221293),
    ("bert-base", "layer0/qkv", "compute-centric", 1, 4645),
    ("bert-base", "layer0/qkv", "compute-centric", 16, 73765),
    ("bert-base", "layer0/matmul", "compute-centric", 1, 130),
    ("alexnet", "conv1", "memory-centric", 1, 369051),
    ("alexnet", "fc6", "memory-centric", 16, 39169),
    ("alexnet", "fc6", "compute-centric", 1, 1729),
    ("lstm-sentiment", "lstm0", "memory-centric", 16, 6529),
    ("lstm-sentiment", "lstm0", "compute-centric", 1, 289),
]


@pytest.mark.parametrize("model, name, npu_name, batch, cycles", MAESTRO_GOLDEN)
def test_matches_maestro(model: str, name: str, npu_name: str, batch: int, cycles: int) -> None:
    layer = next(x for x in load_layers(model) if x.name == name)
    spec = preset(npu_name)
    dims = maestro_dims(layer, batch)
    assert dims is not None
    pes = spec.pe_rows * spec.pe_cols * spec.arrays
    assert kcp_ws_cycles(dims, spec.pe_rows, pes) == cycles


@pytest.mark.parametrize("model", ["resnet50", "mobilenetv2", "resnext50", "inceptionv3",
                                   "alexnet", "bert-base", "lstm-translation"])
def test_dims_preserve_macs(model: str) -> None:
    """Every MAESTRO run does exactly the layer's MACs: N*K*C*R*S*Yo*Xo*runs == macs * batch."""
    for layer in load_layers(model):
        dims = maestro_dims(layer, 4)
        if dims is None:
            continue
        yo, xo = dims.out_yx
        assert dims.n * dims.k * dims.c * dims.r * dims.s * yo * xo * dims.runs \
            == layer.macs * 4, layer.name


def test_never_faster_than_roofline() -> None:
    spec = preset("memory-centric")
    layers = load_layers("resnet50")
    ours = sum(profile(layers, spec, model="maestro"))
    bound = sum(profile(layers, spec, model="roofline"))
    assert ours.compute_s >= bound.compute_s


# --- constrained NoC (npu.maestro_noc_bw, elements per cycle) -------------------------------
# A transfer of t elements takes ceil(t / B) cycles (MAESTRO's GetOutStandingDelay, one hop of
# one cycle); a step costs max(ingress, compute, egress), the first step compute + ingress.


def test_noc_fc_by_hand() -> None:
    """FC 10 -> 6 on 4x4 (4 clusters of 4), N = 1, B = 2 elements/cycle.

    Cluster step: 1 MAC + ceil(4 PEs * (1 input + 1 weight) / 2) = 5 cycles. K in 2 iterations
    (4 then 2 clusters), C in 3 tiles of 4 (one X, one Y position).
    First K iteration: first step 5 + ceil((4 inputs + 16 weights) / 2) = 15, two C steps of
    max(ceil(20 / 2), 5, ceil(4 outputs / 2)) = 10: 35. Last: two C steps of
    max(ceil((4 + 8) / 2), 5, 1) = 6 and the K step max(ceil(8 / 2), 5, 1) = 5: 17. Total 52
    (MAESTRO prints 52 for this layer at noc_bw_cstr 2).
    """
    assert maestro_gemm_cycles(gemm(1, 10, 6), npu(maestro_noc_bw=2)) == 52


def test_noc_conv_by_hand() -> None:
    """The 3x3 conv 16 -> 8 on an 8x8 map of test_conv_by_hand, B = 8.

    Cluster step: 9 + ceil(4 * (9 + 9) / 8) = 18. Per K iteration (2, both 4 clusters): 4 C
    tiles x 8 rows x 7 X slides (12 new inputs: 2 cycles) and 4 x 7 Y moves (whole window, 36:
    5 cycles) cost 18 each: 4536; 3 C moves bring window + weights 36 + 144 = 180: 23 each.
    First step 18 + 23; the second K iteration's first step brings the weights (144: 18).
    2 * (4536 + 69) + 41 + 18 = 9269 (MAESTRO: 9269).
    """
    assert maestro_gemm_cycles(_conv(16, 8, 8, 3, 1), npu(maestro_noc_bw=8)) == 9269


def test_noc_depthwise_by_hand() -> None:
    """Depthwise 3x3 over 20 channels, 8x8, 16 PEs, B = 4: C in 16 then 4 lanes, 9 MACs a step.

    16 lanes: 56 X slides of 48 inputs (12 cycles), 7 Y moves of 144 (36); first step
    9 + ceil((144 + 144) / 4) = 81: 1005. 4 lanes: slides of 12 and moves of 36 are hidden by
    the 9 MACs: 63 * 9; the C move brings 36 + 36: 18. 1005 + 585 = 1590 (MAESTRO: 1590).
    """
    layer = _conv(20, 20, 8, 3, 1, groups=20)
    assert maestro_gemm_cycles(layer, npu(maestro_noc_bw=4)) == 1590


def test_noc_egress_bound_and_partial_iteration() -> None:
    """1x1 conv as MAESTRO dims, N = 4, one input channel, 16 clusters of 1 PE, B = 1.

    Cluster step 4 + ceil(1 * 1 * 5 / 1) = 9. K = 16 (all clusters): first step 9 + 4 + 16,
    then one Y move limited by egress (4 outputs x 16 clusters = 64): 93. K = 15, a single
    partial iteration: MAESTRO counts N * (15 - 1) = 56 outputs: 9 + 19 + 56 = 84.
    """
    full = MaestroDims(n=4, k=16, c=1, y=2)
    part = MaestroDims(n=4, k=15, c=1, y=2)
    assert (kcp_ws_cycles(full, 1, 16, 1), kcp_ws_cycles(part, 1, 16, 1)) == (93, 84)


def test_noc_unconstrained_is_the_default_and_the_limit() -> None:
    """0 (the default) is MAESTRO with a NoC wider than any step; a huge B gives the same."""
    layer = _conv(16, 8, 8, 3, 1)
    assert npu().maestro_noc_bw == 0
    wide = maestro_gemm_cycles(layer, npu(maestro_noc_bw=1 << 30))
    assert maestro_gemm_cycles(layer, npu()) == wide == 5121


def test_noc_narrower_is_never_faster() -> None:
    layer = next(x for x in load_layers("resnet50") if x.name == "layer1.0/conv2")
    base = preset("memory-centric")
    cycles = [maestro_gemm_cycles(layer, replace(base, maestro_noc_bw=bw))
              for bw in (1, 4, 16, 64, 256, 0)]
    assert cycles == sorted(cycles, reverse=True) and cycles[0] > cycles[-1]


# From MAESTRO (maestro-project/maestro @ 4eb08d1, built from source by
# benchmarks/maestro_crosscheck.py --noc-bw 1,4,16,64,256,1024,4096,16384): "Runtime" of the
# kcp_ws (or DSCONV) mapping with noc_bw_cstr = the bandwidth below, off-chip unconstrained.
MAESTRO_NOC_GOLDEN = [
    ("mobilenetv2", "block15/conv_2", "compute-centric", 16, 1, 2001744),
    ("mobilenetv1", "block13/conv", "memory-centric", 16, 1, 3105936),
    ("bert-base", "layer0/attn_out", "memory-centric", 1, 1, 1115648),
    ("lstm-translation", "decoder/attention/matmul", "compute-centric", 16, 1, 26900),
    ("lstm-speech", "speller/lstm0", "compute-centric", 1, 1, 1575169),
    ("googlenet", "inception_3b/conv_3", "memory-centric", 16, 4, 880592),
    ("mobilenetv2", "block3/conv_1", "memory-centric", 1, 4, 351117),
    ("alexnet", "fc6", "memory-centric", 16, 4, 10601520),
    ("bert-base", "layer0/matmul", "memory-centric", 1, 4, 6288),
    ("resnet50", "layer1.0/conv3", "memory-centric", 16, 16, 803732),
    ("mobilenetv1", "block13/conv", "compute-centric", 1, 16, 12681),
    ("bert-base", "pooler/dense", "memory-centric", 16, 16, 40984),
    ("lstm-speech", "listener/pblstm1", "compute-centric", 1, 16, 82085),
    ("googlenet", "inception_4d/conv_1", "memory-centric", 16, 64, 79444),
    ("mobilenetv1", "block13/conv", "compute-centric", 1, 64, 3177),
    ("ncf", "mlp2", "memory-centric", 1, 64, 135),
    ("lstm-speech", "speller/attention/matmul", "memory-centric", 16, 64, 1218),
    ("inceptionv3", "Mixed_7b/conv_8", "compute-centric", 1, 256, 3502),
    ("mobilenetv2", "block12/conv_1", "memory-centric", 16, 256, 30909),
    ("alexnet", "fc7", "memory-centric", 16, 256, 73505),
    ("bert-large", "layer0/matmul", "memory-centric", 16, 256, 225),
    ("lstm-speech", "listener/pblstm2", "memory-centric", 16, 256, 5729),
    # wide NoCs, where only some steps are NoC-bound (unconstrained in the comment)
    ("googlenet", "inception_4a/conv_3", "memory-centric", 16, 1024, 14900),  # 13329
    ("mobilenetv2", "block14/conv_1", "compute-centric", 16, 1024, 7143),  # 7057
    ("mobilenetv1", "block6/conv_1", "memory-centric", 16, 4096, 26661),  # 26657
    ("resnet34", "fc", "compute-centric", 1, 4096, 138),  # 33
    ("mobilenetv1", "block5/conv_1", "memory-centric", 1, 16384, 6274),  # 6273
    ("inceptionv3", "Mixed_6b/conv", "memory-centric", 16, 16384, 58958),  # 58957
]


@pytest.mark.parametrize("model, name, npu_name, batch, bw, cycles", MAESTRO_NOC_GOLDEN)
def test_matches_maestro_with_noc_bw(model: str, name: str, npu_name: str, batch: int, bw: int,
                                     cycles: int) -> None:
    layer = next(x for x in load_layers(model) if x.name == name)
    spec = preset(npu_name)
    dims = maestro_dims(layer, batch)
    assert dims is not None
    pes = spec.pe_rows * spec.pe_cols * spec.arrays
    assert kcp_ws_cycles(dims, spec.pe_rows, pes, bw) == cycles


@given(n=st.integers(1, 4), k=st.integers(1, 40), c=st.integers(1, 40), r=st.sampled_from([1, 3]),
       yo=st.integers(1, 4), xo=st.integers(1, 4), stride=st.sampled_from([1, 2]),
       depthwise=st.booleans(), shape=st.sampled_from([(2, 8), (4, 16), (3, 12)]),
       bw=st.integers(1, 300))
@settings(max_examples=200, deadline=None)
def test_noc_monotone_and_unconstrained_in_the_limit(n: int, k: int, c: int, r: int, yo: int,
                                                      xo: int, stride: int, depthwise: bool,
                                                      shape: tuple[int, int], bw: int) -> None:
    """A wider NoC is never slower, and one wider than any transfer is the unconstrained model."""
    d = MaestroDims(n, 1 if depthwise else k, c, r, r, (yo - 1) * stride + r,
                    (xo - 1) * stride + r, (stride, stride), depthwise)
    cluster, pes = shape
    narrow, wide = kcp_ws_cycles(d, cluster, pes, bw), kcp_ws_cycles(d, cluster, pes, bw + 1)
    assert narrow >= wide >= kcp_ws_cycles(d, cluster, pes, 1 << 40) == kcp_ws_cycles(
        d, cluster, pes)
