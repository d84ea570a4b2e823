"""The replay: hand-computed event logs on a tiny IR, invariants on the published files."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from irdata import tiny_ir

from npuweave.compile import gemini
from npuweave.errors import ConfigError, InfeasibleError


def log(result: gemini.ReplayResult) -> list[tuple[str, float, float]]:
    spans = sorted(result.workloads + result.transfers, key=lambda s: (s.start, s.name))
    return [(s.name, round(s.start, 9), round(s.end, 9)) for s in spans]


def test_tiny_ir_is_valid():
    assert gemini.validate(gemini.from_dict(tiny_ir())) == []


def test_tiny_ir_event_log_by_hand():
    # clock 1 kHz: relu 100 cycles = 0.1 s, conv 200 cycles = 0.2 s
    # DRAM 8000 B/s: input 800 B = 0.1 s, weight 320 B = 0.04 s, output 800 B = 0.1 s
    # the weight first appears in conv's snapshot, so it is fetched once relu starts
    r = gemini.simulate(gemini.from_dict(tiny_ir()), dram_bw=8000, clock_hz=1000)
    assert log(r) == [
        ("fmap #0", 0.0, 0.1),
        ("relu", 0.1, 0.2),
        ("weight #1", 0.1, 0.14),
        ("conv", 0.2, 0.4),
        ("store #3", 0.4, 0.5),
    ]
    assert r.makespan == pytest.approx(0.5)
    assert r.sum_time == pytest.approx(0.3)
    assert r.dram_busy == pytest.approx(0.24)
    assert r.core_busy == ((0, pytest.approx(0.3)),)


def test_tiny_ir_slow_dram_stalls_the_conv():
    # 1000 B/s: input 0.8 s; weight 0.32 s from relu's start (0.8) = 1.12; store 0.8 s
    r = gemini.simulate(gemini.from_dict(tiny_ir()), dram_bw=1000, clock_hz=1000)
    assert log(r)[3] == ("conv", 1.12, 1.32)
    assert r.makespan == pytest.approx(2.12)


def test_instant_dram_gives_the_sum_of_times():
    r = gemini.simulate(gemini.from_dict(tiny_ir()), dram_bw=None, clock_hz=1000)
    assert r.makespan == pytest.approx(0.3) == r.sum_time


def test_missing_input_stalls_with_one_line_error():
    doc = tiny_ir()
    doc["0"][0]["ifmap"][0]["transfer_id"] = [3]  # relu now waits for conv's output
    with pytest.raises(InfeasibleError, match="workload 0 .relu. on core 0"):
        gemini.simulate(gemini.from_dict(doc))


@pytest.mark.parametrize("bw,clock", [(0, 1e9), (-1, 1e9), (1e9, 0)])
def test_bad_parameters(bw, clock):
    with pytest.raises(ConfigError):
        gemini.simulate(gemini.from_dict(tiny_ir()), dram_bw=bw, clock_hz=clock)


def check_invariants(ir: gemini.IR, r: gemini.ReplayResult) -> None:
    eps = 1e-12
    by_wl = {(s.core, s.workload_id): s for s in r.workloads}
    xfer = {int(s.name.split("#")[1]): s for s in r.transfers if s.kind != "store"}
    producer = {o.transfer_id: (w.core_id, w.workload_id) for w in ir.workloads()
                for o in w.ofmaps}
    for core, wls in ir.cores:
        spans = [by_wl[(core, w.workload_id)] for w in wls]
        for a, b in zip(spans, spans[1:]):
            assert b.start >= a.end - eps  # in id order, one at a time
        for w, s in zip(wls, spans):
            assert s.duration == pytest.approx(w.time / r.clock_hz)
            tids = [t for f in w.ifmaps for t in f.transfer_ids]
            tids += list(w.weight.transfer_ids) if w.weight else []
            for t in tids:  # compute never before its data
                if t in xfer:
                    assert s.start >= xfer[t].end - eps
                else:
                    assert s.start >= by_wl[producer[t]].end - eps
    dram = sorted(r.transfers, key=lambda s: s.start)
    for a, b in zip(dram, dram[1:]):
        assert b.start >= a.end - eps  # one DRAM channel
    assert sorted(xfer) == sorted(e.transfer_id for e in ir.loads)  # each load exactly once
    moved = sum(s.bytes for s in r.transfers)
    stored = sum(o.size for w in ir.workloads() for o in w.ofmaps
                 if o.transfer_id in {s.transfer_id for s in ir.stores})
    assert moved == sum(e.size for e in ir.loads) + stored  # work conserved
    if r.dram_bw is not None:
        assert r.dram_busy == pytest.approx(moved / r.dram_bw)
    busiest = max(b for _, b in r.core_busy)
    assert r.makespan >= max(busiest, r.dram_busy) - eps
    assert r.makespan <= busiest + r.dram_busy + eps  # some resource is always busy (1 core)


@pytest.mark.parametrize("bw", [None, 64e9, 16e9, 2e9])
def test_invariants_on_published_files(ir_path, bw):
    ir = gemini.load(ir_path)
    r = gemini.simulate(ir, dram_bw=bw)
    check_invariants(ir, r)
    if bw is None:
        assert r.makespan == pytest.approx(r.sum_time)


def test_sum_of_time_fields(ir_path):
    import json

    doc = json.loads(ir_path.read_text())
    r = gemini.simulate(gemini.load(ir_path), clock_hz=1e9)
    assert r.sum_time == pytest.approx(sum(w["time"] for w in doc["0"]) / 1e9)


@settings(max_examples=30, deadline=None)
@given(bw=st.floats(100, 1e7), clock=st.floats(100, 1e6), times=st.tuples(
    st.integers(0, 10**4), st.integers(0, 10**4)))
def test_invariants_on_random_timings(bw, clock, times):
    doc = tiny_ir()
    doc["0"][0]["time"], doc["0"][1]["time"] = times
    ir = gemini.from_dict(doc)
    check_invariants(ir, gemini.simulate(ir, dram_bw=bw, clock_hz=clock))
