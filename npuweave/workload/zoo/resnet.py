"""ResNet-50 and ResNeXt-50 (32x4d) for 224x224 ImageNet classification.

Assumptions
-----------
* ResNet-50 is the "v1.5" variant used by the MLPerf reference and torchvision: the stride-2
  of a downsampling bottleneck sits on its 3x3 convolution, not on the first 1x1 (v1). This
  gives ~4.1 GMACs; v1 is ~3.9.
* Every convolution is bias-free and followed by inference ``BatchNormalization`` (four
  vectors per channel counted as parameters; torchvision's 25.56 M counts only scale and
  shift, so our count is larger by the running statistics, 2 values per BN channel).
* Projection shortcuts (1x1 conv + BN) only where the shape changes (first block of a stage).
* ResNeXt-50 32x4d: cardinality 32, bottleneck width 4 per group at the first stage, doubling
  per stage (128, 256, 512, 1024 channels in the grouped 3x3), outputs as ResNet-50.
* Head: global average pooling, flatten, fully connected 2048 -> 1000 with bias.
"""

from __future__ import annotations

from npuweave.workload.graph import Graph
from npuweave.workload.zoo.builder import GraphBuilder

#: (blocks, output channels) of the four stages of a 50-layer bottleneck network.
STAGES = ((3, 256), (4, 512), (6, 1024), (3, 2048))


def conv_bn(b: GraphBuilder, x: str, cout: int, k: int, stride: int = 1, groups: int = 1,
            relu: bool = True, name: str = "conv") -> str:
    """Conv (no bias) + BatchNorm (+ ReLU): the unit of every torchvision-style CNN."""
    y = b.bn(b.conv(x, cout, k, stride, groups=groups, name=name), name=f"{name}.bn")
    return b.relu(y) if relu else y


def bottleneck(b: GraphBuilder, x: str, width: int, cout: int, stride: int,
               groups: int) -> str:
    """1x1 reduce, 3x3 (strided, grouped), 1x1 expand, plus the identity or projection."""
    y = conv_bn(b, x, width, 1, name="conv1")
    y = conv_bn(b, y, width, 3, stride, groups=groups, name="conv2")
    y = conv_bn(b, y, cout, 1, relu=False, name="conv3")
    short = x
    if stride != 1 or b.shape(x)[1] != cout:
        short = conv_bn(b, x, cout, 1, stride, relu=False, name="downsample")
    return b.relu(b.add(y, short))


def _resnet(name: str, groups: int, width_per_group: int) -> Graph:
    b = GraphBuilder(name)
    x = b.input("image", (1, 3, 224, 224))
    x = conv_bn(b, x, 64, 7, 2, name="conv1")
    x = b.maxpool(x, 3, 2, pad=1)
    for stage, (blocks, cout) in enumerate(STAGES):
        # torchvision: width = planes * width_per_group / 64 * groups, planes = cout / 4
        width = cout // 4 * width_per_group // 64 * groups
        for i in range(blocks):
            with b.scope(f"layer{stage + 1}.{i}"):
                stride = 2 if (i == 0 and stage > 0) else 1
                x = bottleneck(b, x, width, cout, stride, groups)
    x = b.flatten(b.gap(x))
    return b.finish([b.gemm(x, 1000, name="fc")])


def basic_block(b: GraphBuilder, x: str, cout: int, stride: int) -> str:
    """Two 3x3 convolutions plus the identity or a 1x1 projection (ResNet-18/34)."""
    y = conv_bn(b, x, cout, 3, stride, name="conv1")
    y = conv_bn(b, y, cout, 3, relu=False, name="conv2")
    short = x
    if stride != 1 or b.shape(x)[1] != cout:
        short = conv_bn(b, x, cout, 1, stride, relu=False, name="downsample")
    return b.relu(b.add(y, short))


def resnet34() -> Graph:
    """ResNet-34, 224x224 input, 1000 classes (basic blocks 3-4-6-3; ~3.6 GMACs, ~21.8 M
    parameters): the network of the published Gemini scheduler IR files."""
    b = GraphBuilder("resnet34")
    x = b.input("image", (1, 3, 224, 224))
    x = conv_bn(b, x, 64, 7, 2, name="conv1")
    x = b.maxpool(x, 3, 2, pad=1)
    for stage, (blocks, cout) in enumerate(((3, 64), (4, 128), (6, 256), (3, 512))):
        for i in range(blocks):
            with b.scope(f"layer{stage + 1}.{i}"):
                x = basic_block(b, x, cout, 2 if (i == 0 and stage > 0) else 1)
    x = b.flatten(b.gap(x))
    return b.finish([b.gemm(x, 1000, name="fc")])


def resnet50() -> Graph:
    """ResNet-50 v1.5, 224x224 input, 1000 classes (~4.1 GMACs, ~25.6 M parameters)."""
    return _resnet("resnet50", groups=1, width_per_group=64)


def resnext50() -> Graph:
    """ResNeXt-50 32x4d, 224x224 input, 1000 classes (~4.3 GMACs, ~25.0 M parameters)."""
    return _resnet("resnext50", groups=32, width_per_group=4)
