"""MobileNetV1 and MobileNetV2 (width multiplier 1.0, 224x224, 1000 classes).

Assumptions
-----------
* Padding is symmetric ``k // 2`` (PyTorch style); TensorFlow's asymmetric 'SAME' padding
  gives the same output sizes at 224x224, so MACs are unchanged.
* Every convolution is bias-free + BatchNorm. MobileNetV1 uses ReLU as in its paper
  (Howard et al., 2017); MobileNetV2 uses ReLU6 (``Clip(0, 6)``) after the expansion and the
  depthwise convolutions and no activation after the projection (linear bottleneck).
* MobileNetV1: 3x3/2 stem with 32 channels, 13 depthwise-separable blocks, global average
  pooling, FC 1024 -> 1000 (~0.57 GMACs, ~4.2 M parameters).
* MobileNetV2 (Sandler et al., 2018): stem 3x3/2 with 32 channels, the seven bottleneck
  stages (t, c, n, s) of the paper's Table 2, a 1x1 conv to 1280, global average pooling,
  FC 1280 -> 1000 (~0.30 GMACs, ~3.5 M parameters). Blocks with expansion 1 have no expansion
  conv; a residual ``Add`` joins blocks with stride 1 and equal in/out channels.
* Dropout before the classifier is an identity at inference and is omitted.
"""

from __future__ import annotations

from npuweave.workload.graph import Graph
from npuweave.workload.zoo.builder import GraphBuilder

#: MobileNetV1 depthwise-separable blocks: (pointwise output channels, depthwise stride).
V1_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
             (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))

#: MobileNetV2 bottleneck stages: (expansion t, output channels c, repeats n, stride s).
V2_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
             (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def _cba(b: GraphBuilder, x: str, cout: int, k: int, stride: int = 1, groups: int = 1,
         act: str | None = "relu") -> str:
    y = b.bn(b.conv(x, cout, k, stride, groups=groups))
    if act == "relu":
        return b.relu(y)
    if act == "relu6":
        return b.relu6(y)
    return y


def mobilenetv1() -> Graph:
    """MobileNetV1 1.0-224 (~0.57 GMACs, ~4.2 M parameters)."""
    b = GraphBuilder("mobilenetv1")
    x = b.input("image", (1, 3, 224, 224))
    x = _cba(b, x, 32, 3, 2)
    for i, (cout, stride) in enumerate(V1_BLOCKS):
        with b.scope(f"block{i + 1}"):
            cin = b.shape(x)[1]
            x = _cba(b, x, cin, 3, stride, groups=cin)
            x = _cba(b, x, cout, 1)
    x = b.flatten(b.gap(x))
    return b.finish([b.gemm(x, 1000, name="fc")])


def _inverted_residual(b: GraphBuilder, x: str, t: int, cout: int, stride: int) -> str:
    cin = b.shape(x)[1]
    hidden = cin * t
    y = _cba(b, x, hidden, 1, act="relu6") if t != 1 else x
    y = _cba(b, y, hidden, 3, stride, groups=hidden, act="relu6")
    y = _cba(b, y, cout, 1, act=None)
    return b.add(y, x) if stride == 1 and cin == cout else y


def mobilenetv2() -> Graph:
    """MobileNetV2 1.0-224 (~0.30 GMACs, ~3.5 M parameters)."""
    b = GraphBuilder("mobilenetv2")
    x = b.input("image", (1, 3, 224, 224))
    x = _cba(b, x, 32, 3, 2, act="relu6")
    block = 0
    for t, cout, n, s in V2_STAGES:
        for i in range(n):
            block += 1
            with b.scope(f"block{block}"):
                x = _inverted_residual(b, x, t, cout, s if i == 0 else 1)
    x = _cba(b, x, 1280, 1, act="relu6")
    x = b.flatten(b.gap(x))
    return b.finish([b.gemm(x, 1000, name="fc")])
