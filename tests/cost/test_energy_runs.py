"""Energy of runs: serve and schedule rows, static energy from the timeline, the power track."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from npuweave.experiments.energy import model_energy, result_energy
from npuweave.hardware import preset
from npuweave.metrics.energy import ENERGY_COLUMNS
from npuweave.sim import run_streams

ROOT = Path(__file__).resolve().parents[2]


def test_run_energy_is_dynamic_of_every_request_plus_static_over_the_span():
    npu = preset("memory-centric")
    res = run_streams(["ncf", "mobilenetv2"], npu, requests=2, scheduler="sequential")
    row = result_energy(res, npu)
    dyn = sum(model_energy(r.model, npu, r.batch)[0].dynamic_j for r in res.requests)
    assert row["compute_energy_j"] + row["sram_energy_j"] + row["dram_energy_j"] == \
        pytest.approx(dyn)
    assert row["static_energy_j"] == pytest.approx(npu.energy.static_power_w * res.makespan_s)
    assert row["avg_power_w"] == pytest.approx(row["energy_j"] / res.makespan_s)
    assert row["peak_power_w"] >= row["avg_power_w"]


def test_gating_lowers_static_energy_of_a_run_with_idle_time():
    base = preset("memory-centric")
    gated = dataclasses.replace(base, energy=dataclasses.replace(
        base.energy, gating=("array", "vector", "sram"), wake_up_s=1e-6))
    res = run_streams(["ncf", "mobilenetv2"], base, requests=2, scheduler="sequential")
    ungated_j = result_energy(res, base)["static_energy_j"]
    gated_j = result_energy(res, gated)["static_energy_j"]
    assert gated_j <= ungated_j


def _cli(args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "npuweave", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_serve_json_and_trace_carry_energy(tmp_path):
    done = _cli(["serve", "--models", "ncf,mobilenetv2", "--npu", "prema", "--arrivals",
                 "poisson", "--qps", "200,100", "--duration", "20ms", "--seed", "3",
                 "--json", "s.json", "--trace", "t.json"], tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "s.json").read_text())
    whole, *models = [r for r in doc["rows"] if r["scope"] in ("all", "model")]
    assert set(ENERGY_COLUMNS) <= set(whole)
    assert whole["energy_j"] == pytest.approx(sum(r["energy_j"] for r in models))
    trace = json.loads((tmp_path / "t.json").read_text())
    power = [e for e in trace["traceEvents"] if e.get("name") == "power"]
    assert power and min(e["args"]["watts"] for e in power) == pytest.approx(
        preset("prema").energy.static_power_w)


def test_schedule_compare_rows_carry_energy(tmp_path):
    done = _cli(["schedule", "--models", "ncf,mobilenetv2", "--requests", "2", "--compare",
                 "sequential", "--json", "r.json"], tmp_path)
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert all(r["energy_j"] > 0 and r["edp_js"] > 0 for r in rows)


def test_gating_saves_static_energy_when_serving_leaves_the_npu_idle(tmp_path):
    spec = ("pe_rows: 128\npe_cols: 128\nclock_hz: 700 MHz\ndram_bw: 225 GB/s\n"
            "weight_buffer: 48 MiB\nact_buffer: 36 MiB\nenergy:\n  mac_pj: 1.5 pJ\n"
            "  static_mw: {array: 2 W, sram: 2 W, other: 1 W}\n")
    (tmp_path / "on.yaml").write_text(spec)
    (tmp_path / "gated.yaml").write_text(spec + "  gating: [array, sram]\n  wake_up_s: 1 us\n")
    static = {}
    for name in ("on", "gated"):
        done = _cli(["serve", "--models", "ncf", "--npu", f"{name}.yaml", "--arrivals",
                     "poisson", "--qps", "50", "--duration", "100ms", "--seed", "1",
                     "--json", f"{name}.json"], tmp_path)
        assert done.returncode == 0, done.stderr
        doc = json.loads((tmp_path / f"{name}.json").read_text())
        static[name] = {**doc["rows"][0], "span_s": doc["span_s"]}
    on, gated = static["on"], static["gated"]
    assert on["static_energy_j"] == pytest.approx(5.0 * on["span_s"])
    # ncf at 50 req/s leaves the NPU idle almost all the time: only the 1 W ungated part and
    # the busy time (plus a microsecond per wake-up) remain
    assert gated["static_energy_j"] < 0.5 * on["static_energy_j"]
    assert gated["compute_energy_j"] == pytest.approx(on["compute_energy_j"])
