"""``maestro`` cost model: hand-worked cycles, MAESTRO's own numbers, and zoo invariants."""

from __future__ import annotations

import pytest
from cost_helpers import gemm, npu

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
