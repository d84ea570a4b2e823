"""LSTM models of PREMA's cloud-inference mix: sentiment analysis, translation, speech recognition.

Every LSTM is one ONNX ``LSTM`` op over the whole sequence (one layer of the schedule, whose
cost is ``seq_len`` time steps). Decoders are unrolled over ``out_len`` steps with the previous
output tokens as an input (teacher forcing shapes); in deployment ``out_len`` is data-dependent,
which is exactly what PREMA predicts, so it is a parameter here.

Assumptions
-----------
``lstm-sentiment`` (RNN-SA): the seeds name the application, not the topology, so we pick a
mid-sized classifier: vocabulary 25,000 words, embedding 512, two unidirectional LSTM layers
with 1024 hidden units, FC 1024 -> 2 on the last hidden state. ``seq_len`` (default 64 words)
is the number of input tokens; one output per sequence.

``lstm-translation`` (RNN-MT): the GNMT topology of the MLPerf translation reference
(Wu et al., 2016): shared-size BPE vocabulary of 32,320, embedding and hidden 1024. Encoder:
a bidirectional LSTM (1024 per direction), then three LSTMs of 1024, with residual adds
around the last two. Decoder: an LSTM over the target embeddings whose outputs query a
normalized Bahdanau (additive) attention over the encoder outputs; three more LSTMs take
``[previous output; attention context]`` (2048 wide), residual adds around the last two;
a 1024 -> 32,320 classifier per output token. The attention's learned norm scalar is folded
into its score vector. ``seq_len`` (default 25, a typical WMT sentence in sub-words) is the
source length; ``out_len`` defaults to ``seq_len`` (PREMA finds output and input lengths
close to proportional for English-German).

``lstm-speech`` (RNN-ASR): Listen, Attend and Spell (Chan et al., 2016). Input: 40 log-mel
filterbank features per 10 ms frame; ``seq_len`` is the number of frames (default 512,
about 5 s) and must be a multiple of 8. Listener: a bidirectional LSTM (256 per direction)
then three pyramidal BLSTMs that each concatenate pairs of frames, reducing time by 8.
Speller: character vocabulary of 30 (26 letters, space, apostrophe, start/end of sentence,
as in LibriSpeech transcripts), embedding 256, two LSTM layers of 512, content attention
with one ReLU FC layer of 512 on each side (phi, psi) and a dot product, and an FC from
``[state; context]`` to the characters. ``out_len`` defaults to ``seq_len // 8`` characters
(12.5 per second, close to read speech). Approximation: LAS feeds the previous step's
context into the speller's first LSTM; a single static LSTM op cannot, so that input is
dropped (4 * 512 * 512 MACs per character, ~5% of the speller).
"""

from __future__ import annotations

from npuweave.workload.graph import Graph
from npuweave.workload.zoo.builder import GraphBuilder

SA_VOCAB, SA_EMBED, SA_HIDDEN, SA_LAYERS, SA_CLASSES = 25_000, 512, 1024, 2, 2
MT_VOCAB, MT_HIDDEN = 32_320, 1024
ASR_FEATURES, ASR_LISTEN, ASR_SPELL, ASR_EMBED, ASR_CHARS = 40, 256, 512, 256, 30


def lstm_sentiment(seq_len: int = 64) -> Graph:
    """Two-layer LSTM sentiment classifier over ``seq_len`` tokens.

    Examples
    --------
    >>> g = lstm_sentiment(seq_len=5)
    >>> g.tensors[g.outputs[0]].shape
    (1, 2)
    """
    b = GraphBuilder("lstm-sentiment")
    x = b.embedding(b.input("token_ids", (1, seq_len), "int64"), SA_VOCAB, SA_EMBED)
    for i in range(SA_LAYERS - 1):
        x = b.lstm(x, SA_HIDDEN, name=f"lstm{i}")
    x = b.lstm(x, SA_HIDDEN, name=f"lstm{SA_LAYERS - 1}", last=True)
    return b.finish([b.softmax(b.gemm(x, SA_CLASSES, name="classifier"))])


def additive_attention(b: GraphBuilder, query: str, memory: str) -> str:
    """Bahdanau attention: ``softmax(v . tanh(W_q q + W_k m + bias))`` weights over ``memory``."""
    (one, t_out, _), (_, t_in, dim) = b.shape(query), b.shape(memory)
    q = b.reshape(b.linear(query, dim, bias=False, name="query"), (one, t_out, 1, dim))
    k = b.reshape(b.linear(memory, dim, bias=False, name="key"), (one, 1, t_in, dim))
    e = b.unary("Tanh", b.bias(b.add(q, k), "norm_bias"))
    score = b.reshape(b.linear(e, 1, bias=False, name="score"), (one, t_out, t_in))
    return b.matmul(b.softmax(score), memory)


def lstm_translation(seq_len: int = 25, out_len: int | None = None) -> Graph:
    """GNMT-style encoder-decoder (4 + 4 LSTM layers of 1024) with additive attention.

    Examples
    --------
    >>> g = lstm_translation(seq_len=10, out_len=12)
    >>> g.tensors[g.outputs[0]].shape
    (1, 12, 32320)
    """
    out_len = seq_len if out_len is None else out_len
    b = GraphBuilder("lstm-translation")
    src = b.input("source_ids", (1, seq_len), "int64")
    tgt = b.input("target_ids", (1, out_len), "int64")
    with b.scope("encoder"):
        x = b.lstm(b.embedding(src, MT_VOCAB, MT_HIDDEN), MT_HIDDEN, True, name="lstm0")
        x = b.lstm(x, MT_HIDDEN, name="lstm1")
        for i in (2, 3):
            x = b.add(b.lstm(x, MT_HIDDEN, name=f"lstm{i}"), x)
    with b.scope("decoder"):
        y = b.lstm(b.embedding(tgt, MT_VOCAB, MT_HIDDEN), MT_HIDDEN, name="lstm0")
        with b.scope("attention"):
            ctx = additive_attention(b, y, x)
        for i in (1, 2, 3):
            h = b.lstm(b.concat([y, ctx], axis=2), MT_HIDDEN, name=f"lstm{i}")
            y = h if i == 1 else b.add(h, y)
        logits = b.linear(y, MT_VOCAB, name="classifier")
    return b.finish([logits])


def lstm_speech(seq_len: int = 512, out_len: int | None = None) -> Graph:
    """Listen, Attend and Spell over ``seq_len`` frames (a multiple of 8).

    Examples
    --------
    >>> g = lstm_speech(seq_len=64)
    >>> g.tensors[g.outputs[0]].shape
    (1, 8, 30)
    """
    assert seq_len % 8 == 0, seq_len
    out_len = seq_len // 8 if out_len is None else out_len
    b = GraphBuilder("lstm-speech")
    feats = b.input("features", (1, seq_len, ASR_FEATURES))
    chars = b.input("prev_chars", (1, out_len), "int64")
    with b.scope("listener"):
        h = b.lstm(feats, ASR_LISTEN, True, name="blstm")
        for i in range(3):
            one, t, f = b.shape(h)
            h = b.lstm(b.reshape(h, (one, t // 2, 2 * f)), ASR_LISTEN, True, name=f"pblstm{i}")
    with b.scope("speller"):
        s = b.embedding(chars, ASR_CHARS, ASR_EMBED)
        s = b.lstm(b.lstm(s, ASR_SPELL, name="lstm0"), ASR_SPELL, name="lstm1")
        with b.scope("attention"):
            phi = b.relu(b.linear(s, ASR_SPELL, name="phi"))
            psi = b.relu(b.linear(h, ASR_SPELL, name="psi"))
            p = b.softmax(b.matmul(phi, b.transpose(psi, (0, 2, 1))))
            ctx = b.matmul(p, h)
        logits = b.linear(b.concat([s, ctx], axis=2), ASR_CHARS, name="char_fc")
    return b.finish([b.softmax(logits)])
