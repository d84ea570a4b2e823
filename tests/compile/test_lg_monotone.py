"""More LMEM never slows the estimate down; DP never loses to layer by layer or to greedy.

Every layer alone takes its fastest run (cheapest slicing that fits, or streaming its
weights) and a larger LMEM only adds slicings that fit, so the layer-by-layer baseline can
only get faster with more LMEM; the DP plan likewise, since every group that fits the
smaller LMEM fits the larger one at the same cost.
"""

import dataclasses

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from lg_builders import chain, conv, toy_npu

from npuweave.compile.layergroup import compile_groups
from npuweave.errors import InfeasibleError
from npuweave.hardware import preset
from npuweave.workload import load_layers

TOY_LMEM = [4096, 8192, 16384, 65536, 1 << 20]
EPS = 1 + 1e-9


def non_increasing(values):
    return all(b <= a * EPS for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("batch", [1, 2])
def test_single_conv_baseline_never_slower_with_more_lmem(batch):
    layer = [conv("c", ("",), 16, 32, 16, 3)]  # 16x32x32, 3x3: 32 KiB in and out per sample
    plans = [compile_groups(layer, toy_npu(lmem), batch=batch, method="dp")
             for lmem in TOY_LMEM[1:]]  # its smallest slice needs 6144 B
    assert non_increasing([p.baseline_seconds for p in plans])
    assert all(p.seconds == p.baseline_seconds for p in plans)  # one layer: plan = baseline


@pytest.mark.parametrize("batch", [1, 4])
def test_chain_never_slower_with_more_lmem(batch):
    layers = chain(4, c=8, h=16)
    plans = [compile_groups(layers, toy_npu(lmem), batch=batch, method="dp")
             for lmem in TOY_LMEM]
    assert non_increasing([p.baseline_seconds for p in plans])
    assert non_increasing([p.seconds for p in plans])


@pytest.mark.parametrize("batch", [1, 8])
def test_resnet50_2mib_vs_16mib(batch):
    big = preset("lmem-16m")
    small = dataclasses.replace(big, lmem_bytes=2 << 20)
    layers = load_layers("resnet50")
    p_small = compile_groups(layers, small, batch=batch, method="dp")
    p_big = compile_groups(layers, big, batch=batch, method="dp")
    assert p_big.baseline_cycles <= p_small.baseline_cycles
    assert p_big.cycles <= p_small.cycles
    greedy = compile_groups(layers, small, batch=batch, method="greedy")
    for p in (p_small, p_big):
        assert p.seconds <= p.baseline_seconds * EPS
    assert p_small.seconds <= greedy.seconds * EPS


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.integers(1, 5), st.sampled_from([4, 8]), st.integers(8, 24),
       st.sampled_from([6144, 16384, 65536]), st.integers(1, 3))
def test_dp_never_worse_than_baseline_or_greedy(n, c, h, lmem, batch):
    npu = toy_npu(lmem, 2)
    try:
        dp = compile_groups(chain(n, c=c, h=h), npu, batch=batch, method="dp")
        greedy = compile_groups(chain(n, c=c, h=h), npu, batch=batch, method="greedy")
    except InfeasibleError:
        assume(False)
    assert dp.seconds <= dp.baseline_seconds * EPS
    assert dp.seconds <= greedy.seconds * EPS
    assert dp.baseline_seconds == pytest.approx(greedy.baseline_seconds)  # same runs, summed
