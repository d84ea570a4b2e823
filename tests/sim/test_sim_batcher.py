"""Triton-style dynamic batching: the ``Batcher`` rule, ``serve`` with batching, slots.

Toy NPU: 10 B/s, 100 B buffer; a unit of 10 B fetches in 1 s. Plain-cost models cost the same
at every batch size, so the times below are worked by hand from the unit costs.
"""

from __future__ import annotations

import pytest

from npuweave.cost import LayerCost
from npuweave.errors import ConfigError
from npuweave.fileio.flags import Batching
from npuweave.hardware import NPU
from npuweave.sim.arrivals import make_arrivals
from npuweave.sim.batcher import Batcher, inflight_slots
from npuweave.sim.serving import serve

NPU_ = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1.0, dram_bw=10.0, weight_buffer=100,
           act_buffer=100)
TWO = ("a", [LayerCost(compute_s=2.0, weight_bytes=10)] * 2)   # two units: fetch 1 s, compute 2 s
ONE = ("a", [LayerCost(compute_s=2.0, weight_bytes=10)])       # one unit


def test_batcher_takes_up_to_max_and_waits_at_most_the_window() -> None:
    b = Batcher([0.0, 0.1, 0.2, 0.3, 0.35], [0, 0, 0, 0, 1], 2, window_s=0.25, max_batch=2)
    assert b.admit(0.05) == [] and b.wake(0.05) == 0.1        # next arrival before 0.25
    assert b.admit(0.1) == [(0, 0, [0, 1])]                  # full: goes at once
    assert b.admit(0.3) == [] and b.wake(0.3) == 0.35         # model 0's slot is busy
    b.free(0, 0)
    assert b.admit(0.31) == [(0, 0, [2, 3])]                 # 2 queued = max
    assert b.admit(0.5) == [] and b.wake(0.5) == 0.6          # model 1: 0.35 + 0.25
    assert b.admit(0.6) == [(1, 0, [4])] and b.done


def test_batcher_slots_hold_several_batches_of_one_model() -> None:
    b = Batcher([0.0, 0.1, 0.2], [0, 0, 0], 1, window_s=0.0, max_batch=4, slots=2)
    assert b.admit(0.0) == [(0, 0, [0])]
    assert b.admit(0.15) == [(0, 1, [1])]                    # the second slot
    assert b.admit(0.2) == [] and b.wake(0.2) is None         # both busy
    b.free(0, 1)
    assert b.admit(0.2) == [(0, 1, [2])]


@pytest.mark.parametrize("kw, match", [
    ({"max_batch": 0}, "max batch"), ({"window_s": -1.0}, "window"),
    ({"window_s": float("inf")}, "window"), ({"slots": 0}, "in flight")])
def test_batcher_rejects_bad_settings(kw, match) -> None:
    with pytest.raises(ConfigError, match=match):
        Batcher([0.0], [0], 1, **kw)


def test_inflight_slots_names_the_option() -> None:
    with pytest.raises(ConfigError, match="--grouping"):
        inflight_slots(object(), "per-batch")
    with pytest.raises(ConfigError, match="--max-inflight"):
        inflight_slots(object(), "per-request", 0)
    assert inflight_slots(object()) == 1 and inflight_slots(object(), "per-request", 3) == 3


def test_layerwise_serve_merges_requests_queued_while_the_model_is_busy() -> None:
    """Window 0, max 2, arrivals 0, 0.5, 1.5, 2.5 of a two-unit model (``sequential``).

    Request 0 forms at 0: fetches 0-1, 1-2; computes 1-3, 3-5. Its last unit goes out at the
    decision at 1, so at the next decision (2) the model is free: 1 and 2 (queued meanwhile)
    go as one batch, fetches 2-3, 3-4, computes 5-7, 7-9. Request 3 (2.5) waits for the
    decision at 4: fetches 4-5, 5-6, computes 9-11, 11-13. Arrival-time batching with window
    0 would have run all four alone (finishes 5, 9, 13, 17).
    """
    arr = make_arrivals([0.0, 0.5, 1.5, 2.5], [0, 0, 0, 0], ("a",))
    r = serve([TWO], NPU_, arr, "sequential", batching=Batching(0.0, 2), traffic=False)
    assert r.table.finish_s.tolist() == [5.0, 9.0, 9.0, 13.0]
    assert r.table.start_s.tolist() == [1.0, 5.0, 5.0, 9.0]
    alone = serve([TWO], NPU_, arr, "sequential", traffic=False)   # --batching none
    assert alone.table.finish_s.tolist() == [5.0, 9.0, 13.0, 17.0]


def test_serve_waits_for_the_window_then_for_the_max() -> None:
    """Window 0.5, max 4, arrivals 0 and 0.3 (one unit): the oldest waits until 0.5, so both
    go together: fetch 0.5-1.5, compute 1.5-3.5. Window 10 s, max 2, arrivals 0, 0.2, 0.4:
    0 and 1 go at 0.2 (full): fetch 0.2-1.2, compute 1.2-3.2; request 2 then waits its whole
    window (0.4 + 10): fetch 10.4-11.4, compute 11.4-13.4."""
    arr = make_arrivals([0.0, 0.3], [0, 0], ("a",))
    r = serve([ONE], NPU_, arr, "layerweaver", batching=Batching(0.5, 4), traffic=False)
    assert r.table.finish_s.tolist() == [3.5, 3.5]
    arr = make_arrivals([0.0, 0.2, 0.4], [0, 0, 0], ("a",))
    for name in ("layerweaver", "fcfs"):  # layer-wise and task-level policies alike
        r = serve([ONE], NPU_, arr, name, batching=Batching(10.0, 2), traffic=False)
        assert r.table.finish_s.tolist() == pytest.approx([3.2, 3.2, 13.4], abs=1e-12)


def test_per_request_grouping_serves_two_requests_of_one_model_at_once() -> None:
    """``layerweaver-plus``, no batching, loose deadlines, the two-unit model at 0 and 0.5.
    Per model FIFO: request 0 fetches 0-1, 1-2, computes 1-3, 3-5; request 1 fetches 2-3,
    3-4, computes 5-7, 7-9. Per request (2 slots) request 1 is a candidate at the decision
    at 1, beside request 0's second unit: both cost the same, so the earlier deadline
    (request 0's) wins and the times are the same."""
    arr = make_arrivals([0.0, 0.5], [0, 0], ("a",), deadline_s=[100.0, 100.0])
    fifo = serve([TWO], NPU_, arr, "layerweaver-plus", traffic=False)
    per = serve([TWO], NPU_, arr, "layerweaver-plus", traffic=False, grouping="per-request",
                max_inflight=2)
    assert fifo.table.finish_s.tolist() == [5.0, 9.0]
    assert per.table.finish_s.tolist() == [5.0, 9.0]
    assert any("2 batches of one model" in n for n in per.notes)


def test_per_request_lets_a_tight_deadline_overtake_its_own_model() -> None:
    """Two-unit model; request 0 (t=0, deadline 100) and request 1 (t=0.5, deadline 5.5).
    Per model FIFO request 1 waits behind request 0 (finishes 5 and 9: request 1 misses).
    Per request it is a candidate at the decision at 1 (now 1, S[t_c] 3): both candidates
    fetch 1-2 and compute 3-5, so Mode 1 picks the earlier deadline, request 1 (its slack
    5.5 - 3 = 2.5 is also below its approx remaining 2 + 2 = 4: Mode 2 agrees). At 2 its
    second unit again beats request 0's (fetch 2-3, compute 5-7); request 0's second unit
    fetches 3-4 and computes 7-9. Request 1 finishes 2 s earlier (7)."""
    arr = make_arrivals([0.0, 0.5], [0, 0], ("a",), deadline_s=[100.0, 5.0])
    fifo = serve([TWO], NPU_, arr, "layerweaver-plus", traffic=False)
    per = serve([TWO], NPU_, arr, "layerweaver-plus", traffic=False, grouping="per-request",
                max_inflight=2)
    assert fifo.table.finish_s.tolist() == [5.0, 9.0]
    assert per.table.finish_s.tolist() == [9.0, 7.0]


def test_inherit_works_without_batching_too() -> None:
    """``inherit`` needs the model queue, so ``serve`` runs the batcher (batches of one) for it:
    the hand-worked case of ``tests/lwplus/test_lwplus_grouping.py`` on the engine."""
    a = ("a", [LayerCost(compute_s=1.0, weight_bytes=10), LayerCost(compute_s=1.0,
                                                                     weight_bytes=30)])
    b = ("b", [LayerCost(compute_s=3.0, weight_bytes=10)])
    arr = make_arrivals([0.0, 0.1, 0.2], [0, 1, 0], ("a", "b"), deadline_s=[9.0, 100.0, 9.0])
    off = serve([a, b], NPU_, arr, "layerweaver-plus", traffic=False)
    on = serve([a, b], NPU_, arr, "layerweaver-plus", traffic=False, inherit=True)
    assert off.table.finish_s.tolist() == [6.0, 5.0, 10.0]
    assert on.table.finish_s.tolist() == [5.0, 12.0, 9.0]
