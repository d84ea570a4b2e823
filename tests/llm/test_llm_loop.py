"""The LLM serving loop: a two-request Orca timeline, and properties of random runs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.sim.llm import StepCosts
from npuweave.sim.llm.loop import run
from npuweave.sim.llm.policies import parse_llm_scheduler
from npuweave.sim.llm.state import LLMState
from npuweave.workload.llm import get_llm
from tests.llm.conftest import toy_npu


def _state(arrival, prompt, output, blocks=1000):
    return LLMState(np.array(arrival, float), np.array(prompt), np.array(output), blocks, 16)


def test_two_request_orca_timeline():
    """r0 (prompt 16, 3 tokens) at 0; r1 (prompt 16, 2 tokens) at 1 ms. Orca:
    it1 prefill r0 -> r0 token 0; it2 decode r0 (context 17) + prefill r1 -> r0 token 1,
    r1 token 0; it3 decode r0 (18) and r1 (17) -> r0 token 2 (done), r1 token 1 (done)."""
    sc = StepCosts("llm-tiny", toy_npu(), cost_model="roofline")
    s = _state([0.0, 1e-3], [16, 16], [3, 2])
    trace = run(s, sc, parse_llm_scheduler("orca"), log=True)
    it1 = sc.iteration([(16, 0)], []).time_s                      # 2.895872 ms (hand-worked)
    assert it1 == pytest.approx(2.895872e-3)
    t1 = it1
    t2 = t1 + sc.iteration([(16, 0)], [17]).time_s
    t3 = t2 + sc.iteration([], [18, 17]).time_s
    assert trace.tokens == [(t1, 0, 0), (t2, 0, 1), (t2, 1, 0), (t3, 0, 2), (t3, 1, 1)]
    assert s.first_s.tolist() == [t1, t2]
    assert s.finish_s.tolist() == [t3, t3]
    assert trace.iterations == 3 and trace.span_s == t3
    assert sorted(trace.tbt().tolist()) == sorted([t2 - t1, t3 - t2, t3 - t2])


def test_vllm_pauses_decodes_for_a_prefill():
    sc = StepCosts("llm-tiny", toy_npu(), cost_model="roofline")
    s = _state([0.0, 1e-3], [16, 16], [3, 2])
    trace = run(s, sc, parse_llm_scheduler("vllm"), log=True)
    t1 = sc.iteration([(16, 0)], []).time_s
    t2 = t1 + sc.iteration([(16, 0)], []).time_s   # r1's prefill alone; r0 waits
    assert trace.tokens[:2] == [(t1, 0, 0), (t2, 1, 0)]


SCHEDULERS = ["orca", "vllm", "sarathi:chunk=32", "layerweaver"]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 10**6), blocks=st.integers(12, 40),
       sched=st.sampled_from(SCHEDULERS), swap=st.booleans())
def test_properties_of_random_runs(n, seed, blocks, sched, swap):
    rng = np.random.default_rng(seed)
    arrival = np.sort(rng.uniform(0, 0.02, n))
    prompt, output = rng.integers(1, 120, n), rng.integers(1, 60, n)
    sc = StepCosts("llm-tiny", toy_npu(blocks), cost_model="roofline")
    s = LLMState(arrival, prompt, output, blocks, 16)
    trace = run(s, sc, parse_llm_scheduler(sched), swap=swap, log=True)
    # every request ends once, with all its tokens
    assert s.finished == n and np.isfinite(s.finish_s).all()
    assert (s.gen == output).all()
    # tokens come in order, one per step: indices 0..output-1, times strictly increasing
    by_req: dict[int, list[tuple[float, int]]] = {}
    for t, r, k in trace.tokens:
        by_req.setdefault(r, []).append((t, k))
    for r in range(n):
        toks = by_req[r]
        assert [k for _, k in toks] == list(range(output[r]))
        assert all(a[0] < b[0] for a, b in zip(toks, toks[1:]))
        assert toks[0][0] >= arrival[r]
    # the KV cache never holds more blocks than it has, and everything is returned at the end
    assert max(trace.kv_blocks) <= blocks
    assert s.free_blocks == blocks


@settings(max_examples=30, deadline=None)
@given(new=st.integers(1, 2048), batch=st.integers(1, 64), ctx=st.integers(1, 4000))
def test_interleaving_is_never_worse_than_serial(new, batch, ctx):
    """Layerweaver on phases: both streams end no later than prefill-then-decode, and no
    stream ends before its own standalone time."""
    from npuweave.hardware import preset
    from npuweave.sim.llm.costs import step_costs
    from npuweave.sim.llm.interleave import interleave

    sc = step_costs(get_llm("llama-3-8b"), preset("tpuv5e-like"), "systolic-ws-db", None, None,
                    16)
    p, d = sc.iteration([(new, 0)], []), sc.iteration([], [ctx] * batch)
    end_p, end_d = interleave(sc, p, d)
    assert max(end_p, end_d) <= p.time_s + d.time_s + 1e-12
    assert end_p >= p.time_s - 1e-12 and end_d >= d.time_s - 1e-12
