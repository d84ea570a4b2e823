"""What one LLM serving iteration costs on one NPU, from the per-layer cost model, cached.

An iteration runs every block once over its ``T`` tokens. Each dense layer (QKV, O, FFN up,
FFN down, the LM head) takes ``max(compute, memory)`` of its ``LayerCost`` at ``m = T`` rows
(its weights stream while the array works on the previous tile). Attention of all the batch's
requests is one batched kernel per block: its time is ``max(sum compute, sum memory)`` over
the requests, because one request's KV fetch overlaps another's arithmetic. So

``time = sum_dense max(c, m) + max(sum_req c_att, sum_req m_att) + head``.

Prices are cached: dense layers by exact ``T``; decode attention in a table indexed by the
context rounded up to a KV block (priced at the block's end, an upper bound of at most one
block); prefill attention by ``(new tokens, past rounded up to a block)``.

Examples
--------
>>> from npuweave.hardware import preset
>>> sc = StepCosts("llm-tiny", preset("tpuv5e-like"))
>>> sc.iteration([(4, 0)], [15, 31]).time_s > 0
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from npuweave.cost import layer_cost
from npuweave.hardware.npu import NPU
from npuweave.workload.llm import (
    LLMConfig,
    attention_layers,
    dense_layers,
    embed_layer,
    get_llm,
    head_layer,
    llm_bits,
)

#: default cost model: TPU MXUs double-buffer weights, so a fold's weight load hides behind the
#: previous fold; under plain ``systolic-ws`` every decode fold pays its weight shift-in
DEFAULT_COST_MODEL = "systolic-ws-db"


@dataclass(frozen=True, slots=True)
class StepCost:
    """One iteration: wall time, PE-busy and DRAM-busy seconds, DRAM bytes."""

    time_s: float
    compute_s: float
    memory_s: float
    dram_bytes: int


class StepCosts:
    """Cached iteration prices of ``model`` on ``npu`` (see the module docstring).

    Parameters
    ----------
    model : an LLM config or its name.
    npu : the NPU.
    cost_model : a registered per-layer cost model.
    weights, kv : number formats (``bf16``, ``int8``...) or bit widths; default the NPU's.
    block : KV block size in tokens (the paging unit and the price bucket).
    """

    def __init__(self, model: str | LLMConfig, npu: NPU, cost_model: str = DEFAULT_COST_MODEL,
                 weights: str | int | None = None, kv: str | int | None = None,
                 block: int = 16) -> None:
        self.cfg, self.npu, self.cost_model, self.block = get_llm(model), npu, cost_model, block
        self.weight_bits, self.kv_bits = llm_bits(weights, kv, npu.precision_bits)
        self._dense: dict[int, tuple[float, float, float, int]] = {}
        self._head: dict[int, tuple[float, float, float, int]] = {}
        self._prefill: dict[tuple[int, int], tuple[float, float, int]] = {}
        #: Layerweaver-interleaved ``(prefill end, decode end)`` by rounded costs (interleave)
        self.interleaved: dict[tuple[int, ...], tuple[float, float]] = {}
        buckets = np.arange(0, self.cfg.max_context + 2 * block, block)
        table = [self._attention(1, max(0, int(b) - 1)) for b in buckets]
        #: decode attention per request, all blocks, by ``ceil(context / block)``: rows of
        #: (compute s, memory s, DRAM bytes); bytes stay exact in float64 below 2**53
        self.dec_table = np.array(table, dtype=np.float64)

    def _cost(self, layer: Any, bits: int) -> tuple[float, float, int]:
        c = layer_cost(layer, self.npu, 1, bits, self.cost_model)
        return c.compute_s, c.memory_s, c.dram_bytes

    def _attention(self, new: int, past: int) -> tuple[float, float, int]:
        if new == 0:
            return 0.0, 0.0, 0
        qk, pv = attention_layers(self.cfg, new, past)
        a, b = self._cost(qk, self.kv_bits), self._cost(pv, self.kv_bits)
        n = self.cfg.layers
        return n * (a[0] + b[0]), n * (a[1] + b[1]), n * (a[2] + b[2])

    def dense(self, tokens: int) -> tuple[float, float, float, int]:
        """``(time, compute, memory, bytes)`` of the embedding and every block's dense layers."""
        hit = self._dense.get(tokens)
        if hit is None:
            t = c = m = 0.0
            nbytes = 0
            if tokens:
                parts = [self._cost(x, self.weight_bits) for x in dense_layers(self.cfg, tokens)]
                n = self.cfg.layers
                emb = self._cost(embed_layer(self.cfg, tokens), self.weight_bits)
                t = n * sum(max(p[0], p[1]) for p in parts) + max(emb[0], emb[1])
                c = n * sum(p[0] for p in parts) + emb[0]
                m = n * sum(p[1] for p in parts) + emb[1]
                nbytes = n * sum(p[2] for p in parts) + emb[2]
            hit = self._dense[tokens] = (t, c, m, nbytes)
        return hit

    def head(self, outputs: int) -> tuple[float, float, float, int]:
        """``(time, compute, memory, bytes)`` of the LM head for ``outputs`` sequences."""
        hit = self._head.get(outputs)
        if hit is None:
            c = m = 0.0
            nbytes = 0
            if outputs:
                c, m, nbytes = self._cost(head_layer(self.cfg, outputs), self.weight_bits)
            hit = self._head[outputs] = (max(c, m), c, m, nbytes)
        return hit

    def bucket(self, context: int) -> int:
        """Table index of a context: ``ceil(context / block)``."""
        return -(-context // self.block)

    def prefill_attention(self, new: int, past: int) -> tuple[float, float, int]:
        """``(compute, memory, bytes)`` of ``new`` prompt tokens over ``past`` cached ones."""
        key = (new, self.bucket(past) * self.block)
        hit = self._prefill.get(key)
        if hit is None:
            hit = self._prefill[key] = self._attention(new, key[1])
        return hit

    def decode_attention(self, contexts: np.ndarray) -> tuple[float, float, int]:
        """``(compute, memory, bytes)`` of one decode token for each context (after the token)."""
        c, m, nbytes = self.dec_table[(contexts + (self.block - 1)) // self.block].sum(axis=0)
        return float(c), float(m), int(nbytes)

    def combine(self, tokens: int, outputs: int, att: tuple[float, float, int]) -> StepCost:
        """An iteration of ``tokens`` tokens, ``outputs`` emitting a token, attention ``att``."""
        d, h = self.dense(tokens), self.head(outputs)
        return StepCost(d[0] + h[0] + max(att[0], att[1]), d[1] + h[1] + att[0],
                        d[2] + h[2] + att[1], d[3] + h[3] + att[2])

    def iteration(self, prefills: list[tuple[int, int]], contexts: list[int] | np.ndarray,
                  outputs: int | None = None) -> StepCost:
        """Price one iteration: prefill chunks ``(new, past)`` plus one decode token per context.

        ``outputs`` defaults to one per decode context and per prefill chunk.
        """
        ctx = np.asarray(contexts, dtype=np.int64)
        c, m, nbytes = self.decode_attention(ctx) if len(ctx) else (0.0, 0.0, 0)
        tokens = len(ctx)
        for new, past in prefills:
            a = self.prefill_attention(new, past)
            c, m, nbytes, tokens = c + a[0], m + a[1], nbytes + a[2], tokens + new
        n_out = len(ctx) + len(prefills) if outputs is None else outputs
        return self.combine(tokens, n_out, (c, m, nbytes))

    def block_units(self, cost: StepCost) -> tuple[list[float], list[int]]:
        """An iteration as ``layers`` equal units (compute seconds, DRAM bytes): Layerweaver's
        scheduling units for interleaving two iterations."""
        n = self.cfg.layers
        return [cost.compute_s / n] * n, [cost.dram_bytes // n] * n


@lru_cache(maxsize=16)
def step_costs(model: LLMConfig, npu: NPU, cost_model: str, weights: str | int | None,
               kv: str | int | None, block: int) -> StepCosts:
    """A shared ``StepCosts`` per setting, so repeated runs (capacity probes, sweeps) reuse
    its price tables."""
    return StepCosts(model, npu, cost_model, weights, kv, block)
