"""Invariants of every cost model on random layers and NPUs (hypothesis)."""

from __future__ import annotations

from cost_helpers import gemm, npu
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.cost import layer_cost
from npuweave.cost.systolic import gemm_cycles, ws_gemm_cycles
from npuweave.workload.layer import LayerKind

MODELS = ("systolic-ws", "prema", "roofline")
dims = st.integers(1, 300)
kinds = st.sampled_from([LayerKind.GEMM, LayerKind.CONV, LayerKind.MATMUL, LayerKind.RECURRENT])


@st.composite
def layers(draw):
    kind = draw(kinds)
    return gemm(draw(dims), draw(dims), draw(dims), count=draw(st.integers(1, 8)), kind=kind,
                vector_ops=draw(st.integers(0, 5000)))


@st.composite
def npus(draw):
    side = st.sampled_from([2, 3, 4, 8, 16, 32])
    return npu(draw(side), draw(side), arrays=draw(st.integers(1, 5)),
               cores=draw(st.integers(1, 2)), vector_lanes=draw(st.integers(0, 64)),
               act_buffer=draw(st.integers(1, 1 << 20)),
               weight_buffer=draw(st.integers(1, 1 << 20)),
               dram_latency_cycles=draw(st.integers(0, 200)))


FAST = settings(max_examples=60, deadline=None)


@FAST
@given(layers(), npus(), st.integers(1, 8))
def test_cycles_at_least_macs_over_pes(layer, hw, batch):
    assert gemm_cycles(layer, hw, batch) >= layer.macs * batch / hw.macs_per_cycle


@FAST
@given(layers(), npus(), st.integers(1, 8))
def test_one_array_runs_count_scalesim_gemms(layer, hw, batch):
    hw1 = npu(hw.pe_rows, hw.pe_cols)
    count, m, k, n = layer.gemm
    if layer.kind is LayerKind.MATMUL:
        count *= batch
    else:
        m *= batch
    assert gemm_cycles(layer, hw1, batch) == count * ws_gemm_cycles(m, k, n, hw.pe_rows,
                                                                    hw.pe_cols)


@FAST
@given(layers(), npus(), st.integers(1, 8), st.sampled_from(MODELS))
def test_monotone_in_batch_and_utilization_bounded(layer, hw, batch, model):
    small = layer_cost(layer, hw, batch, model=model)
    big = layer_cost(layer, hw, batch + 1, model=model)
    assert big.compute_s >= small.compute_s
    assert big.memory_s >= small.memory_s
    assert big.dram_bytes >= small.dram_bytes
    for c in (small, big):
        assert 0.0 <= c.utilization <= 1.0
        assert c.dram_bytes == c.weight_bytes + c.spill_bytes


@FAST
@given(layers(), npus(), st.integers(1, 8), st.sampled_from([2, 4, 8, 16]))
def test_no_model_beats_the_roofline(layer, hw, batch, bits):
    bound = layer_cost(layer, hw, batch, formats=bits, model="roofline")
    for model in ("systolic-ws", "prema"):
        c = layer_cost(layer, hw, batch, formats=bits, model=model)
        assert c.time_s >= bound.time_s * (1 - 1e-12)
        assert c.compute_s >= bound.compute_s * (1 - 1e-12)
