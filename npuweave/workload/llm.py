"""Decoder-only transformers (LLMs) from a config, lowered to ``Layer``s per serving phase.

An LLM iteration processes ``T`` tokens: the new tokens of prefill chunks plus one token per
decoding request. Its layers describe the whole iteration as one "sample" (profile it at batch
1): every dense layer is a GEMM with ``m = T`` rows, so its weights are fetched once per
iteration whatever the batch; attention is per request, because each request reads its own
KV cache. Attention of ``new`` tokens over ``past + new`` positions is two GEMMs whose second
operand is the KV cache in DRAM, so the cache counts as the layers' "weights" (fetched at the
KV number format): ``QK`` (m = new * group, k = head_dim, n = past + new) and ``PV``
(m = new * group, k = past + new, n = head_dim), once per KV head. The score matrix stays on
chip (FlashAttention-style tiling), so the layers' activations are Q in and O out. Causal
masking is not skipped (a stated upper bound). Formulas: ``docs/LLM_SERVING.md``.

Examples
--------
>>> cfg = get_llm("llama-3-8b")
>>> cfg.kv_bytes_per_token_layer(16)   # K and V, 8 KV heads of 128, 2 bytes
4096
>>> round(cfg.weight_elems / 1e9, 2)
8.03
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from npuweave.errors import ConfigError, unknown_name
from npuweave.workload.layer import Layer, LayerKind

#: bits per element of the number formats an LLM's weights or KV cache may use
FORMAT_BITS: dict[str, int] = {"fp32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8,
                               "int4": 4}
#: vector operations per element: RMS/LayerNorm, softmax, SiLU-and-multiply, residual add
NORM_OPS, SOFTMAX_OPS, ACT_OPS, ADD_OPS = 4, 5, 4, 1
MAX_TOKENS = 1 << 20  # tokens in one iteration or one prompt; far past any model's context


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """A decoder-only transformer: the fields of its published config.

    ``gated`` FFNs (SwiGLU: gate, up, down) have three matrices, plain ones (OPT) two.
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    max_context: int
    gated: bool = True
    source: str = ""

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def group(self) -> int:
        """Query heads per KV head (grouped-query attention; 1 for multi-head)."""
        return self.heads // self.kv_heads

    @property
    def qkv_width(self) -> int:
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    @property
    def block_weight_elems(self) -> int:
        ffn = (3 if self.gated else 2) * self.hidden * self.ffn
        return self.hidden * self.qkv_width + self.heads * self.head_dim * self.hidden + ffn

    @property
    def weight_elems(self) -> int:
        """Every parameter: blocks, the embedding table and the LM head (norms are tiny)."""
        return self.layers * self.block_weight_elems + 2 * self.vocab * self.hidden

    def weight_bytes(self, bits: int) -> int:
        return -(-self.weight_elems * bits // 8)

    def kv_bytes_per_token_layer(self, bits: int) -> int:
        """KV cache bytes one token adds in one layer: K and V of every KV head."""
        return -(-2 * self.kv_heads * self.head_dim * bits // 8)

    def kv_bytes_per_token(self, bits: int) -> int:
        return self.layers * self.kv_bytes_per_token_layer(bits)


def _cfg(name: str, layers: int, hidden: int, heads: int, kv: int, ffn: int, vocab: int,
         ctx: int, gated: bool = True, source: str = "") -> LLMConfig:
    return LLMConfig(name, layers, hidden, heads, kv, ffn, vocab, ctx, gated, source)


_HF = "the model's config.json on Hugging Face"
CONFIGS: dict[str, LLMConfig] = {c.name: c for c in (
    _cfg("llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, source=_HF),
    _cfg("llama-3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, source=_HF),
    _cfg("llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, source=_HF),
    _cfg("llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 4096, source=_HF),
    _cfg("mistral-7b", 32, 4096, 32, 8, 14336, 32000, 32768,
         source=_HF + " (v0.1; its 4096-token sliding window is not modelled)"),
    _cfg("opt-6.7b", 32, 4096, 32, 32, 16384, 50272, 2048, gated=False, source=_HF),
    _cfg("opt-13b", 40, 5120, 40, 40, 20480, 50272, 2048, gated=False, source=_HF),
    _cfg("llm-tiny", 2, 256, 4, 2, 512, 1000, 512, source="a toy for hand-worked tests"),
)}


def llm_names() -> list[str]:
    """Names of the built-in LLM configs."""
    return sorted(CONFIGS)


def get_llm(name: str | LLMConfig) -> LLMConfig:
    """The config named ``name`` (an ``LLMConfig`` passes through)."""
    if isinstance(name, LLMConfig):
        return name
    try:
        return CONFIGS[name]
    except KeyError:
        raise unknown_name("LLM", name, list(CONFIGS)) from None


def format_bits(fmt: str | int, what: str) -> int:
    """Bits per element of a number format name (``bf16``, ``int8``...) or an int width."""
    if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt in FORMAT_BITS.values():
        return fmt
    if isinstance(fmt, str) and fmt.lower() in FORMAT_BITS:
        return FORMAT_BITS[fmt.lower()]
    raise ConfigError(f"{what}: unknown number format {fmt!r}; choose one of "
                      f"{', '.join(FORMAT_BITS)}")


def llm_bits(weights: object, kv: object, default_bits: int,
             prefix: str = "") -> tuple[int, int]:
    """Bits of the weights and of the KV cache: ``weights`` defaults to ``default_bits`` (the
    NPU's precision), ``kv`` to the weights' (``None`` means the default)."""
    wbits = format_bits(default_bits if weights is None else weights,  # type: ignore[arg-type]
                        f"{prefix}weights")
    return wbits, format_bits(wbits if kv is None else kv, f"{prefix}kv")  # type: ignore[arg-type]


def check_tokens(value: object, what: str, lo: int = 1) -> int:
    """An integer token count of at least ``lo`` (bounded by ``MAX_TOKENS``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= MAX_TOKENS:
        raise ConfigError(f"{what} must be an integer in [{lo}, {MAX_TOKENS}], got {value!r}")
    return value


def _gemm(name: str, m: int, k: int, n: int, weights: int, vec: int, count: int = 1,
          kind: LayerKind = LayerKind.GEMM, ins: int | None = None,
          outs: int | None = None) -> Layer:
    return Layer(name, kind, ("MatMul",), (count, m, k, n), count * m * k * n, vec, weights,
                 count * m * k if ins is None else ins, count * m * n if outs is None else outs)


def dense_layers(cfg: LLMConfig, tokens: int, prefix: str = "") -> tuple[Layer, ...]:
    """One block's weighted layers for ``tokens`` rows: QKV, O, FFN up(+gate), FFN down."""
    t, h = tokens, cfg.hidden
    up = (2 if cfg.gated else 1) * cfg.ffn
    act = (ACT_OPS if cfg.gated else 1) * t * cfg.ffn
    return (
        _gemm(f"{prefix}qkv", t, h, cfg.qkv_width, h * cfg.qkv_width, NORM_OPS * t * h),
        _gemm(f"{prefix}o", t, cfg.heads * cfg.head_dim, h, cfg.heads * cfg.head_dim * h,
              ADD_OPS * t * h),
        _gemm(f"{prefix}ffn_up", t, h, up, h * up, NORM_OPS * t * h + act),
        _gemm(f"{prefix}ffn_down", t, cfg.ffn, h, cfg.ffn * h, ADD_OPS * t * h),
    )


def attention_layers(cfg: LLMConfig, new: int, past: int, count: int = 1,
                     prefix: str = "") -> tuple[Layer, Layer]:
    """``QK`` and ``PV`` of ``count`` requests, each with ``new`` tokens over ``past + new``.

    The K (then V) cache of the ``past + new`` positions is the GEMMs' DRAM operand.
    """
    ctx, kv, hd, g = past + new, cfg.kv_heads, cfg.head_dim, cfg.group
    cache = count * kv * hd * ctx
    q_elems = count * new * cfg.heads * hd
    soft = SOFTMAX_OPS * count * new * cfg.heads * ctx
    return (_gemm(f"{prefix}attn_qk", new * g, hd, ctx, cache, soft, count * kv,
                  ins=q_elems, outs=0),
            _gemm(f"{prefix}attn_pv", new * g, ctx, hd, cache, 0, count * kv, ins=0,
                  outs=q_elems))


def head_layer(cfg: LLMConfig, outputs: int) -> Layer:
    """Final norm and LM head for the ``outputs`` sequences that emit a token."""
    h = cfg.hidden
    return _gemm("lm_head", outputs, h, cfg.vocab, h * cfg.vocab, NORM_OPS * outputs * h)


def embed_layer(cfg: LLMConfig, tokens: int) -> Layer:
    h = cfg.hidden
    return Layer("embed", LayerKind.EMBEDDING, ("Gather",), None, 0, 0, cfg.vocab * h,
                 tokens, tokens * h, gather_elems=tokens * h)


def lower_iteration(cfg: LLMConfig, attention: Iterable[tuple[int, int]],
                    outputs: int) -> list[Layer]:
    """Every layer of one iteration: ``attention`` holds ``(new, past)`` per request.

    Requests with the same ``(new, past)`` share one attention layer pair (``count``).
    """
    items = Counter(attention)
    tokens = sum(new * n for (new, _), n in items.items())
    layers: list[Layer] = [embed_layer(cfg, tokens)]
    for b in range(cfg.layers):
        qkv, o, up, down = dense_layers(cfg, tokens, f"blk{b}.")
        att: list[Layer] = []
        for i, ((new, past), n) in enumerate(sorted(items.items())):
            tag = f"blk{b}." if len(items) == 1 else f"blk{b}.r{i}."
            att.extend(attention_layers(cfg, new, past, n, tag))
        layers.extend((qkv, *att, o, up, down))
    if outputs:
        layers.append(head_layer(cfg, outputs))
    return layers


def is_kv_layer(layer: Layer) -> bool:
    """Attention layers, whose DRAM operand is the KV cache (priced at the KV format)."""
    return ".attn_" in layer.name or layer.name.startswith("attn_")


def layer_formats(layers: Sequence[Layer], weight_bits: int, kv_bits: int) -> dict[str, int]:
    """Per-layer bit widths for ``cost.profile``: KV layers at ``kv_bits``, others at weights'."""
    return {layer.name: kv_bits if is_kv_layer(layer) else weight_bits for layer in layers}


def phase_spec(params: Mapping[str, object], cfg: LLMConfig) -> list[tuple[int, int]]:
    """``(new, past)`` items of ``phase=prefill:tokens=N[:past=P]`` or
    ``phase=decode:batch=B:context=C``; contexts longer than the model's maximum are refused."""
    phase = params.get("phase", "prefill")
    known = {"prefill": {"phase", "tokens", "past", "weights", "kv"},
             "decode": {"phase", "batch", "context", "weights", "kv"}}
    if phase not in known:
        raise ConfigError(f"{cfg.name}: phase must be prefill or decode, got {phase!r}")
    extra = set(params) - known[str(phase)]
    if extra:
        raise ConfigError(f"{cfg.name}: unknown parameter(s) {sorted(extra)} for "
                          f"phase={phase}; use {sorted(known[str(phase)] - {'phase'})}")
    if phase == "prefill":
        new = check_tokens(params.get("tokens", 512), f"{cfg.name}: tokens")
        past = check_tokens(params.get("past", 0), f"{cfg.name}: past", lo=0)
        items = [(new, past)]
    else:
        batch = check_tokens(params.get("batch", 1), f"{cfg.name}: batch")
        ctx = check_tokens(params.get("context", 1024), f"{cfg.name}: context")
        items = [(1, ctx - 1)] * batch
    longest = max(new + past for new, past in items)
    if longest > cfg.max_context:
        raise ConfigError(f"{cfg.name}: context {longest} is longer than the model's maximum "
                          f"{cfg.max_context}; give at most {cfg.max_context} tokens")
    return items


def phase_layers(spec_name: str, params: Mapping[str, object],
                 default_bits: int) -> tuple[list[Layer], dict[str, int], str]:
    """Layers, per-layer bit widths and a title for ``llama-3-8b:phase=...`` (``profile``)."""
    cfg = get_llm(spec_name)
    items = phase_spec(params, cfg)
    wbits, kbits = llm_bits(params.get("weights"), params.get("kv"), default_bits,
                            f"{cfg.name}: ")
    layers = lower_iteration(cfg, items, outputs=len(items))
    new, past = items[0]
    title = (f"{cfg.name} prefill of {new} tokens after {past}" if params.get("phase", "prefill")
             == "prefill" else f"{cfg.name} decode step, batch {len(items)}, context {past + 1}")
    return layers, layer_formats(layers, wbits, kbits), title


def llm_layers_for(spec: str, default_bits: int) -> tuple[list[Layer], dict[str, int], str] | None:
    """``phase_layers`` for ``name:phase=...`` when ``name`` is an LLM config, else None."""
    name, _, rest = str(spec).partition(":")
    if name not in CONFIGS:
        return None
    from npuweave.workload import parse_model_spec

    _, params = parse_model_spec(spec)
    return phase_layers(name, params, default_bits)
