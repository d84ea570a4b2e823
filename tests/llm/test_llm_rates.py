"""The rates of an LLM run, and so of every capacity probe, by hand (docs/LLM_SERVING.md,
"Rates of a run").

A probe's verdict is its percentiles, never a rate (Sarathi-Serve's and Vidur's capacity
searches: the largest offered QPS whose quantiles meet the SLO; MLPerf LoadGen's Server
scenario: the load of a run whose latency percentile is met). The rates follow LoadGen's Server
log: ``offered_rps`` is its "scheduled samples per second", (N - 1) / time of the last arrival;
``throughput_rps``, ``goodput_rps`` and ``tokens_per_s`` are its "completed" rates, over
[0, last token], the drain after the last arrival included (LoadGen divides N - 1 completed
samples by that span, we divide all N; its tokens/s divides all tokens, as ours does).
"""

import numpy as np
import pytest

from npuweave.metrics.llm import SLO, llm_summary
from npuweave.sim.llm import Lengths, LLMServeSpec, serve_llm
from tests.llm.conftest import toy_npu


def test_rates_by_hand():
    # arrivals 0.5, 1 and 2 s; the last request drains until 6 s (the run's last token)
    arrival = np.array([0.5, 1.0, 2.0])
    first = np.array([0.7, 1.5, 2.2])            # TTFT 0.2, 0.5, 0.2
    finish = np.array([1.5, 2.5, 6.0])
    gaps = np.array([0.1, 0.2, 0.3, 1.0])
    row = llm_summary(arrival, first, finish, np.array([4, 3, 10]), np.array([0.1, 0.3, 1.0]),
                      gaps, span_s=6.0, slo=SLO(ttft_s=0.3, tbt_s=0.5))
    assert row["span_s"] == 6.0
    assert row["offered_rps"] == pytest.approx(1.0)       # (3 - 1) / 2.0 s
    assert row["throughput_rps"] == pytest.approx(0.5)    # 3 / 6 s, drain included
    assert row["goodput_rps"] == pytest.approx(1 / 6)     # r0 only: r1 TTFT 0.5, r2 gap 1.0
    assert row["tokens_per_s"] == pytest.approx(17 / 6)
    assert row["slo_attainment"] == pytest.approx(1 / 3)


def test_one_request_has_no_offered_rate():
    row = llm_summary(np.array([0.0]), np.array([0.1]), np.array([0.2]), np.array([2]),
                      np.array([0.1]), np.array([0.1]), span_s=0.2)
    assert row["offered_rps"] is None and row["throughput_rps"] == pytest.approx(5.0)


def test_span_is_the_last_token_of_a_run():
    # three requests from a trace; the run's span is the last token, drain included
    spec = LLMServeSpec("llm-tiny", toy_npu(), 1.0, 1.0, Lengths("fixed", 8), Lengths("fixed", 8),
                        "orca", cost_model="roofline",
                        requests=((0.0, 32, 8), (0.01, 16, 4), (0.02, 64, 16)))
    res = serve_llm(spec)
    last = float(np.max(res.records["arrival_s"] + res.records["e2e_s"]))
    assert res.row["span_s"] == pytest.approx(last) and last > 0.02
    assert res.row["throughput_rps"] == pytest.approx(3 / last)
    assert res.row["offered_rps"] == pytest.approx(2 / 0.02)


def test_capacity_stops_halving_before_empty_probes():
    """An SLO no load meets: the search halves from the start load and stops once a probe
    would expect fewer than 10 requests (it used to halve until a probe drew none and then
    failed with "no request arrives ... raise --qps", options capacity does not have)."""
    from npuweave.experiments.llm_capacity import MIN_REQUESTS, capacity_llm

    spec = LLMServeSpec("llm-tiny", toy_npu(), 50.0, 0.2, Lengths("fixed", 8), Lengths("fixed", 4),
                        "vllm", cost_model="roofline", slo=SLO(tbt_s=1e-12, tbt_pct=99.0))
    out = capacity_llm(spec)
    # 50/s x 0.2 s = 10 requests: probed, fails; 25/s x 0.2 s = 5 < 10: not probed
    assert MIN_REQUESTS == 10
    assert [p["qps"] for p in out["probes"]] == [50.0] and out["capacity_qps"] == 0.0
    assert "no load met the SLO" in out["note"]
