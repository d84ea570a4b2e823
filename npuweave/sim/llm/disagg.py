"""Prefill/decode disaggregation: ``P`` prefill NPUs, ``D`` decode NPUs, KV moved between them.

Prefill NPUs take waiting requests first come first served, as prefill-only batches of whole
prompts (up to ``max_tokens``); the first token is out when the batch ends. The request's KV
(prompt tokens x KV bytes per token) then crosses the link at ``kv_link_bw`` (no contention
between transfers: an optimistic bound) and joins decode NPU ``i % D`` (in the order the
transfers land), which runs the single-NPU loop with the ``vllm`` policy: requests arrive
prefilled and decode; one preempted by recompute is prefilled again there. Prefill never
waits for decode memory: a prefill NPU holds one batch's KV until it is sent.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from npuweave.sim.llm.costs import StepCosts
from npuweave.sim.llm.loop import Trace, run
from npuweave.sim.llm.policies import LLMScheduler
from npuweave.sim.llm.state import LLMState


def _prefill_pass(times: np.ndarray, prompt: np.ndarray, costs: StepCosts, npus: int,
                  max_tokens: int, trace: Trace) -> np.ndarray:
    """First-token time of every request when ``npus`` NPUs prefill FCFS batches."""
    n = len(times)
    first = np.empty(n)
    free = [0.0] * npus
    heapq.heapify(free)
    i = 0
    while i < n:
        start = max(heapq.heappop(free), float(times[i]))
        j, tokens = i, 0
        while j < n and times[j] <= start and (j == i or tokens + prompt[j] <= max_tokens):
            tokens += int(prompt[j])
            j += 1
        cost = costs.iteration([(int(p), 0) for p in prompt[i:j]], [])
        first[i:j] = start + cost.time_s
        acc = trace.phase["prefill"]
        acc[0] += cost.time_s
        acc[1] += cost.compute_s
        acc[2] += cost.memory_s
        acc[3] += 1
        trace.iterations += 1
        heapq.heappush(free, start + cost.time_s)
        i = j
    return first


def _decode_npu(ids: np.ndarray, ready: np.ndarray, first: np.ndarray, prompt: np.ndarray,
                output: np.ndarray, costs: StepCosts, blocks: int, spec: Any,
                trace: Trace) -> tuple[LLMState, np.ndarray]:
    order = ids[np.argsort(ready[ids], kind="stable")]
    st = LLMState(ready[order], prompt[order], output[order], blocks, spec.block, spec.max_seqs)
    st.done[:] = st.target
    st.gen[:] = 1
    st.first_s[:] = first[order]
    st.last_s[:] = first[order]
    sub = run(st, costs, LLMScheduler("vllm"), spec.max_tokens, spec.preempt == "swap",
              spec.swap_bw, False)
    trace.gaps.extend(sub.gaps)
    trace.iterations += sub.iterations
    trace.span_s = max(trace.span_s, sub.span_s)
    trace.stall_s += sub.stall_s
    for p, acc in sub.phase.items():
        trace.phase["decode" if p == "prefill" else p] = [
            a + b for a, b in zip(trace.phase["decode" if p == "prefill" else p], acc)]
    trace.kv_t.extend(sub.kv_t)
    trace.kv_blocks.extend(sub.kv_blocks)
    return st, order


def run_disagg(times: np.ndarray, prompt: np.ndarray, output: np.ndarray, costs: StepCosts,
               blocks: int, sched: LLMScheduler, spec: Any) -> tuple[LLMState, Trace]:
    """Serve on ``sched.prefill_npus`` + ``sched.decode_npus`` NPUs; one merged state."""
    trace = Trace()
    first = _prefill_pass(times, prompt, costs, sched.prefill_npus, spec.max_tokens, trace)
    kv_tok = costs.cfg.kv_bytes_per_token(costs.kv_bits)
    ready = first + prompt * kv_tok / spec.kv_link_bw
    landing = np.argsort(ready, kind="stable")
    landing = landing[output[landing] > 1]  # one-token requests end at their prefill
    merged = LLMState(times, prompt, output, blocks, spec.block, spec.max_seqs)
    merged.first_s[:] = merged.finish_s[:] = first
    merged.gen[:] = 1
    for d in range(sched.decode_npus):
        ids = landing[d::sched.decode_npus]
        if not len(ids):
            continue
        st, orig = _decode_npu(ids, ready, first, prompt, output, costs, blocks, spec, trace)
        for name in ("first_s", "finish_s", "gen", "max_gap", "preemptions"):
            getattr(merged, name)[orig] = getattr(st, name)
    merged.finished = merged.n
    trace.span_s = max(trace.span_s, float(np.nanmax(first)))
    return merged, trace
