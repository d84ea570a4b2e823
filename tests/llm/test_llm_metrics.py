"""LLM metrics by hand, the docstring examples of the LLM modules, disaggregation's invariants,
and the capacity search."""

import doctest
import importlib

import numpy as np
import pytest

from npuweave.metrics.llm import SLO, llm_summary, slo_met
from npuweave.sim.llm import Lengths, LLMServeSpec, serve_llm
from tests.llm.conftest import toy_npu

MODULES = ["npuweave.workload.llm", "npuweave.sim.llm.costs", "npuweave.sim.llm.interleave",
           "npuweave.sim.llm.policies", "npuweave.sim.llm.serve", "npuweave.metrics.llm",
           "npuweave.sim.llm.options", "npuweave.experiments.llm_capacity"]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


def test_summary_by_hand():
    # two requests: arrivals 0 and 1 s, first tokens 0.5 and 1.2 s, both end with 3 tokens
    row = llm_summary(np.array([0.0, 1.0]), np.array([0.5, 1.2]), np.array([1.0, 2.0]),
                      np.array([3, 3]), np.array([0.3, 0.45]), np.array([0.2, 0.3, 0.35, 0.45]),
                      span_s=2.0, slo=SLO(ttft_s=0.4, tbt_s=0.4, tbt_pct=50.0))
    assert row["ttft_p50_s"] == pytest.approx(0.35)     # (0.5 + 0.2) / 2
    assert row["tbt_p50_s"] == pytest.approx(0.325)     # median of the four gaps
    assert row["tokens_per_s"] == 3.0                   # 6 tokens in 2 s
    assert row["goodput_rps"] == 0.0                    # r0: TTFT 0.5 > 0.4; r1: gap 0.45 > 0.4
    assert row["e2e_p50_s"] == pytest.approx(1.0)
    assert slo_met(row, SLO(tbt_s=0.4, tbt_pct=50.0))
    assert not slo_met(row, SLO(tbt_s=0.3, tbt_pct=50.0))


@pytest.mark.parametrize("sched", ["disagg:1+1", "disagg:2+3"])
def test_disaggregation_ends_every_request_once(sched):
    spec = LLMServeSpec("llm-tiny", toy_npu(30), 400.0, 0.1, Lengths("uniform", 40, lo=1, hi=80),
                        Lengths("uniform", 20, lo=1, hi=40), sched, cost_model="roofline")
    res = serve_llm(spec)
    rec = res.records
    assert np.isfinite(rec["e2e_s"]).all() and (rec["e2e_s"] >= rec["ttft_s"]).all()
    assert (rec["ttft_s"] > 0).all()
    # the first decode gap includes the KV transfer: no gap is zero or negative
    assert (res.trace.tbt() > 0).all()
    assert res.row["requests"] == len(rec["id"])
    assert max(res.trace.kv_blocks) <= res.kv_total_blocks


def test_transfer_is_priced():
    base = dict(model="llm-tiny", npu=toy_npu(), qps=5.0, duration_s=1.0,
                prompt=Lengths("fixed", 256), output=Lengths("fixed", 4),
                scheduler="disagg:1+1", cost_model="roofline")
    fast = serve_llm(LLMServeSpec(**base, kv_link_bw=1e12)).trace.tbt().max()
    slow = serve_llm(LLMServeSpec(**base, kv_link_bw=1e6)).trace.tbt().max()
    # 256 tokens x 1024 B of KV over 1 MB/s adds 0.262 s to the first decode gap
    assert slow - fast == pytest.approx(256 * 1024 / 1e6 - 256 * 1024 / 1e12, rel=1e-6)
