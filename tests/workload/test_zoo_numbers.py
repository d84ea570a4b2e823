"""Golden MACs and parameter counts for the zoo.

Two kinds of reference, never a number read off our own builder:

* closed-form arithmetic written here per stage/block from the papers' architecture tables
  (``hand``), compared exactly;
* published counts (``lit``): torchvision's model table (params; "GFLOPS" there are MACs),
  Keras Applications' ``model.summary()`` totals (which include BatchNorm running
  statistics), Hugging Face ``BertModel`` parameter totals, and the papers' own MAC figures,
  compared with the tolerance the rounding of the published figure allows.

Our parameter convention counts all four BatchNorm vectors; torchvision counts two (scale,
shift), Keras' InceptionV3 three (no scale). ``bn_channels`` converts between them.
"""

from __future__ import annotations

import pytest

from npuweave.workload import zoo
from npuweave.workload.zoo import stats


def counts(name: str, **params: object) -> tuple[int, int]:
    g = zoo.build(name, **params)
    return stats.total_macs(g), stats.param_count(g)


def bn_channels(name: str) -> int:
    g = zoo.build(name)
    return sum(g.tensors[op.inputs[1]].numel for op in g.ops if op.op_type == "BatchNormalization")


# ---- hand: closed forms ----------------------------------------------------------------------
def hand_bottleneck_net(groups: int, width_per_group: int) -> tuple[int, int]:
    """ResNet-50 v1.5 / ResNeXt-50: stem, 16 bottlenecks (stride on the 3x3), FC."""
    macs, params = 112 * 112 * 64 * 3 * 7 * 7, 64 * 3 * 49 + 4 * 64
    h, cin = 56, 64
    for stage, (blocks, cout) in enumerate([(3, 256), (4, 512), (6, 1024), (3, 2048)]):
        w = cout // 4 * width_per_group // 64 * groups
        for i in range(blocks):
            s = 2 if i == 0 and stage > 0 else 1
            ho = h // s
            macs += h * h * cin * w + ho * ho * w * (w // groups) * 9 + ho * ho * w * cout
            params += cin * w + w * (w // groups) * 9 + w * cout + 4 * (2 * w + cout)
            if i == 0:
                macs += ho * ho * cin * cout
                params += cin * cout + 4 * cout
            h, cin = ho, cout
    return macs + 2048 * 1000, params + 2048 * 1000 + 1000


def hand_mobilenetv2() -> tuple[int, int]:
    macs, params = 112 * 112 * 32 * 27, 32 * 27 + 4 * 32
    h, cin = 112, 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            hid, ho = cin * t, h // (s if i == 0 else 1)
            if t != 1:
                macs, params = macs + h * h * cin * hid, params + cin * hid + 4 * hid
            macs += ho * ho * hid * 9 + ho * ho * hid * c
            params += hid * 9 + 4 * hid + hid * c + 4 * c
            h, cin = ho, c
    macs += 7 * 7 * 320 * 1280 + 1280 * 1000
    return macs, params + 320 * 1280 + 4 * 1280 + 1280 * 1000 + 1000


def hand_mobilenetv1() -> tuple[int, int]:
    macs, params = 112 * 112 * 32 * 27, 32 * 27 + 4 * 32
    h, cin = 112, 32
    for cout, s in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 \
            + [(1024, 2), (1024, 1)]:
        h //= s
        macs += h * h * cin * 9 + h * h * cin * cout
        params += cin * 9 + 4 * cin + cin * cout + 4 * cout
        cin = cout
    return macs + 1024 * 1000, params + 1024 * 1000 + 1000


def hand_vgg16() -> tuple[int, int]:
    macs = params = 0
    h, cin = 224, 3
    for convs, c in [(2, 64), (2, 128), (3, 256), (3, 512), (3, 512)]:
        for _ in range(convs):
            macs, params, cin = macs + h * h * c * cin * 9, params + c * cin * 9 + c, c
        h //= 2
    for k, n in [(25088, 4096), (4096, 4096), (4096, 1000)]:
        macs, params = macs + k * n, params + k * n + n
    return macs, params


def hand_alexnet() -> tuple[int, int]:
    # (out hw, cout, cin per group, kernel): conv1 .. conv5, groups of 2 on conv2/4/5
    convs = [(55, 96, 3, 11), (27, 256, 48, 5), (13, 384, 256, 3), (13, 384, 192, 3),
             (13, 256, 192, 3)]
    macs = sum(h * h * c * ci * k * k for h, c, ci, k in convs)
    params = sum(c * ci * k * k + c for _, c, ci, k in convs)
    for k, n in [(9216, 4096), (4096, 4096), (4096, 1000)]:
        macs, params = macs + k * n, params + k * n + n
    return macs, params


def hand_googlenet() -> tuple[int, int]:
    # paper Table 1: (#1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj), at 28/14/7
    mods = [(28, 64, 96, 128, 16, 32, 32), (28, 128, 128, 192, 32, 96, 64),
            (14, 192, 96, 208, 16, 48, 64), (14, 160, 112, 224, 24, 64, 64),
            (14, 128, 128, 256, 24, 64, 64), (14, 112, 144, 288, 32, 64, 64),
            (14, 256, 160, 320, 32, 128, 128), (7, 256, 160, 320, 32, 128, 128),
            (7, 384, 192, 384, 48, 128, 128)]
    macs = 112 * 112 * 64 * 147 + 56 * 56 * 64 * 64 + 56 * 56 * 192 * 64 * 9
    params = 64 * 147 + 64 + 64 * 64 + 64 + 192 * 64 * 9 + 192
    cin = 192
    for h, c1, r3, c3, r5, c5, pp in mods:
        w = cin * c1 + cin * r3 + r3 * c3 * 9 + cin * r5 + r5 * c5 * 25 + cin * pp
        macs += h * h * w
        params += w + c1 + r3 + c3 + r5 + c5 + pp
        cin = c1 + c3 + c5 + pp
    return macs + 1024 * 1000, params + 1024 * 1000 + 1000


def hand_bert(layers: int, d: int, ffn: int, seq: int) -> tuple[int, int]:
    per_layer_params = 4 * d * d + 4 * d + 2 * d * ffn + ffn + d + 4 * d
    params = (30522 + 512 + 2) * d + 2 * d + layers * per_layer_params + d * d + d
    per_layer_macs = 4 * seq * d * d + 2 * seq * seq * d + 2 * seq * d * ffn
    return layers * per_layer_macs + d * d, params


def hand_xlnet(layers: int, d: int, ffn: int, seq: int) -> tuple[int, int]:
    # q, k, v, o, r projections; 3 attention biases; seg_embed (2 x d); 2 LayerNorms; FFN
    per_layer_params = 5 * d * d + 3 * d + 2 * d + 4 * d + 2 * d * ffn + ffn + d
    # q,k,v,o on seq rows; r on 2*seq rows; content, position (2*seq keys), segment (2),
    # and value products; FFN
    per_layer_macs = (4 * seq * d * d + 2 * seq * d * d + seq * seq * d + 2 * seq * seq * d
                      + 2 * seq * d + seq * seq * d + 2 * seq * d * ffn)
    return layers * per_layer_macs, 32000 * d + layers * per_layer_params


def lstm(t: int, inp: int, h: int, dirs: int = 1) -> tuple[int, int]:
    """(MACs, params) of one ONNX LSTM over t steps: W, R and both biases per direction."""
    return t * dirs * 4 * h * (inp + h), dirs * (4 * h * (inp + h) + 8 * h)


def total(*parts: tuple[int, int]) -> tuple[int, int]:
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def fc(rows: int, k: int, n: int, bias: bool = True) -> tuple[int, int]:
    return rows * k * n, k * n + (n if bias else 0)


def hand_lstm_sentiment(seq: int) -> tuple[int, int]:
    return total((0, 25000 * 512), lstm(seq, 512, 1024), lstm(seq, 1024, 1024),
                 fc(1, 1024, 2))


def hand_lstm_translation(s: int, o: int) -> tuple[int, int]:
    v, h = 32320, 1024
    enc = total((0, v * h), lstm(s, h, h, 2), lstm(s, 2 * h, h), lstm(s, h, h), lstm(s, h, h))
    att = total(fc(o, h, h, False), fc(s, h, h, False), (0, h), fc(o * s, h, 1, False),
                (o * s * h, 0))  # context = attention weights x encoder outputs
    dec = total((0, v * h), lstm(o, h, h), *[lstm(o, 2 * h, h)] * 3, fc(o, h, v))
    return total(enc, att, dec)


def hand_lstm_speech(frames: int, o: int) -> tuple[int, int]:
    t = frames // 8
    listen = total(lstm(frames, 40, 256, 2), lstm(frames // 2, 1024, 256, 2),
                   lstm(frames // 4, 1024, 256, 2), lstm(t, 1024, 256, 2))
    spell = total((0, 30 * 256), lstm(o, 256, 512), lstm(o, 512, 512), fc(o, 512, 512),
                  fc(t, 512, 512), (o * t * 512 * 2, 0), fc(o, 1024, 30))
    return total(listen, spell)


def hand_ncf() -> tuple[int, int]:
    tables = (138493 + 26744) * (64 + 128)
    return total((0, tables), fc(1, 256, 256), fc(1, 256, 128), fc(1, 128, 64), fc(1, 128, 1))


@pytest.mark.parametrize("name,params,expected", [
    ("resnet50", {}, hand_bottleneck_net(1, 64)),
    ("resnext50", {}, hand_bottleneck_net(32, 4)),
    ("mobilenetv2", {}, hand_mobilenetv2()),
    ("mobilenetv1", {}, hand_mobilenetv1()),
    ("vgg16", {}, hand_vgg16()),
    ("alexnet", {}, hand_alexnet()),
    ("googlenet", {}, hand_googlenet()),
    ("bert-base", {}, hand_bert(12, 768, 3072, 128)),
    ("bert-base", {"seq_len": 384}, hand_bert(12, 768, 3072, 384)),
    ("bert-large", {"seq_len": 128}, hand_bert(24, 1024, 4096, 128)),
    ("xlnet", {}, hand_xlnet(24, 1024, 4096, 128)),
    ("xlnet", {"size": "base", "seq_len": 64}, hand_xlnet(12, 768, 3072, 64)),
    ("ncf", {}, hand_ncf()),
    ("lstm-sentiment", {}, hand_lstm_sentiment(64)),
    ("lstm-sentiment", {"seq_len": 5}, hand_lstm_sentiment(5)),
    ("lstm-translation", {}, hand_lstm_translation(25, 25)),
    ("lstm-translation", {"seq_len": 12, "out_len": 17}, hand_lstm_translation(12, 17)),
    ("lstm-speech", {}, hand_lstm_speech(512, 64)),
    ("lstm-speech", {"seq_len": 80, "out_len": 20}, hand_lstm_speech(80, 20)),
])
def test_macs_and_params_equal_the_closed_form(name, params, expected):
    assert counts(name, **params) == expected


# ---- lit: published figures -------------------------------------------------------------------
@pytest.mark.parametrize("name,gmacs,rel", [
    ("resnet50", 4.09, 0.005),      # torchvision ResNet50_Weights "4.09 GFLOPS" (MACs)
    ("resnext50", 4.23, 0.005),     # torchvision ResNeXt50_32X4D_Weights
    ("mobilenetv2", 0.30, 0.02),    # Sandler et al. Table 3: 300 M multiply-adds
    ("mobilenetv1", 0.569, 0.002),  # Howard et al. Table 8: 569 M mult-adds
    ("inceptionv3", 5.71, 0.005),   # torchvision Inception_V3_Weights (aux head not run)
    ("vgg16", 15.47, 0.002),        # torchvision VGG16_Weights
    ("alexnet", 0.72, 0.01),        # Krizhevsky et al. two-tower net, ~720 M MACs
    ("googlenet", 1.5, 0.07),       # Szegedy et al.: "1.5 billion multiply-adds" (rounded)
])
def test_gmacs_match_the_literature(name, gmacs, rel):
    assert counts(name)[0] / 1e9 == pytest.approx(gmacs, rel=rel)


@pytest.mark.parametrize("name,published,bn_vectors_not_counted", [
    ("resnet50", 25_557_032, 2),      # torchvision: BN scale + shift only
    ("resnext50", 25_028_904, 2),     # torchvision
    ("mobilenetv2", 3_504_872, 2),    # torchvision
    ("mobilenetv2", 3_538_984, 0),    # Keras MobileNetV2 (all four BN vectors)
    ("mobilenetv1", 4_253_864, 0),    # Keras MobileNet 1.0-224
    ("inceptionv3", 23_851_784, 1),   # Keras InceptionV3, BN without scale, no aux head
    ("vgg16", 138_357_544, 0),        # torchvision / Keras VGG16
    ("bert-base", 109_482_240, 0),    # Hugging Face BertModel (bert-base-uncased)
    ("bert-large", 335_141_888, 0),   # Hugging Face BertModel (bert-large-uncased)
])
def test_params_match_published_totals(name, published, bn_vectors_not_counted):
    params = counts(name)[1]
    assert params - bn_vectors_not_counted * bn_channels(name) == published


@pytest.mark.parametrize("name,params_m,rel", [
    ("alexnet", 61.0, 0.002),        # Krizhevsky et al.: 60 M; Caffe bvlc_alexnet 60.97 M
    ("googlenet", 7.0, 0.01),        # Caffe bvlc_googlenet, ~7 M without auxiliary heads
    ("xlnet", 360.3, 0.001),         # Hugging Face xlnet-large-cased, 360 M
    ("ncf", 31.8, 0.005),            # MLPerf NCF on ml-20m
])
def test_params_near_published_figures(name, params_m, rel):
    assert counts(name)[1] / 1e6 == pytest.approx(params_m, rel=rel)


def test_transformers_scale_with_sequence_length():
    # attention grows with seq^2, projections with seq: doubling seq more than doubles MACs
    short, long_ = counts("bert-base", seq_len=128)[0], counts("bert-base", seq_len=256)[0]
    assert 2 * short < long_ < 2.2 * short
    assert counts("bert-base", seq_len=256)[1] == counts("bert-base", seq_len=128)[1]


@pytest.mark.parametrize("name,weighted,attention", [
    # ResNet-50: 53 convs (stem + 16 bottlenecks x 3 + 4 projections) + FC
    ("resnet50", 54, 0), ("resnext50", 54, 0),
    # MobileNetV2: stem + 17 blocks (first without expansion: 2 convs, others 3) + last + FC
    ("mobilenetv2", 1 + 2 + 16 * 3 + 1 + 1, 0),
    ("mobilenetv1", 1 + 13 * 2 + 1, 0), ("vgg16", 16, 0), ("alexnet", 8, 0),
    # GoogLeNet: 3 stem convs + 9 modules x 6 convs + FC
    ("googlenet", 3 + 9 * 6 + 1, 0),
    # InceptionV3: 5 stem; A: 7 each (x3); B: 4; C: 10 each (x4); D: 6; E: 9 each (x2); FC
    ("inceptionv3", 5 + 3 * 7 + 4 + 4 * 10 + 6 + 2 * 9 + 1, 0),
    # BERT: 3 embedding lookups, QKV/out/FFN1/FFN2 per layer, pooler; 2 attention products
    ("bert-base", 3 + 12 * 4 + 1, 24), ("bert-large", 3 + 24 * 4 + 1, 48),
    # XLNet: embedding; q, k, v, r, segment, o, FFN1, FFN2 per layer; 3 attention products
    ("xlnet", 1 + 24 * 8, 24 * 3),
    ("ncf", 4 + 4, 0),
    ("lstm-sentiment", 1 + 2 + 1, 0),
    # embeddings 2, LSTMs 8, attention query/key/score 3, classifier 1; context product 1
    ("lstm-translation", 2 + 8 + 3 + 1, 1),
    # 4 listener LSTMs, embedding, 2 speller LSTMs, phi, psi, char FC; energy and context
    ("lstm-speech", 4 + 1 + 2 + 2 + 1, 2),
])
def test_layer_counts(name, weighted, attention):
    s = stats.summarize(zoo.build(name))
    assert (s["weighted"], s["attention"]) == (weighted, attention)
