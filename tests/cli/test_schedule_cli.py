"""``npuweave schedule / schedulers / reproduce / demo`` end to end on small zoo models."""

import json
import subprocess
import sys

import pytest

from npuweave.cli import main
from npuweave.schedule import schedulers

SMALL = ["--models", "ncf,mobilenetv2", "--requests", "2"]


def run_cli(args, capsys):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_schedulers_lists_every_policy(capsys):
    code, out, _ = run_cli(["schedulers"], capsys)
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == len(schedulers("all"))
    for name, line in zip(schedulers("all"), lines, strict=True):
        assert line.split()[0] == name


def test_unknown_scheduler_exits_2_with_one_line_listing_names():
    proc = subprocess.run(
        [sys.executable, "-m", "npuweave", "schedule", "--models", "ncf", "--scheduler", "nope"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown scheduler 'nope'" in lines[0]
    assert all(name in lines[0] for name in schedulers())


def test_unknown_model_exits_2_with_one_line_listing_names(capsys):
    code, _, err = run_cli(["schedule", "--models", "resnet50,no-such-net"], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "no-such-net" in lines[0] and "bert-base" in lines[0]


@pytest.mark.parametrize("args", [["--requests", "0"], ["--batch", "0"], ["--compare", ","]])
def test_bad_numbers_exit_2(capsys, args):
    code, _, err = run_cli(["schedule", "--models", "ncf", *args], capsys)
    assert code == 2 and err.startswith("error:")


@pytest.mark.parametrize("args, words", [
    (["--models", ""], ["--models is empty"]),
    (["--models", ","], ["--models is empty"]),
    (["--models", "missing/net.onnx"], ["missing/net.onnx"]),
    (["--models", "ncf", "--window-s", "-1"], ["--window-s", "-1"]),
    (["--models", "ncf", "--compare", "nope"], ["unknown scheduler 'nope'", "layerweaver"]),
    (["--models", "ncf", "--timeline", "."], ["--timeline", "directory"]),
    (["--models", "ncf", "--trace", "."], ["--trace", "directory"]),
    (["--models", "ncf", "--csv", "."], ["--csv", "directory"]),
])
def test_bad_input_exits_2_with_one_error_line(capsys, args, words):
    code, out, err = run_cli(["schedule", *args], capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert all(w in lines[0] for w in words)


def test_single_tenant_layerweaver_runs_and_says_the_failsafe_applies(capsys):
    code, out, _ = run_cli(["schedule", "--models", "ncf", "--requests", "2"], capsys)
    assert code == 0 and "layerweaver failsafe: a single tenant" in out


def test_compare_all_prints_every_scheduler_and_writes_json(tmp_path, capsys):
    out_json = tmp_path / "r.json"
    code, out, _ = run_cli(
        ["schedule", *SMALL, "--compare", "all", "--json", str(out_json)], capsys
    )
    assert code == 0
    for name in schedulers():
        assert name in out
    doc = json.loads(out_json.read_text())
    assert doc["models"] == ["ncf", "mobilenetv2"] and doc["npu"] == "memory-centric"
    assert [r["scheduler"] for r in doc["rows"]][0] == "layerweaver"
    assert {r["scheduler"] for r in doc["rows"]} == set(schedulers())
    for row in doc["rows"]:
        assert 0 <= row["pe_utilization"] <= 1 and 0 <= row["dram_utilization"] <= 1
        assert 0 <= row["stp"] <= 2 + 1e-9
        if row["throughput"]:  # memory-only runs nothing when no tenant is memory-bound
            assert row["makespan_ratio"] >= 1 - 1e-9 and row["antt"] >= 1 - 1e-9
            assert set(row["throughput"]) == {"ncf", "mobilenetv2"}
    assert set(doc["notes"]) == set(schedulers())


def test_csv_to_stdout_and_timeline_and_trace(tmp_path, capsys):
    png, trace = tmp_path / "t.png", tmp_path / "t.json"
    code, out, _ = run_cli(
        ["schedule", *SMALL, "--compare", "sequential", "--csv",
         "--timeline", str(png), "--trace", str(trace)], capsys,
    )
    assert code == 0
    header, *rows = out.strip().splitlines()
    assert header.startswith("scheduler,stp,antt")
    assert [r.split(",")[0] for r in rows] == ["layerweaver", "sequential"]
    assert png.read_bytes()[:4] == b"\x89PNG"
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {"layerweaver", "sequential"}


def test_reproduce_one_pair_writes_csv(tmp_path, capsys):
    out_csv = tmp_path / "lw.csv"
    code, out, _ = run_cli(
        ["reproduce", "layerweaver", "--pairs", "MN+NCF", "--scenarios", "single-batch",
         "--schedulers", "fair,layerweaver", "--requests", "2", "--csv", str(out_csv)], capsys,
    )
    assert code == 0
    lines = out_csv.read_text().strip().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("scenario,npu,batch,cost_model,seq_len,pair,scheduler,stp")
    assert "Ours vs thesis" in out and "(sensitivity study)" not in out
    assert "cost model systolic-ws, seq_len zoo default" in out


def test_reproduce_bad_pair_exits_2(capsys):
    code, out, err = run_cli(["reproduce", "layerweaver", "--pairs", "RN+QQ"], capsys)
    assert code == 2 and out == ""  # no header or progress bar before the error
    assert "QQ" in err and "NCF" in err


def test_reproduce_cost_model_and_seq_len_reach_csv_json_and_header(tmp_path, capsys):
    out_csv, out_json = tmp_path / "lw.csv", tmp_path / "lw.json"
    code, out, _ = run_cli(
        ["reproduce", "layerweaver", "--pairs", "RN+BB", "--scenarios", "single-batch",
         "--schedulers", "sequential,layerweaver", "--requests", "2", "--cost-model", "roofline",
         "--seq-len", "32", "--csv", str(out_csv), "--json", str(out_json)], capsys,
    )
    assert code == 0
    assert "cost model roofline, seq_len 32 (BB, BL, XL)" in out.splitlines()[0]
    assert "Ours vs thesis (sensitivity study)" in out
    header, *rows = out_csv.read_text().strip().splitlines()
    cols = header.split(",")
    assert len(rows) == 2
    for row in rows:
        fields = dict(zip(cols, row.split(","), strict=False))
        assert fields["cost_model"] == "roofline" and fields["seq_len"] == "32"
    doc = json.loads(out_json.read_text())
    assert doc["config"]["cost_model"] == "roofline" and doc["config"]["seq_len"] == 32
    assert {(r["cost_model"], r["seq_len"]) for r in doc["rows"]} == {("roofline", 32)}


@pytest.mark.parametrize("args, words", [
    (["--cost-model", "nope"], ["nope", "systolic-ws-db", "roofline"]),
    (["--seq-len", "0"], ["--seq-len", "0"]),
    (["--seq-len", "-5"], ["--seq-len", "-5"]),
    (["--requests", "0"], ["--requests", "0"]),
    (["--scenarios", "nope"], ["scenario 'nope'", "single-batch"]),
    (["--scenarios", ","], ["no scenario"]),
    (["--schedulers", "nope"], ["scheduler 'nope'", "layerweaver"]),
    (["--pairs", "XX+YY"], ["'XX'", "RN"]),
])
def test_reproduce_bad_options_exit_2_with_one_line(capsys, args, words):
    code, out, err = run_cli(["reproduce", "layerweaver", "--pairs", "RN+BB", *args], capsys)
    assert code == 2 and out == ""  # rejected before any run or progress bar
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert all(w in lines[0] for w in words)


def test_demo_two_parts_write_into_out_only(tmp_path, monkeypatch, capsys):
    cwd, out_dir = tmp_path / "cwd", tmp_path / "nested" / "demo"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    code, out, _ = run_cli(["demo", "--out", str(out_dir), "--requests", "2"], capsys)
    assert code == 0
    assert list(cwd.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == [
        "cwd", "nested"]
    names = sorted(p.name for p in out_dir.iterdir())  # no temporary files left behind
    assert names == ["part1-timeline.png", "part1-trace.json", "part2-timeline.png",
                     "part2-trace.json"]
    for png in out_dir.glob("*.png"):
        assert png.read_bytes()[:4] == b"\x89PNG"
    part1, part2 = out.split("Part 2")
    assert "Part 1" in part1 and "failsafe" in part1
    assert "bert-base:seq_len=32" in part2 and "roofline" in part2
    for name in schedulers():
        assert name in part1 and name in part2
