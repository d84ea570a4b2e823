"""``npuweave predict`` and ``npuweave reproduce prema`` end to end, and their bad input."""

import json
import subprocess
import sys

import pytest

from npuweave.cli import main
from npuweave.cost.predictor import estimate, isolated_time
from npuweave.hardware import preset


def run_cli(args, capsys):
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_json(tmp_path, capsys):
    path = tmp_path / "p.json"
    code, out, _ = run_cli(["predict", "rnn-mt2", "--in-len", "12", "--out-len", "9",
                            "--json", str(path)], capsys)
    assert code == 0 and "rnn-mt2" in out
    row = json.loads(path.read_text())["rows"][0]
    npu = preset("prema")
    assert row["estimate_ms"] == pytest.approx(estimate("rnn-mt2", npu, 1, 12) * 1e3)
    assert row["simulated_ms"] == pytest.approx(isolated_time("rnn-mt2", npu, 1, 12, 9) * 1e3)
    assert row["expected_out_len"] == 9 and row["actual_out_len"] == 9


def test_predict_zoo_name_and_drawn_length(capsys):
    code, out, _ = run_cli(["predict", "lstm-speech", "--npu", "prema", "--in-len", "20"], capsys)
    assert code == 0 and "rnn-asr" in out


def test_reproduce_prema_small(tmp_path, capsys):
    js, csv, plots = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "plots"
    code, out, _ = run_cli(["reproduce", "prema", "--runs", "1", "--tasks", "3", "--pairs", "1",
                            "--no-readings", "--jobs", "1", "--json", str(js), "--csv", str(csv),
                            "--plots", str(plots)], capsys)
    assert code == 0
    doc = json.loads(js.read_text())
    imp = doc["improvements"]
    assert imp["NP-FCFS"] == {"antt_x": 1.0, "fairness_x": 1.0, "stp_x": 1.0}
    assert len(imp) == 22 and "P-PREMA dynamic-kill" in imp
    assert {r["metric"] for r in doc["versus"]} >= {"P-PREMA dynamic ANTT x (Fig. 12)"}
    assert len(csv.read_text().splitlines()) == 23
    assert sorted(p.name for p in plots.iterdir()) == [f"prema_fig1{i}.png" for i in range(1, 6)]
    # Eq. 1: STP of a task set is at most the number of tasks
    assert all(v["stp"] <= 3 + 1e-9 for v in doc["means"].values())


@pytest.mark.parametrize("args, needle", [
    (["reproduce", "prema", "--runs", "0"], "--runs"),
    (["reproduce", "prema", "--tasks", "0"], "--tasks"),
    (["reproduce", "prema", "--reading", "weird"], "reading"),
    (["predict", "rnn-asr", "--in-len", "99"], "not profiled"),
    (["predict", "rnn-sa"], "--in-len"),
    (["predict", "resnet50"], "not in PREMA's mix"),
    (["predict", "rnn-mt1", "--in-len", "3", "--out-len", "0"], "--out-len"),
    (["serve", "--models", "alexnet", "--npu", "prema", "--scheduler", "prema", "--preempt",
      "sometimes", "--qps", "10"], "--preempt"),
    (["serve", "--models", "alexnet", "--npu", "prema", "--scheduler", "prema", "--priority",
      "5", "--qps", "10"], "levels"),
])
def test_bad_input_one_line_exit_2(args, needle):
    proc = subprocess.run([sys.executable, "-m", "npuweave", *args], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0]
