"""The emitter: its output validates, round-trips and replays; hand-checked small cases."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuweave.compile import gemini
from npuweave.compile.gemini.geometry import fmap_bytes, weight_bytes
from npuweave.compile.gemini.l2alloc import Live, allocate, spans
from npuweave.compile.gemini.mapping import layer_split, plan
from npuweave.compile.gemini.multicore import compile_multicore, multicore_npu, parse_mesh
from npuweave.errors import ConfigError, InfeasibleError
from npuweave.hardware import preset
from npuweave.workload.lower import lower
from npuweave.workload.zoo.builder import GraphBuilder

W = '$["0"]'


def small_cnn(channels: list[int], size: int, residual: bool, fc: bool) -> list:
    b = GraphBuilder("small")
    x = b.input("image", (1, 3, size, size))
    for i, c in enumerate(channels):
        y = b.relu(b.conv(x, c, 3 if i % 2 == 0 else 1, name=f"conv{i}"))
        x = b.relu(b.add(y, x)) if residual and b.shape(x) == b.shape(y) else y
    if fc:
        x = b.gemm(b.flatten(b.gap(x)), 10, name="fc")
    return lower(b.finish([x]))


def npu(cores: int, l2: int = 1 << 20):
    xy = {1: (1, 1), 2: (2, 1), 3: (3, 1), 4: (2, 2)}[cores]
    return replace(multicore_npu(preset("gemini-like"), cores, xy), l2_bytes=l2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(channels=st.lists(st.sampled_from([4, 8, 16, 24]), min_size=1, max_size=4),
       size=st.sampled_from([4, 6, 8, 12]), residual=st.booleans(), fc=st.booleans(),
       cores=st.sampled_from([1, 2, 3, 4]), batch=st.sampled_from([1, 2, 3, 5]),
       l2=st.sampled_from([64 << 10, 1 << 20]))
def test_emitted_ir_validates_round_trips_and_replays(channels, size, residual, fc, cores,
                                                      batch, l2):
    layers = small_cnn(channels, size, residual, fc)
    ir = compile_multicore(layers, npu(cores, l2), batch=batch, check=False)
    assert gemini.validate(ir) == []
    assert gemini.loads(gemini.dumps(ir)) == ir
    r = gemini.simulate(ir, 16e9, 1e9, 32e9, 10)
    assert len(r.workloads) == sum(len(w) for _, w in ir.cores)
    busiest = max(b for _, b in r.core_busy)
    assert busiest <= r.makespan + 1e-15
    # every workload's output box is inside its layer and the layer is covered exactly once
    for name in {w.layer_name for w in ir.workloads()}:
        boxes = [w.box for w in ir.workloads() if w.layer_name == name]
        assert sum(b.volume for b in boxes) == gemini.geometry.bounding(boxes).volume


def test_n_split_of_one_conv_by_hand():
    """One 3x3 conv (3 -> 8 channels, 4 x 4, pad 1), batch 2 on 2 cores: N split, one
    workload per core, one weight load multicast to both, one input load per core.

    Sizes: input per sample 1 x align8(3) x 4 x 4 = 128 B; output 8 x 4 x 4 = 128 B;
    weight [0, 7, 2, 8]: 8 * (8 * 9 + 32) = 832 B.
    """
    b = GraphBuilder("one")
    x = b.input("image", (1, 3, 4, 4))
    layers = lower(b.finish([b.conv(x, 8, 3, name="conv")]))
    ir = compile_multicore(layers, npu(2), batch=2)
    assert [len(w) for _, w in ir.cores] == [1, 1]
    w0, w1 = ir.workloads(0)[0], ir.workloads(1)[0]
    assert (w0.box.lower, w0.box.upper) == ((0, 0, 0, 0), (0, 7, 3, 3))
    assert (w1.box.lower, w1.box.upper) == ((1, 0, 0, 0), (1, 7, 3, 3))
    assert w1.ofmaps[0].box.lower == (0, 0, 0, 0)  # tile-local, as the published files
    weights = [e for e in ir.loads if e.type == "weight"]
    assert len(weights) == 1 and weights[0].size == 832
    assert weights[0].size == weight_bytes(weights[0].box)
    assert {(d.core_id, d.workload_id) for d in weights[0].destinations} == {(0, 0), (1, 1)}
    fmaps = [e for e in ir.loads if e.type == "fmap"]
    assert [e.size for e in fmaps] == [128, 128]
    assert [(s.core_id, s.box.lower[0]) for s in ir.stores] == [(0, 0), (1, 1)]
    assert w0.ofmaps[0].size == fmap_bytes(w0.box, 8, 8) == 128


def test_h_split_sends_halo_rows_over_the_mesh():
    """batch 1 on 2 cores: H split; the second 3x3 conv on core 1 needs row 3 of core 0's half
    of the first conv's 8 rows (pad 1): one mesh transfer of 1 row x 8 channels x 8 = 64 B."""
    b = GraphBuilder("two")
    x = b.input("image", (1, 8, 8, 8))
    y = b.conv(b.conv(x, 8, 3, name="c1"), 8, 3, name="c2")
    layers = lower(b.finish([y]))
    assert layer_split((8, 8, 8), 1, 2) == "H"
    ir = compile_multicore(layers, npu(2), batch=1)
    r = gemini.simulate(ir, 16e9, 1e9, 32e9, 10)
    assert sorted(s.bytes for s in r.mesh) == [64, 64]  # row 3 to core 1, row 4 to core 0


def test_k_split_when_rows_are_too_few():
    assert layer_split((1000, 1, 1), 1, 4) == "K"
    assert layer_split((64, 56, 56), 4, 4) == "N"


def test_tiles_fit_a_small_l2():
    layers = small_cnn([16, 16], 12, False, False)
    ir = compile_multicore(layers, npu(1, 16 << 10), batch=2)
    assert len(ir.workloads(0)) > 2  # tiled
    assert max(sum(b.size for b in w.buffer) for w in ir.workloads(0)) <= 16 << 10


def emitted_doc() -> dict:
    layers = small_cnn([8, 8], 8, True, False)
    return gemini.to_dict(compile_multicore(layers, npu(2), batch=1))


def violations(doc: dict) -> set[str]:
    return {v.check for v in gemini.validate(gemini.from_dict(doc))}


def test_corrupted_emitted_files_are_caught():
    base = emitted_doc()
    assert violations(base) == set()
    d = json.loads(json.dumps(base))
    d["1"][-1]["ifmap"][0]["transfer_id"] = [10**6]
    assert {"transfer-dangling", "ifmap-coverage"} <= violations(d)
    d = json.loads(json.dumps(base))
    wl = next(w for w in d["0"] if len(w["buffer"]) >= 2)
    wl["buffer"][1]["address"] = wl["buffer"][0]["address"]
    assert "buffer-overlap" in violations(d)
    d = json.loads(json.dumps(base))
    d["1"][0]["ofmap"][0]["upper"][2] += 50
    assert "box-outside" in violations(d)
    d = json.loads(json.dumps(base))
    d["1"][0]["time"] = -1
    assert "header" in violations(d)


def test_bad_configs_are_refused():
    with pytest.raises(ConfigError, match="2x2 mesh holds 4 cores"):
        multicore_npu(preset("gemini-like"), 3, (2, 2))
    with pytest.raises(ConfigError, match="mesh"):
        parse_mesh("2by2")
    with pytest.raises(ConfigError, match="no per-core L2"):
        multicore_npu(preset("prema"), 1, (1, 1))
    with pytest.raises(InfeasibleError, match="larger"):
        plan(small_cnn([24], 12, False, False), npu(1, 1024), 1, 1)


def test_ring_allocator_wraps_and_never_overlaps():
    """Ring of 100 bytes. At position 0: a (40 B) at 0, b (30 B, alive at 0 and 1) at 40.
    At position 1, c (50 B) cannot start at 0 or 40 (it would hit b at 40..70); at 70 it
    runs to the end and wraps onto 0..20, which a has freed."""
    a = allocate([Live("a", 40, 0, 0), Live("b", 30, 0, 1), Live("c", 50, 1, 1)], 100)
    assert a == {"a": 0, "b": 40, "c": 70}
    assert spans(70, 50, 100) == [(70, 100), (0, 20)]
    with pytest.raises(InfeasibleError, match="no free address"):
        allocate([Live("a", 60, 0, 1), Live("c", 50, 1, 1)], 100)
    with pytest.raises(InfeasibleError, match="does not fit"):
        allocate([Live("a", 101, 0, 0)], 100)


def test_transformer_layers_split_by_sequence_rows():
    """A GEMM without geometry is ``count * n`` channels by ``m`` rows, so BERT splits in H
    (sequence positions) instead of gathering every channel of every layer."""
    from npuweave.compile.gemini.mapping import out_shape
    from npuweave.workload import load_layers
    from npuweave.workload.layer import Layer, LayerKind

    proj = Layer("q", LayerKind.GEMM, ("MatMul",), (1, 8, 768, 768), 8 * 768 * 768, 0,
                 768 * 768, 8 * 768, 8 * 768)
    assert out_shape(proj) == (768, 8, 1)
    ir = compile_multicore(load_layers("bert-base:seq_len=8"), npu(2, 8 << 20), batch=1)
    assert gemini.validate(ir) == []
    # core 0 computes sequence positions 0..3 of every layer of the first encoder block
    assert {w.box.upper[2] for w in ir.workloads(0) if w.layer_name.startswith("layer0/")} == {3}
