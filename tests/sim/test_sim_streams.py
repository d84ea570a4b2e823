"""Closed-loop streams: request records, windows, entry points and bad input."""

from __future__ import annotations

import pytest

from npuweave.cost import LayerCost
from npuweave.errors import ConfigError, InfeasibleError, UnknownNameError
from npuweave.experiments.aimt_sweep import sweep_aimt, weighted_throughput
from npuweave.hardware import NPU
from npuweave.sim import run_streams, standalone_time
from npuweave.sim.streams import run_tenants
from npuweave.sim.tenants import tenants_for

NPU_ = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1.0, dram_bw=10.0, weight_buffer=100,
           act_buffer=1)
CNN = ("cnn", [LayerCost(compute_s=4.0, weight_bytes=10)] * 3)
NLP = ("nlp", [LayerCost(compute_s=0.5, weight_bytes=40)] * 2)


def test_standalone_time_by_hand():
    # cold: cnn: fetch 0-1, compute 1-5; next fetches overlap: 5-9, 9-13 -> 13 s
    assert standalone_time(CNN, NPU_, steady=False) == 13.0
    # cold: nlp: fetch 0-4, compute 4-4.5; fetch 4-8, compute 8-8.5
    assert standalone_time(NLP, NPU_, steady=False) == 8.5
    # steady state: cnn's next request's fetches hide under compute, period = 3 x 4 s
    assert standalone_time(CNN, NPU_) == 12.0
    # steady state: nlp's DMA never idles after the first request: 2 x 40 B / 10 B/s = 8 s
    # (r2 fetches 8-12 and 12-16, r3 16-20 and 20-24 -> finishes 8.5, 16.5, 24.5)
    assert standalone_time(NLP, NPU_) == 8.0


def test_closed_loop_reissues_at_finish():
    r = run_streams([CNN, NLP], NPU_, scheduler="layerweaver", requests=3)
    assert r.tenants == ("cnn", "nlp") and r.scheduler == "layerweaver"
    for label in r.tenants:
        recs = [q for q in r.requests if q.tenant == label]
        assert [q.index for q in recs] == [0, 1, 2]
        assert recs[0].arrival_s == 0.0
        for prev, cur in zip(recs, recs[1:]):
            assert cur.arrival_s == prev.finish_s
        assert all(q.arrival_s <= q.start_s < q.finish_s for q in recs)
    assert r.makespan_s == max(q.finish_s for q in r.requests)
    pe = [iv for iv in r.intervals if iv.resource == "PE"]
    assert r.pe_busy_s == pytest.approx(3 * (12.0 + 1.0)) == sum(iv.duration_s for iv in pe)
    assert r.dram_busy_s == pytest.approx(3 * (3.0 + 8.0))


def test_window_stops_issuing_at_the_window():
    r = run_streams([CNN, NLP], NPU_, scheduler="sequential", window_s=30.0)
    assert all(q.arrival_s < 30.0 for q in r.requests)
    assert max(q.finish_s for q in r.requests) >= 30.0  # the last ones run past the window
    longer = run_streams([CNN, NLP], NPU_, scheduler="sequential", window_s=60.0)
    assert len(longer.requests) > len(r.requests)


def test_batch_per_stream_is_recorded_and_duplicates_get_labels():
    r = run_streams([CNN, CNN], NPU_, batch=[1, 4], requests=1)
    assert r.tenants == ("cnn", "cnn#2")
    assert [q.batch for q in r.requests] == [1, 4]


def test_single_tenant_layerweaver_runs_with_failsafe_note():
    r = run_streams([CNN], NPU_, requests=2)
    assert len(r.requests) == 2 and any("failsafe" in n for n in r.notes)


def test_zoo_model_runs():
    from npuweave.hardware import preset

    r = run_streams(["resnet50"], preset("memory-centric"), requests=1)
    assert len(r.requests) == 1 and r.makespan_s > 0


@pytest.mark.parametrize("kwargs, match", [
    ({"requests": 0}, '"requests" must be an integer >= 1'),
    ({"window_s": 0.0}, '"window_s" must be a finite number of seconds > 0'),
    ({"window_s": float("inf")}, 'endless window'),
    ({"batch": [1]}, '"batch" lists 1 sizes for 2 models'),
    ({"batch": 0}, '"batch" must be an integer >= 1'),
])
def test_bad_config(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        run_streams([CNN, NLP], NPU_, **kwargs)


def test_no_models_and_unknown_scheduler():
    with pytest.raises(ConfigError, match="no models"):
        run_streams([], NPU_)
    with pytest.raises(UnknownNameError, match="choose one of: aimt, aimt-fetchahead, compute-only"):
        run_streams([CNN, NLP], NPU_, scheduler="weaver")


def test_layer_that_cannot_fit_even_after_tiling():
    tiny = NPU(name="tiny", pe_rows=8, pe_cols=8, clock_hz=1.0, dram_bw=10.0, weight_buffer=100,
               act_buffer=1)  # smallest tile: 8 x 8 x 2 B = 128 B > 100 // 2
    with pytest.raises(InfeasibleError, match="layer 'L1'"):
        run_streams([("m", [LayerCost(compute_s=1.0, weight_bytes=10),
                            LayerCost(compute_s=1.0, weight_bytes=1000)])], tiny, requests=1)


def test_sweep_aimt_reports_best_setting():
    s = sweep_aimt([CNN, NLP], NPU_, mems=(0.0, 0.1, 0.3), dists=(0.2, 0.5), requests=2)
    assert len(s.rows) == 6  # every (mem, dist): no ordering constraint between the two
    assert s.score == max(row[2] for row in s.rows)
    assert (s.mem, s.dist, s.score) in s.rows


def test_sweep_score_uses_the_steady_state_normalizer_of_stp():
    # cnn alone, 3 requests: cold 13 s, then 12 s each -> makespan 37 s. Weighted throughput
    # = 3 x 12 s (steady standalone) / 37 s; the cold time (13 s) would score a model alone
    # above 1 (39 / 37).
    ts = tenants_for([CNN], NPU_, 1)
    run = run_tenants(ts, NPU_.weight_buffer, NPU_.dram_bw, "sequential", 3)
    assert run.makespan_s == 37.0
    assert weighted_throughput(ts, NPU_.weight_buffer, NPU_.dram_bw)(run) == 36.0 / 37.0
