"""Transformer encoders: BERT-base, BERT-large and XLNet, for one sequence of ``seq_len`` tokens.

Assumptions
-----------
Shared by all three:

* Default ``seq_len`` is 128: the maximum sequence length of BERT's sentence-classification
  fine-tuning recipe (GLUE), a common serving length for short NLP queries. MLPerf's SQuAD
  benchmark uses 384; pass ``seq_len=384`` for it. The limit is 512, the length the models
  were pre-trained with (BERT's position table has 512 rows).
* One unpadded sequence, so there is no attention mask; dropout is omitted.
* Linear layers are ``MatMul`` by a ``(in, out)`` weight then a bias ``Add``; GELU is the ONNX
  ``Gelu`` op (exact, erf form); LayerNorm is ``LayerNormalization`` (epsilon 1e-12).

BERT (Devlin et al., 2018), uncased WordPiece vocabulary of 30,522 tokens:

* base: 12 layers, hidden 768, 12 heads, FFN 3072 (~109.5 M parameters);
  large: 24 layers, hidden 1024, 16 heads, FFN 4096 (~335 M parameters).
* Embeddings are weights: word (30522 x H), position (512 x H) and token type (2 x H) tables,
  each read with a ``Gather``, summed, then LayerNorm. Their tables count as parameters,
  which is how the paper's 110 M / 340 M are counted. Position ids (0..seq_len-1) are a
  graph input supplied by the host, like token ids and token types, so the position table
  is an embedding lookup of its own rather than a constant folded at compile time.
* Q, K and V are one fused ``(H, 3H)`` projection split in three, as inference engines
  run them; this gives 6 weighted or attention layers per encoder layer.
* The pooler (``tanh`` FC on the first token) is built; no task head, no MLM head.

XLNet (Yang et al., 2019), SentencePiece vocabulary of 32,000, ``size`` ``"large"`` (default:
24 layers, hidden 1024, 16 heads, FFN 4096, ~360 M parameters) or ``"base"`` (12, 768, 12,
3072, ~117 M). Inference approximations of the two-stream relative attention:

* Only the content stream runs (the query stream serves pre-training only); no memory
  (``mems``) from a previous segment, so keys span ``seq_len`` and relative positions
  ``2*seq_len``.
* The sinusoidal relative position encodings are computed by the host and enter as the graph
  input ``pos_emb`` of shape ``(1, 2*seq_len, H)``; each layer projects them with its own
  ``W_r`` (bias-free, like ``W_q``, ``W_k``, ``W_v`` and ``W_o``).
* Position scores are the full ``seq_len x 2*seq_len`` product, then a ``Slice`` keeps
  ``seq_len`` columns: same MACs and sizes as XLNet's relative shift, not its exact indexing.
* Segment scores: ``(q + r_s_bias)`` times the learned segment embedding ``(heads, d_head,
  2)``; a ``Slice`` keeps the "same segment" column and broadcasts it over keys (one segment).
* Parameters per layer: W_q, W_k, W_v, W_o, W_r, r_w_bias, r_r_bias, r_s_bias, seg_embed,
  two LayerNorms and the FFN; the word embedding is the only embedding (XLNet has no
  absolute position table); the unused ``mask_emb`` (H values) is not built.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from npuweave.workload.graph import Graph
from npuweave.workload.zoo.builder import GraphBuilder


class EncoderSize(NamedTuple):
    layers: int
    hidden: int
    heads: int
    ffn: int


BERT_SIZES = {"base": EncoderSize(12, 768, 12, 3072), "large": EncoderSize(24, 1024, 16, 4096)}
XLNET_SIZES = BERT_SIZES
BERT_VOCAB, BERT_MAX_POS, BERT_TYPES = 30522, 512, 2
XLNET_VOCAB = 32000


def _split_heads(b: GraphBuilder, x: str, heads: int, keys: bool = False) -> str:
    """``[1, S, H]`` -> ``[1, heads, S, d]`` (or ``[1, heads, d, S]`` for keys)."""
    one, s, h = b.shape(x)
    x = b.reshape(x, (one, s, heads, h // heads))
    return b.transpose(x, (0, 2, 3, 1) if keys else (0, 2, 1, 3))


def _merge_heads(b: GraphBuilder, x: str) -> str:
    one, heads, s, d = b.shape(x)
    return b.reshape(b.transpose(x, (0, 2, 1, 3)), (one, s, heads * d))


def _ffn(b: GraphBuilder, x: str, ffn: int) -> str:
    """Position-wise FFN with GELU, residual and LayerNorm."""
    h = b.gelu(b.linear(x, ffn, name="ffn1"))
    return b.layernorm(b.add(b.linear(h, b.shape(x)[-1], name="ffn2"), x), name="ln2")


def _bert_layer(b: GraphBuilder, x: str, size: EncoderSize) -> str:
    d = size.hidden
    q, k, v = b.split(b.linear(x, 3 * d, name="qkv"), (d, d, d), axis=-1)
    q, v = _split_heads(b, q, size.heads), _split_heads(b, v, size.heads)
    k = _split_heads(b, k, size.heads, keys=True)
    p = b.softmax(b.scale(b.matmul(q, k), 1.0 / math.sqrt(d // size.heads)))
    ctx = _merge_heads(b, b.matmul(p, v))
    x = b.layernorm(b.add(b.linear(ctx, d, name="attn_out"), x), name="ln1")
    return _ffn(b, x, size.ffn)


def bert(size: str = "base", seq_len: int = 128) -> Graph:
    """BERT encoder with embeddings and pooler for one sequence of ``seq_len`` tokens.

    Examples
    --------
    >>> g = bert("base", seq_len=128)
    >>> g.tensors[g.outputs[0]].shape
    (1, 768)
    """
    cfg = BERT_SIZES[size]
    b = GraphBuilder(f"bert-{size}")
    ids = b.input("input_ids", (1, seq_len), "int64")
    types = b.input("token_type_ids", (1, seq_len), "int64")
    pos = b.input("position_ids", (1, seq_len), "int64")
    with b.scope("embeddings"):
        x = b.embedding(ids, BERT_VOCAB, cfg.hidden, name="word")
        x = b.add(x, b.embedding(pos, BERT_MAX_POS, cfg.hidden, name="position"))
        x = b.add(x, b.embedding(types, BERT_TYPES, cfg.hidden, name="token_type"))
        x = b.layernorm(x)
    for i in range(cfg.layers):
        with b.scope(f"layer{i}"):
            x = _bert_layer(b, x, cfg)
    with b.scope("pooler"):
        x = b.unary("Tanh", b.gemm(b.take(x, 0, axis=1), cfg.hidden, name="dense"))
    return b.finish([x])


def _xlnet_layer(b: GraphBuilder, x: str, r: str, size: EncoderSize) -> str:
    d, heads = size.hidden, size.heads
    dh = d // heads
    one, s, _ = b.shape(x)
    q = b.reshape(b.linear(x, d, bias=False, name="q"), (one, s, heads, dh))
    k = _split_heads(b, b.linear(x, d, bias=False, name="k"), heads, keys=True)
    v = _split_heads(b, b.linear(x, d, bias=False, name="v"), heads)
    kr = _split_heads(b, b.linear(r, d, bias=False, name="r"), heads, keys=True)

    def biased(bias: str) -> str:
        return b.transpose(b.add(q, b.weight(bias, (heads, dh))), (0, 2, 1, 3))

    ac = b.matmul(biased("r_w_bias"), k)
    bd = b.slice(b.matmul(biased("r_r_bias"), kr), axis=-1, start=0, end=s)
    seg = b.weight("seg_embed", (heads, dh, 2))
    ef = b.op("MatMul", [biased("r_s_bias"), seg], (one, heads, s, 2), name="seg_score")
    score = b.add(b.add(ac, bd), b.slice(ef, axis=-1, start=0, end=1))
    p = b.softmax(b.scale(score, 1.0 / math.sqrt(dh)))
    ctx = _merge_heads(b, b.matmul(p, v))
    x = b.layernorm(b.add(b.linear(ctx, d, bias=False, name="o"), x), name="ln1")
    return _ffn(b, x, size.ffn)


def xlnet(size: str = "large", seq_len: int = 128) -> Graph:
    """XLNet encoder (content stream only, no memory) for one sequence of ``seq_len`` tokens.

    Examples
    --------
    >>> g = xlnet("base", seq_len=16)
    >>> g.tensors["pos_emb"].shape
    (1, 32, 768)
    """
    cfg = XLNET_SIZES[size]
    b = GraphBuilder("xlnet" if size == "large" else f"xlnet-{size}")
    ids = b.input("input_ids", (1, seq_len), "int64")
    r = b.input("pos_emb", (1, 2 * seq_len, cfg.hidden))
    x = b.embedding(ids, XLNET_VOCAB, cfg.hidden, name="word_embedding")
    for i in range(cfg.layers):
        with b.scope(f"layer{i}"):
            x = _xlnet_layer(b, x, r, cfg)
    return b.finish([x])
