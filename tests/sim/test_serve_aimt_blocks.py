"""AI-MT serves its merged sub-layer blocks in open-arrival runs, as ``plan`` runs them in a
closed loop (before, ``serve --scheduler aimt`` ran whole layers)."""

from __future__ import annotations

import numpy as np

from npuweave.cost import LayerCost
from npuweave.hardware import toy_npu
from npuweave.schedule.aimt import AIMT
from npuweave.schedule.plan import plan
from npuweave.sim.arrivals import make_arrivals
from npuweave.sim.lwserve import serve_layerwise
from npuweave.sim.serving import serve
from npuweave.sim.units import Footprint

ONE = ("m", [LayerCost(compute_s=6.0, weight_bytes=60)])


def test_one_request_runs_three_blocks_hand_worked() -> None:
    """Toy NPU (100 B buffer, 10 B/s), merge 1/4: blocks of at most 25 B, so the 60-byte
    layer becomes three 20-byte blocks of 2 s each. Fetch 0-2, 2-4, 4-6; compute 2-4, 4-6,
    6-8: the request finishes at 8 s (the whole layer: fetch 0-6, compute 6-12)."""
    r = serve([ONE], toy_npu(), make_arrivals([0.0], [0], ("m",)), "aimt", merge=0.25,
              traffic=False, log=True)
    assert r.table.finish_s.tolist() == [8.0]
    pe = [iv.unit for iv in r.intervals if iv.resource == "PE"]
    assert len(pe) == 3 and all("#b" in u for u in pe)


def test_serve_and_plan_run_the_same_blocks() -> None:
    """One request of one model alone: the open-arrival engine and ``plan`` give the same
    units and the same finish time."""
    model = ("m", [LayerCost(compute_s=3.0, weight_bytes=70),
                   LayerCost(compute_s=1.0, weight_bytes=10),
                   LayerCost(compute_s=5.0, weight_bytes=90)])
    npu = toy_npu()
    r = serve([model], npu, make_arrivals([0.0], [0], ("m",)), "aimt", merge=0.125,
              traffic=False, log=True)
    from npuweave.schedule.tiling import make_tenant

    t = make_tenant("m", [3.0, 1.0, 5.0], [70, 10, 90], npu.weight_buffer)
    s = plan(AIMT(merge=0.125), [t], npu.weight_buffer, npu.dram_bw)
    pe = [iv for iv in r.intervals if iv.resource == "PE"]
    blocks = AIMT(merge=0.125).units([t], npu.weight_buffer, npu.dram_bw)[0].units
    assert [iv.unit for iv in pe] == list(blocks) and len(blocks) > 3
    assert r.table.finish_s.tolist() == [s.makespan_s]


def test_the_predictor_loop_serves_the_blocks_too() -> None:
    """``serve_layerwise`` (the capacity searches' reference loop) and the engine agree on
    AI-MT's blocks (arrivals off any decision time)."""
    from npuweave.schedule.base import Tenant
    from npuweave.sim.serve import Simulator

    a = Tenant("a", ("x", "y"), (4.0, 1.0), (60, 20))
    b = Tenant("b", ("z",), (0.5,), (45,))
    times = np.array([0.0, 0.31, 2.17, 5.03])
    models = np.array([0, 1, 0, 1])
    fast = serve_layerwise([[a], [b]], 100, 10.0, times, models, [50.0, 50.0],
                           AIMT(merge=0.25))
    rows = [(float(x), int(m), 1, float(x) + 50.0) for x, m in zip(times, models)]
    sim = Simulator([a, b], 100, 10.0, AIMT(merge=0.25), arrivals=rows)
    sim.run()
    assert fast.finish_s.tolist() == [r.finish_s for r in sim.requests]
    assert len(sim.tenants[0].units) == 4  # x: 60 B in three 20 B blocks; y whole


def test_block_footprints_follow_their_units() -> None:
    """A block that ends mid-unit leaves the unit's partial state; the last carries the
    unit's own live bytes and spill."""
    f = Footprint((10, 5), (4, 2), (30, 7))
    g = f.blocks(["a", "b"], ["a#b1/2", "a#b2/2", "b"])
    assert (g.live, g.spill) == ((30, 10, 5), (0, 4, 2))
    assert Footprint((1,), (0,)).blocks(["x"], ["x#b1/2", "x#b2/2"]).live == (1, 1)


def test_the_work_check_counts_the_blocks(monkeypatch) -> None:
    """``serve`` refuses a run before it starts when its least event count passes the limits;
    for AI-MT it counts the blocks the run will serve (three here, so 6 events), not the
    layers (one, 2 events): a --trace of tiny blocks otherwise slipped past the logged-event
    limit (merge=1/2048 makes resnet50 2114 units, not 54)."""
    import pytest

    from npuweave.errors import ConfigError
    from npuweave.sim import serving

    monkeypatch.setattr(serving, "MAX_LOGGED_EVENTS", 5)
    arr = make_arrivals([0.0], [0], ("m",))
    with pytest.raises(ConfigError, match="at least 6 events"):
        serve([ONE], toy_npu(), arr, "aimt", merge=0.25, traffic=False, log=True)
    assert serve([ONE], toy_npu(), arr, "aimt", merge=1.0, traffic=False, log=True)


def test_a_unit_named_like_a_block_is_still_a_whole_unit() -> None:
    """Blocks are matched to the units they were cut from, not guessed from their names: an
    ONNX node may be called ``fc#b1/2`` (before, ``serve --scheduler aimt`` on such a model
    stopped with a ValueError traceback). Buffer 100 B, merge 1/4: blocks of at most 25 B, so
    ``fc#b1/2`` (20 B) stays whole and ``out`` (40 B) becomes two 20 B blocks; ``out``'s spill
    (10 B) goes to its last block, ``fc#b1/2``'s (4 B) to itself."""
    from npuweave.schedule.base import Tenant
    from npuweave.sim.serve import Simulator

    t = Tenant("m", ("fc#b1/2", "out"), (1.0, 2.0), (20, 40))
    f = Footprint((6, 8), (4, 10), (3, 5))
    assert f.blocks(t.units, ("fc#b1/2", "out#b1/2", "out#b2/2")) == Footprint(
        (6, 5, 8), (4, 0, 10), (3, 5, 5))
    sim = Simulator([t], 100, 10.0, AIMT(merge=0.25), footprints=[f], traffic=True,
                    arrivals=[(0.0, 0, 1, 50.0)])
    assert sim.tenants[0].units == ("fc#b1/2", "out#b1/2", "out#b2/2")
    assert sim.units[0].live == (6, 5, 8)
