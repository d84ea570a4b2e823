"""``serve`` (arrivals to table), Triton-style batching, the registry's two levels."""

from __future__ import annotations

import math

import pytest

from npuweave.cost import LayerCost
from npuweave.errors import ConfigError, UnknownNameError
from npuweave.fileio.flags import Batching
from npuweave.hardware import NPU
from npuweave.schedule import get_scheduler, schedulers
from npuweave.schedule.registry import scheduler_level
from npuweave.sim.arrivals import make_arrivals
from npuweave.sim.serving import serve

NPU_ = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1.0, dram_bw=10.0, weight_buffer=100,
           act_buffer=100)
A = ("a", [LayerCost(compute_s=2.0, weight_bytes=10)])          # fetch 1 s, compute 2 s
B = ("b", [LayerCost(compute_s=0.5, weight_bytes=20)] * 2)      # fetch 2 s each, compute 0.5


def test_serve_fcfs_table_worked_by_hand():
    # a@0: fetch 0-1, compute 1-3. b@0.5 queued; a fully dispatched at 1, so b's first fetch
    # runs 1-3, compute 3-3.5; b's second fetch 3-5, compute 5-5.5. Cold isolated: a 3 s,
    # b: fetch 0-2, compute 2-2.5, fetch 2-4, compute 4-4.5 = 4.5 s.
    arr = make_arrivals([0.0, 0.5], [0, 1], ("a", "b"), priority=[1, 9],
                        deadline_s=[5.0, 1.0])
    r = serve([A, B], NPU_, arr, "fcfs", traffic=False)
    t = r.table
    assert t.finish_s.tolist() == [3.0, 5.5]
    assert t.start_s.tolist() == [1.0, 3.0]
    assert t.isolated_s.tolist() == [3.0, 4.5]
    assert t.deadline_s.tolist() == [5.0, 1.5]
    whole = r.rows[0]
    assert whole["served"] == 2 and whole["deadline_violation"] == 0.5  # b misses 1.5 s
    assert r.pe_busy_s == 3.0 and r.span_s == 5.5


def test_hpf_preemptive_preempts_the_low_priority_request():
    # b (prio 1) at 0: b0 fetch 0-2. a (prio 9) at 0.5 preempts b before any unit of b has
    # started, so b0's computation is taken back (its fetch goes on to 2 and is discarded; the
    # checkpoint is empty). a: fetch 2-3, compute 3-5. b resumes at unit 0: b0 fetch 3-5,
    # compute 5-5.5; b1 fetch 5-7, compute 7-7.5.
    arr = make_arrivals([0.0, 0.5], [0, 1], ("b", "a"), priority=[1, 9])
    r = serve([B, A], NPU_, arr, "hpf-p", traffic=False)
    assert r.table.preemptions.tolist() == [1, 0]
    assert r.table.finish_s.tolist() == [7.5, 5.0]


def test_batched_requests_share_their_batch_times():
    arr = make_arrivals([0.0, 0.1, 0.2], [0, 0, 0], ("a",))
    r = serve([A], NPU_, arr, "fcfs", batching=Batching(0.5, 2), traffic=False)
    t = r.table
    assert t.finish_s[0] == t.finish_s[1] != t.finish_s[2]
    # the batch of two formed when the second arrived (it was full): fetch 0.1-1.1,
    # compute 1.1-3.1; request 2 waits for the model, then for its window (0.2 + 0.5 = 0.7
    # has passed at 1.1, the next decision): fetch 1.1-2.1, compute 3.1-5.1
    assert t.start_s.tolist() == [1.1, 1.1, 3.1]
    assert t.finish_s.tolist() == [3.1, 3.1, 5.1]


def test_serve_rejects_mismatched_models():
    arr = make_arrivals([0.0], [0], ("a", "b"))
    with pytest.raises(ConfigError, match="models"):
        serve([A], NPU_, arr, "fcfs")


def test_registry_lists_both_levels():
    assert set(schedulers("all")) == set(schedulers("layer")) | set(schedulers("task"))
    assert not set(schedulers("layer")) & set(schedulers("task"))
    assert scheduler_level("layerweaver") == "layer" and scheduler_level("rr") == "task"
    assert get_scheduler("sjf-p").preemptive and not get_scheduler("sjf").preemptive
    with pytest.raises(UnknownNameError):
        scheduler_level("nope")
    with pytest.raises(ConfigError, match="quantum_s"):
        get_scheduler("rr", quantum_s=math.inf)
    with pytest.raises(ConfigError, match="mechanism"):
        get_scheduler("hpf-p", mechanism="pause")


def test_a_layer_policy_that_overrides_decide_runs_like_select():
    from npuweave.schedule import make_tenant
    from npuweave.schedule.layerweaver import Layerweaver
    from npuweave.schedule.protocol import Dispatch
    from npuweave.sim.serve import Simulator

    seen = []

    class Viewing(Layerweaver):  # what Layerweaver+ will do: read the view, then dispatch
        def decide(self, now, view):
            seen.append((now, len(view.queued), len(view.running)))
            assert all(r.arrival_s <= now for r in [*view.queued, *view.running])
            return Dispatch(self.select(view.board))

    ts = [make_tenant("a", [4.0, 1.0], [10, 50], 100), make_tenant("b", [0.5, 0.5], [40, 40],
                                                                     100)]
    rows = [(0.3 * i, i % 2, 1, math.inf) for i in range(30)]
    logs = []
    for pol in (Layerweaver(), Viewing()):
        sim = Simulator(ts, 100, 10.0, pol, arrivals=rows, log=True)
        sim.run()
        logs.append(sim.engine.pe_log)
    assert logs[0] == logs[1] and len(logs[0]) == 60 and len(seen) == 60
