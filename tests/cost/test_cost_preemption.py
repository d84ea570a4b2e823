"""``preemption_cost`` and ``live_bytes`` against hand calculations."""

from __future__ import annotations

import pytest

from npuweave.cost.preemption import live_bytes, preemption_cost
from npuweave.errors import ConfigError
from npuweave.hardware import NPU

NPU_ = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1e9, dram_bw=2e9, weight_buffer=1 << 20,
           act_buffer=1 << 20, dram_latency_cycles=500)  # latency 500 ns, 2 B/ns


def test_checkpoint_prices_both_directions_from_bytes_bandwidth_and_latency():
    c = preemption_cost("checkpoint", 10_000, NPU_)
    # 500 ns + 10000 B / 2e9 B/s = 500 ns + 5000 ns = 5.5 us each way
    assert c.store_bytes == c.restore_bytes == 10_000
    assert c.store_s == pytest.approx(5.5e-6) and c.restore_s == pytest.approx(5.5e-6)
    assert c.overhead_s == pytest.approx(11e-6) and c.lost_s == 0.0


def test_kill_loses_the_work_done_and_drain_costs_nothing():
    k = preemption_cost("kill", 10_000, NPU_, done_compute_s=2.5e-3)
    assert (k.store_bytes, k.overhead_s, k.lost_s) == (0, 0.0, 2.5e-3)
    d = preemption_cost("drain", 10_000, NPU_, done_compute_s=2.5e-3)
    assert (d.overhead_s, d.lost_s) == (0.0, 0.0)


def test_empty_checkpoint_costs_nothing():
    assert preemption_cost("checkpoint", 0, NPU_).overhead_s == 0.0


def test_live_bytes_at_layer_and_tile_boundaries():
    # a conv with 56*56*64 outputs and 56*56*64 inputs per sample, batch 2, 2-byte elements
    out = inp = 56 * 56 * 64
    assert live_bytes(out, inp, 2, 2) == out * 2 * 2
    # mid-layer (weight tile): inputs at 2 B plus 32-bit partial sums of every output
    assert live_bytes(out, inp, 2, 2, tile_done=False) == inp * 2 * 2 + out * 2 * 4


@pytest.mark.parametrize("mech,nbytes", [("pause", 10), ("checkpoint", -1),
                                         ("checkpoint", 1.5)])
def test_bad_input_names_the_problem(mech, nbytes):
    with pytest.raises(ConfigError, match="mechanism|bytes"):
        preemption_cost(mech, nbytes, NPU_)
