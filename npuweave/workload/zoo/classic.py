"""AlexNet and VGG-16: the large-FC classics (1000 ImageNet classes).

Assumptions
-----------
AlexNet (Krizhevsky et al., 2012), in the single-tower form of Caffe's ``bvlc_alexnet``
(the form the ONNX model zoo ships):

* Input 3x227x227 (the paper says 224, but 227 is what makes 11x11/4 give 55x55).
* conv1 96 11x11/4; conv2 256 5x5 pad 2; conv3 384 3x3; conv4 384 3x3; conv5 256 3x3, all
  with bias + ReLU. conv2, conv4 and conv5 are **grouped (2 groups)**: the paper's two-GPU
  split, which halves their MACs and weights.
* LRN (size 5, alpha 1e-4, beta 0.75) after conv1 and conv2, each followed by 3x3/2 max pooling;
  3x3/2 max pooling after conv5 (13 -> 6).
* FC 9216 -> 4096 -> 4096 -> 1000 with ReLU; dropout omitted (identity at inference).
* ~0.72 GMACs and ~61.0 M parameters.

VGG-16 (Simonyan and Zisserman, 2014, configuration D):

* Input 3x224x224; thirteen 3x3 convolutions (pad 1, bias, ReLU) in five stages of
  64, 128, 256, 512, 512 channels, each stage ending in 2x2/2 max pooling.
* FC 25088 -> 4096 -> 4096 -> 1000; dropout omitted.
* ~15.5 GMACs and ~138.4 M parameters.
"""

from __future__ import annotations

from npuweave.workload.graph import Graph
from npuweave.workload.zoo.builder import GraphBuilder

#: VGG-16 (configuration D): convolutions per stage and their channels.
VGG16_STAGES = ((2, 64), (2, 128), (3, 256), (3, 512), (3, 512))


def _classifier(b: GraphBuilder, x: str, hidden: int) -> str:
    x = b.flatten(x)
    x = b.relu(b.gemm(x, hidden, name="fc6"))
    x = b.relu(b.gemm(x, hidden, name="fc7"))
    return b.gemm(x, 1000, name="fc8")


def alexnet() -> Graph:
    """AlexNet with grouped conv2/4/5 and LRN, 227x227 input (~0.72 GMACs, ~61 M params)."""
    b = GraphBuilder("alexnet")
    x = b.input("image", (1, 3, 227, 227))
    x = b.relu(b.conv(x, 96, 11, 4, pad=0, bias=True, name="conv1"))
    x = b.maxpool(b.lrn(x), 3, 2)
    x = b.relu(b.conv(x, 256, 5, groups=2, bias=True, name="conv2"))
    x = b.maxpool(b.lrn(x), 3, 2)
    x = b.relu(b.conv(x, 384, 3, bias=True, name="conv3"))
    x = b.relu(b.conv(x, 384, 3, groups=2, bias=True, name="conv4"))
    x = b.relu(b.conv(x, 256, 3, groups=2, bias=True, name="conv5"))
    x = b.maxpool(x, 3, 2)
    return b.finish([_classifier(b, x, 4096)])


def vgg16() -> Graph:
    """VGG-16 (configuration D), 224x224 input (~15.5 GMACs, ~138 M params)."""
    b = GraphBuilder("vgg16")
    x = b.input("image", (1, 3, 224, 224))
    for stage, (convs, cout) in enumerate(VGG16_STAGES):
        for i in range(convs):
            x = b.relu(b.conv(x, cout, 3, bias=True, name=f"conv{stage + 1}_{i + 1}"))
        x = b.maxpool(x, 2, 2)
    return b.finish([_classifier(b, x, 4096)])
