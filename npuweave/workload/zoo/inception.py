"""InceptionV3 (299x299) and GoogLeNet / Inception v1 (224x224).

Assumptions
-----------
InceptionV3 (Szegedy et al., "Rethinking the Inception Architecture", 2015), in the layout
of the Keras and torchvision reference models:

* Input 3x299x299; stem without padding (299 -> 149 -> 147 -> 147 -> 73 -> 71 -> 35).
* Every convolution is bias-free + BatchNorm (epsilon 1e-3) + ReLU.
* Mixed 5b-5d (35x35), 6a (reduction), 6b-6e (17x17, factorized 1x7 / 7x1 with 128, 160,
  160, 192 channels), 7a (reduction), 7b-7c (8x8, expanded 1x3 / 3x1 branches).
* The auxiliary classifier is a training-time head and is **not** built (it adds ~3.3 M
  parameters and ~0.03 GMACs in torchvision's 27.2 M-parameter count). Without it the model
  has ~23.8 M parameters (plus BN running statistics) and ~5.7 GMACs.
* Pool branches use 3x3 average pooling, stride 1, pad 1, excluding padding from the mean.

GoogLeNet (Szegedy et al., "Going Deeper with Convolutions", 2014), as in the original
(Caffe ``bvlc_googlenet``) rather than torchvision's BatchNorm variant:

* Convolutions with bias + ReLU, no BatchNorm; LRN (size 5) after the first pooling and
  after the second 3x3 convolution; max pooling with ceil rounding (112 -> 56 -> 28 ...).
* The 5x5 branches really are 5x5 (torchvision uses 3x3 there).
* The two auxiliary classifiers are training-only and are not built; dropout is omitted.
* ~1.6 GMACs and ~7.0 M parameters.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from npuweave.workload.graph import Graph
from npuweave.workload.zoo.builder import GraphBuilder


def _cbr(b: GraphBuilder, x: str, cout: int, k: int | tuple[int, int], stride: int = 1,
         pad: int | tuple[int, int] | None = None) -> str:
    """InceptionV3's BasicConv2d: bias-free conv, BN (eps 1e-3), ReLU."""
    y = b.conv(x, cout, k, stride, pad)
    return b.relu(b.bn(y, eps=1e-3))


def _pool_branch(b: GraphBuilder, x: str, cout: int) -> str:
    return _cbr(b, b.avgpool(x, 3, 1, pad=1), cout, 1)


def _block_a(b: GraphBuilder, x: str, pool_features: int) -> str:
    b1 = _cbr(b, x, 64, 1)
    b5 = _cbr(b, _cbr(b, x, 48, 1), 64, 5)
    b3 = _cbr(b, _cbr(b, _cbr(b, x, 64, 1), 96, 3), 96, 3)
    return b.concat([b1, b5, b3, _pool_branch(b, x, pool_features)])


def _block_b(b: GraphBuilder, x: str) -> str:
    b3 = _cbr(b, x, 384, 3, 2, pad=0)
    bd = _cbr(b, _cbr(b, _cbr(b, x, 64, 1), 96, 3), 96, 3, 2, pad=0)
    return b.concat([b3, bd, b.maxpool(x, 3, 2)])


def _block_c(b: GraphBuilder, x: str, c7: int) -> str:
    b1 = _cbr(b, x, 192, 1)
    b7 = _cbr(b, _cbr(b, _cbr(b, x, c7, 1), c7, (1, 7)), 192, (7, 1))
    bd = _cbr(b, x, c7, 1)
    for cout, k in ((c7, (7, 1)), (c7, (1, 7)), (c7, (7, 1)), (192, (1, 7))):
        bd = _cbr(b, bd, cout, k)
    return b.concat([b1, b7, bd, _pool_branch(b, x, 192)])


def _block_d(b: GraphBuilder, x: str) -> str:
    b3 = _cbr(b, _cbr(b, x, 192, 1), 320, 3, 2, pad=0)
    b7 = _cbr(b, _cbr(b, _cbr(b, x, 192, 1), 192, (1, 7)), 192, (7, 1))
    b7 = _cbr(b, b7, 192, 3, 2, pad=0)
    return b.concat([b3, b7, b.maxpool(x, 3, 2)])


def _block_e(b: GraphBuilder, x: str) -> str:
    b1 = _cbr(b, x, 320, 1)
    b3 = _cbr(b, x, 384, 1)
    b3 = b.concat([_cbr(b, b3, 384, (1, 3)), _cbr(b, b3, 384, (3, 1))])
    bd = _cbr(b, _cbr(b, x, 448, 1), 384, 3)
    bd = b.concat([_cbr(b, bd, 384, (1, 3)), _cbr(b, bd, 384, (3, 1))])
    return b.concat([b1, b3, bd, _pool_branch(b, x, 192)])


def inceptionv3() -> Graph:
    """InceptionV3 without the auxiliary head, 299x299 input (~5.7 GMACs, ~23.8 M params)."""
    b = GraphBuilder("inceptionv3")
    x = b.input("image", (1, 3, 299, 299))
    x = _cbr(b, x, 32, 3, 2, pad=0)
    x = _cbr(b, x, 32, 3, pad=0)
    x = b.maxpool(_cbr(b, x, 64, 3), 3, 2)
    x = _cbr(b, _cbr(b, x, 80, 1), 192, 3, pad=0)
    x = b.maxpool(x, 3, 2)
    blocks: list[tuple[str, Callable[[str], str]]] = [
        ("Mixed_5b", lambda y: _block_a(b, y, 32)), ("Mixed_5c", lambda y: _block_a(b, y, 64)),
        ("Mixed_5d", lambda y: _block_a(b, y, 64)), ("Mixed_6a", lambda y: _block_b(b, y))]
    blocks += [(f"Mixed_6{s}", functools.partial(_block_c, b, c7=c))
               for s, c in zip("bcde", (128, 160, 160, 192), strict=True)]
    blocks += [("Mixed_7a", lambda y: _block_d(b, y)), ("Mixed_7b", lambda y: _block_e(b, y)),
               ("Mixed_7c", lambda y: _block_e(b, y))]
    for name, block in blocks:
        with b.scope(name):
            x = block(x)
    x = b.flatten(b.gap(x))
    return b.finish([b.gemm(x, 1000, name="fc")])


#: GoogLeNet inception modules: (name, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool proj).
GOOGLENET_MODULES = (
    ("3a", 64, 96, 128, 16, 32, 32), ("3b", 128, 128, 192, 32, 96, 64),
    ("4a", 192, 96, 208, 16, 48, 64), ("4b", 160, 112, 224, 24, 64, 64),
    ("4c", 128, 128, 256, 24, 64, 64), ("4d", 112, 144, 288, 32, 64, 64),
    ("4e", 256, 160, 320, 32, 128, 128), ("5a", 256, 160, 320, 32, 128, 128),
    ("5b", 384, 192, 384, 48, 128, 128),
)


def _cr(b: GraphBuilder, x: str, cout: int, k: int, stride: int = 1) -> str:
    return b.relu(b.conv(x, cout, k, stride, bias=True))


def _inception_v1(b: GraphBuilder, x: str, c1: int, r3: int, c3: int, r5: int, c5: int,
                  pp: int) -> str:
    branches = [_cr(b, x, c1, 1), _cr(b, _cr(b, x, r3, 1), c3, 3),
                _cr(b, _cr(b, x, r5, 1), c5, 5), _cr(b, b.maxpool(x, 3, 1, pad=1), pp, 1)]
    return b.concat(branches)


def googlenet() -> Graph:
    """GoogLeNet (Inception v1) without auxiliary heads, 224x224 (~1.6 GMACs, ~7.0 M params)."""
    b = GraphBuilder("googlenet")
    x = b.input("image", (1, 3, 224, 224))
    x = b.lrn(b.maxpool(_cr(b, x, 64, 7, 2), 3, 2, ceil=True))
    x = b.lrn(_cr(b, _cr(b, x, 64, 1), 192, 3))
    x = b.maxpool(x, 3, 2, ceil=True)
    for name, *chans in GOOGLENET_MODULES:
        with b.scope(f"inception_{name}"):
            x = _inception_v1(b, x, *chans)
        if name in ("3b", "4e"):
            x = b.maxpool(x, 3, 2, ceil=True)
    x = b.flatten(b.gap(x))
    return b.finish([b.gemm(x, 1000, name="fc")])
