"""ViT-base/16 (Dosovitskiy et al., ICLR 2021) at 224x224, for one image.

Shapes as published (the paper's Table 1, "ViT-Base": 12 layers, hidden 768, MLP 3072,
12 heads, 86 M parameters; patches of 16x16):

* Patch embedding: a 16x16 convolution of stride 16, 3 -> 768 channels, with bias, gives
  14 x 14 = 196 patches; a learned class token is prepended (197 tokens) and a learned
  position embedding of shape (197, 768) is added.
* Each encoder layer is pre-norm: ``x + MSA(LN(x))`` then ``x + MLP(LN(x))``; the MLP is
  768 -> 3072 -> 768 with GELU. Q, K and V are one fused (768, 2304) projection, as in the
  zoo's BERT; LayerNorm epsilon 1e-6.
* A final LayerNorm, then the class token goes through the ImageNet-1k head (768 -> 1000).
  Dropout is omitted (inference).
"""

from __future__ import annotations

import math

from npuweave.workload.graph import Graph
from npuweave.workload.zoo.bert import _merge_heads, _split_heads
from npuweave.workload.zoo.builder import GraphBuilder

HIDDEN, LAYERS, HEADS, MLP, PATCH, IMAGE, CLASSES = 768, 12, 12, 3072, 16, 224, 1000


def _layer(b: GraphBuilder, x: str) -> str:
    h = b.layernorm(x, eps=1e-6, name="ln1")
    q, k, v = b.split(b.linear(h, 3 * HIDDEN, name="qkv"), (HIDDEN,) * 3, axis=-1)
    q, v = _split_heads(b, q, HEADS), _split_heads(b, v, HEADS)
    k = _split_heads(b, k, HEADS, keys=True)
    p = b.softmax(b.scale(b.matmul(q, k), 1.0 / math.sqrt(HIDDEN // HEADS)))
    x = b.add(b.linear(_merge_heads(b, b.matmul(p, v)), HIDDEN, name="attn_out"), x)
    h = b.layernorm(x, eps=1e-6, name="ln2")
    return b.add(b.linear(b.gelu(b.linear(h, MLP, name="ffn1")), HIDDEN, name="ffn2"), x)


def vit_base() -> Graph:
    """ViT-B/16 for one 224x224 image.

    Examples
    --------
    >>> g = vit_base()
    >>> g.tensors[g.outputs[0]].shape
    (1, 1000)
    """
    b = GraphBuilder("vit-base")
    img = b.input("image", (1, 3, IMAGE, IMAGE))
    patches = b.conv(img, HIDDEN, PATCH, stride=PATCH, pad=0, bias=True, name="patch_embed")
    n = (IMAGE // PATCH) ** 2
    tokens = b.transpose(b.reshape(patches, (1, HIDDEN, n)), (0, 2, 1))
    x = b.concat([b.weight("cls_token", (1, 1, HIDDEN)), tokens], axis=1)
    x = b.add(x, b.weight("pos_embed", (1, n + 1, HIDDEN)))
    for i in range(LAYERS):
        with b.scope(f"layer{i}"):
            x = _layer(b, x)
    x = b.layernorm(x, eps=1e-6, name="ln_final")
    return b.finish([b.gemm(b.take(x, 0, axis=1), CLASSES, name="head")])
