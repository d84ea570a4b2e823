"""``npuweave serve``: a small run with every output, and every bad input (one line, exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BASE = ["serve", "--models", "resnet50,bert-base", "--npu", "memory-centric"]


def run(args, cwd):
    return subprocess.run([sys.executable, "-m", "npuweave", *args], capture_output=True,
                          text=True, cwd=cwd)


def test_serve_writes_json_and_csv(tmp_path):
    p = run([*BASE, "--qps", "300,80", "--duration", "50ms", "--seed", "7", "--scheduler",
             "hpf-p", "--priority", "1,9", "--deadline", "15ms,130ms", "--json", "r.json",
             "--csv", "r.csv"], tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    whole = doc["rows"][0]
    assert whole["scope"] == "all" and whole["served"] + whole["killed"] == whole["requests"]
    assert {r["name"] for r in doc["rows"] if r["scope"] == "model"} == {"resnet50", "bert-base"}
    assert (tmp_path / "r.csv").read_text().startswith("scope,")


@pytest.mark.parametrize("args,word", [
    (["--qps", "0,80"], "--qps"), (["--qps", "-3,80"], "--qps"), (["--qps", "300"], "--qps"),
    (["--qps", "1,1", "--deadline", "0,1ms"], "--deadline"),
    (["--qps", "1,1", "--deadline", "1ms"], "--deadline"),
    (["--qps", "1,1", "--duration", "0"], "--duration"),
    (["--qps", "1,1", "--duration", "inf"], "--duration"),
    (["--qps", "1,1", "--priority", "1,2,3"], "--priority"),
    (["--qps", "1,1", "--scheduler", "nope"], "scheduler"),
    (["--qps", "1,1", "--batching", "window:2ms"], "--batching"),
    (["--arrivals", "trace:missing.csv"], "missing.csv"),
    (["--arrivals", "trace:unsorted.csv"], "sort"),
    (["--arrivals", "trace:negative.csv"], "time"),
    (["--arrivals", "trace:unknown.csv"], "model"),
    (["--qps", "300,80", "--max-events", "50"], "max-events"),
    (["--qps", "1,1", "--standalone", "precise"], "--standalone"),  # layerweaver is not LW+
    (["--qps", "1,1", "--scheduler", "layerweaver-plus", "--standalone", "exact"], "--standalone"),
    (["--qps", "1,1", "--scheduler", "layerweaver-plus", "--standalone", "approx",
      "--scheduler-opt", "standalone=precise"], "contradicts"),
])
def test_bad_input_one_line_exit_2(tmp_path, args, word):
    (tmp_path / "unsorted.csv").write_text("time_s,model\n0.002,resnet50\n0.001,bert-base\n")
    (tmp_path / "negative.csv").write_text("time_s,model\n-0.002,resnet50\n")
    (tmp_path / "unknown.csv").write_text("time_s,model\n0.002,vgg99\n")
    p = run([*BASE, *args], tmp_path)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and word in lines[0], p.stderr
    assert "Traceback" not in p.stderr and list(tmp_path.glob("*.json")) == []


def test_schedule_rejects_an_endless_window(tmp_path):
    p = run(["schedule", "--models", "resnet50,bert-base", "--window-s", "inf"], tmp_path)
    assert p.returncode == 2 and "--window-s" in p.stderr


def test_standalone_flag_reaches_layerweaver_plus(tmp_path):
    p = run([*BASE, "--npu", "lwplus", "--qps", "800,200", "--duration", "20ms", "--deadline",
             "15ms,130ms", "--scheduler", "layerweaver-plus", "--standalone", "precise",
             "--json", "r.json"], tmp_path)
    assert p.returncode == 0, p.stderr
    notes = json.loads((tmp_path / "r.json").read_text())["notes"]
    assert any("standalone estimate precise" in n for n in notes), notes


def test_serve_says_which_path_ran(tmp_path):
    """The front door's note: the engine (with why) by default; the compiled serving loop where
    it gives the engine's finish times (traffic off, zero-latency NPU, a layer-wise policy)."""
    args = [*BASE, "--qps", "300,80", "--duration", "20ms", "--seed", "3", "--csv", "r.csv"]
    eng = run([*args, "--scheduler", "fcfs", "--json", "r.json"], tmp_path)
    assert eng.returncode == 0, eng.stderr
    notes = json.loads((tmp_path / "r.json").read_text())["notes"]
    assert notes[0].startswith("path: event engine (not the layer-wise serving loop: ")
    fast = run([*args, "--scheduler", "sequential", "--no-traffic"], tmp_path)
    assert fast.returncode == 0, fast.stderr
    assert "path: compiled serving loop" in fast.stdout or "path: Python serving loop" in fast.stdout
