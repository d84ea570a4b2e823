"""The LLM serving loop on one NPU: iteration by iteration, the policy decides, the loop prices.

Each turn: requests that have arrived join the waiting queue; the policy (``policies.plan``)
admits some and picks prefill chunks and whether the decodes run; the loop makes room in the
KV cache (preempting when a decode step needs blocks that are not free), prices the iteration
with ``StepCosts`` and advances the clock. Decode tokens and finished prefills land at the end
of the iteration (for ``layerweaver``, at the end of their own stream). With nothing to run
the clock jumps to the next arrival.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from npuweave.sim.llm.costs import StepCost, StepCosts
from npuweave.sim.llm.interleave import interleave
from npuweave.sim.llm.policies import LLMScheduler, Plan, plan
from npuweave.sim.llm.state import LLMState

PHASES = ("prefill", "decode", "mixed")


@dataclass(slots=True)
class Trace:
    """What a run leaves besides the request arrays: token gaps, KV use, busy time per phase.

    ``kv_t``/``kv_blocks``: used KV blocks after each iteration. ``phase``: per phase name,
    ``[wall seconds, PE-busy seconds, DRAM-busy seconds, iterations]``. ``tokens``: when
    logging, one ``(time, request, token index)`` per produced token.
    """

    gaps: list[np.ndarray] = field(default_factory=list)
    kv_t: list[float] = field(default_factory=list)
    kv_blocks: list[int] = field(default_factory=list)
    phase: dict[str, list[float]] = field(
        default_factory=lambda: {p: [0.0, 0.0, 0.0, 0.0] for p in PHASES})
    stall_s: float = 0.0
    iterations: int = 0
    tokens: list[tuple[float, int, int]] | None = None
    span_s: float = 0.0
    #: when logging, one ``(start, wall, phase, PE seconds, DRAM seconds)`` per iteration
    iters: list[tuple[float, float, str, float, float]] | None = None

    def tbt(self) -> np.ndarray:
        """Every gap between consecutive tokens of one request, in seconds."""
        return np.concatenate(self.gaps) if self.gaps else np.zeros(0)


def _make_room(st: LLMState, decode: bool, swap: bool, kv_bytes_token: int,
               swap_bw: float) -> tuple[int, int, float]:
    """Preempt until the decode step's new blocks fit; ``(batch size, new blocks, swap s)``."""
    dec = st.decoding
    stall = 0.0
    while decode:
        need = int(np.count_nonzero(dec.kv[:dec.n] % st.block == 0))
        if need <= st.free_blocks or not dec.n:
            return dec.n, need, stall
        r = st.preempt_last(swap)
        if swap:
            stall += int(st.kv[r]) * kv_bytes_token / swap_bw
    return 0, 0, stall


def _decode(st: LLMState, n: int, need: int, t: float, trace: Trace) -> None:
    dec = st.decoding
    dec.kv[:n] += 1
    st.free_blocks -= need
    gen = dec.gen[:n]
    gen += 1
    last = dec.last[:n]
    gaps = t - last
    last[:] = t
    np.maximum(dec.maxgap[:n], gaps, out=dec.maxgap[:n])
    trace.gaps.append(gaps)
    if trace.tokens is not None:
        trace.tokens.extend((t, int(r), int(g) - 1) for r, g in zip(dec.ids[:n], gen))
    done = gen >= dec.out[:n]
    if done.any():
        st.finish_decoded(done, t)


def _prefill(st: LLMState, chunks: list[tuple[int, int]], t: float, trace: Trace) -> None:
    for r, n in chunks:
        st.done[r] += n
        if st.done[r] >= st.target[r]:
            gap = st.prefilled(r, t)
            if gap == gap:
                trace.gaps.append(np.array([gap]))
            if trace.tokens is not None:
                trace.tokens.append((t, r, int(st.gen[r]) - 1))


def _account(trace: Trace, name: str, wall: float, cost: StepCost) -> None:
    acc = trace.phase[name]
    acc[0] += wall
    acc[1] += cost.compute_s
    acc[2] += cost.memory_s
    acc[3] += 1


def _price(costs: StepCosts, st: LLMState, p: Plan, n: int,
           sched: LLMScheduler) -> tuple[float, float, float, StepCost]:
    """``(wall, prefill end, decode end, combined cost)`` of the planned iteration."""
    pre = [(k, int(st.done[r])) for r, k in p.prefill]
    att_ctx = st.decoding.kv[:n] + 1
    if sched.name == "layerweaver" and pre and n:
        cp, cd = costs.iteration(pre, []), costs.iteration([], att_ctx)
        end_p, end_d = interleave(costs, cp, cd)
        both = StepCost(max(end_p, end_d), cp.compute_s + cd.compute_s,
                        cp.memory_s + cd.memory_s, cp.dram_bytes + cd.dram_bytes)
        return both.time_s, end_p, end_d, both
    cost = costs.iteration(pre, att_ctx)
    return cost.time_s, cost.time_s, cost.time_s, cost


def run(st: LLMState, costs: StepCosts, sched: LLMScheduler, max_tokens: int = 4096,
        swap: bool = False, swap_bw: float = 32e9, log: bool = False) -> Trace:
    """Serve every request of ``st`` to its last token; returns the ``Trace``."""
    trace = Trace(tokens=[] if log else None, iters=[] if log else None)
    kv_tok = costs.cfg.kv_bytes_per_token(costs.kv_bits)
    now = 0.0
    while st.finished < st.n:
        st.arrive(now)
        p = plan(sched, st, max_tokens)
        n, need, stall = _make_room(st, p.decode, swap, kv_tok, swap_bw)
        stall += st.swap_in_tokens * kv_tok / swap_bw
        st.swap_in_tokens = 0
        if not p.prefill and not n:
            if st.next_arrival >= st.n:
                raise AssertionError("LLM serving loop stalled with requests left")
            now = max(now, float(st.arrival_s[st.next_arrival]))
            continue
        wall, end_p, end_d, cost = _price(costs, st, p, n, sched)
        start = now + stall
        now = start + wall
        trace.stall_s += stall
        trace.iterations += 1
        phase = "mixed" if p.prefill and n else "prefill" if p.prefill else "decode"
        _account(trace, phase, wall, cost)
        if trace.iters is not None:
            trace.iters.append((start, wall, phase, cost.compute_s, cost.memory_s))
        if n:
            _decode(st, n, need, start + end_d, trace)
        _prefill(st, p.prefill, start + end_p, trace)
        trace.kv_t.append(now)
        trace.kv_blocks.append(st.used_blocks())
    trace.span_s = now
    return trace
