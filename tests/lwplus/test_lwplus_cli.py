"""``npuweave capacity`` and ``npuweave reproduce layerweaver-plus``: bad input is one line and
exit 2 before any work; a small run writes its tables."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CAP = ["capacity", "--models", "resnet50,bert-base", "--ratio", "4:1",
       "--deadline", "15ms,130ms", "--requests", "100", "--windows", "0"]


def _run(args: list[str], cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "npuweave", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


@pytest.mark.parametrize("change, match", [
    (("--deadline", "0ms,130ms"), "deadline"),
    (("--deadline", "-5ms,130ms"), "deadline"),
    (("--ratio", "0:1"), "--ratio"),
    (("--ratio", "four"), "--ratio"),
    (("--standalone", "exact"), "--standalone"),
    (("--violations", "0%"), "--violations"),
    (("--models", "resnet50"), "two models"),
    (("--models", "resnet50,nosuchnet"), "nosuchnet"),
    (("--grouping", "per-batch"), "--grouping"),
    (("--max-inflight", "0"), "--max-inflight"),
    (("--max-inflight", "1000000000"), "--max-inflight"),  # out of memory before the bound
    (("--max-batch", "100000000"), "--max-batch"),  # costs per batch size: hung before
    (("--deadline", "15ms"), "--deadline"),
    (("--deadline", "15ms,130ms,5ms"), "--deadline"),
    (("--cost-model", "nosuch"), "nosuch"),
])
def test_capacity_bad_input(change: tuple[str, str], match: str) -> None:
    args = list(CAP)
    if change[0] in args:
        args[args.index(change[0]) + 1] = change[1]
    else:
        args += list(change)
    r = _run(args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and match in lines[0]
    assert "Traceback" not in r.stderr


def test_capacity_unreachable_load_says_so_with_the_number() -> None:
    """A 0.1 ms deadline is below ResNet-50's standalone time: even the lowest load misses."""
    args = list(CAP)
    args[args.index("--deadline") + 1] = "0.1ms,130ms"
    args += ["--scheduler", "baseline"]
    r = _run(args)
    assert r.returncode == 2
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error: unreachable load: even ") and "or more of its 100 requests" in line


def test_capacity_runs_and_writes_json(tmp_path) -> None:
    r = _run([*CAP, "--scheduler", "layerweaver-plus", "--json", "c.json", "--csv", "c.csv"],
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    assert rows[0]["scheduler"] == "lwplus-approx" and rows[0]["qps"] > 0
    assert rows[0]["missed"] < 0.01 * rows[0]["requests"]
    assert (tmp_path / "c.csv").read_text().startswith("models,")


@pytest.mark.parametrize("args, match", [
    (["--pairs", "RN+IC"], "one vision model"),
    (["--pairs", "RN+XX"], "XX"),
    (["--ratios", "0:1"], "--ratios"),
    (["--ratios", "3:1..1:3"], "powers of two"),
    (["--figures", "8"], "--figures"),
    (["--schedulers", "fcfs"], "fcfs"),
    (["--pairs", "IC+XL", "--figures", "7"], "Figure V.7"),
    (["--grouping", "per-batch"], "--grouping"),
    (["--max-inflight", "0"], "--max-inflight"),
    (["--max-inflight", "-3", "--grouping", "per-request"], "--max-inflight"),
    (["--max-batch", "100000000"], "--max-batch"),
    (["--figures", "5,6,9"], "--figures"),
    (["--deadlines", "15ms"], "--deadline"),
    (["--deadlines", "15ms,130ms,20ms"], "--deadline"),
    (["--cost-model", "nosuch"], "nosuch"),
    (["--seq-len", "0"], "--seq-len"),
    (["--seeds", "0,x"], "--seeds"),
    (["--ratios", "4:1", "--vision-nlp-ratios", "1:4"], "not both"),
])
def test_reproduce_bad_input(args: list[str], match: str) -> None:
    r = _run(["reproduce", "layerweaver-plus", *args])
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip().splitlines()
    assert len(line) == 1 and match in line[0]


@pytest.mark.parametrize("args, want", [
    ([], ("per-model-fifo", 4, False)),
    (["--grouping", "per-request", "--max-inflight", "2"], ("per-request", 2, False)),
    (["--inherit"], ("per-model-fifo", 4, True)),
])
def test_reproduce_passes_grouping_options_to_every_point(monkeypatch, args, want) -> None:
    """``--grouping``, ``--max-inflight`` and ``--inherit`` reach the ``ServeSetup`` of every
    point (Figures V.5-V.7); without them the defaults are the thesis's (per-model FIFO, no
    inheritance)."""
    from click.testing import CliRunner

    from npuweave.cli import cli
    from npuweave.experiments import lwplus_repro as rp

    seen: list = []
    monkeypatch.setattr(rp, "run_tasks", lambda tasks, *a, **k: seen.extend(tasks) or [])
    r = CliRunner().invoke(cli, ["reproduce", "layerweaver-plus", "--pairs", "RN+BB",
                                  "--vision-nlp-ratios", "1:1", *args])
    assert r.exit_code == 0, r.output
    figures = {t[1]["figure"] for t in seen}
    assert figures == {"V.5", "V.6", "V.6-ours", "V.7"}
    got = {(t[1]["setup"].grouping, t[1]["setup"].max_inflight, t[1]["setup"].inherit)
           for t in seen}
    assert got == {want}


def test_capacity_explains_its_columns(tmp_path) -> None:
    """Issue 25 item 7: a legend line, the first failing load and whether the interval
    straddles the budget are in the output; --help explains every column."""
    r = _run([*CAP, "--scheduler", "baseline", "--json", "c.json"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for piece in ("first_failed_qps", "significant", "qps_sure", "Wilson", "surely"):
        assert piece in r.stdout, piece
    row = json.loads((tmp_path / "c.json").read_text())["rows"][0]
    assert row["first_failed_qps"] > 0 and row["first_failed_qps"] >= row["first_crossing_qps"]
    assert row["straddles"] == (row["miss_ci_low"] <= 0.01 <= row["miss_ci_high"])
    helped = _run(["capacity", "--help"]).stdout
    for col in ("qps_sure", "failed_qps", "qps_fail_sure", "first_failed_qps", "significant",
                "--models order"):
        assert col in helped, col


def _tasks(monkeypatch, args: list[str]) -> tuple[list, str]:
    from click.testing import CliRunner

    from npuweave.cli import cli
    from npuweave.experiments import lwplus_repro as rp

    seen: list = []
    monkeypatch.setattr(rp, "run_tasks", lambda tasks, *a, **k: seen.extend(tasks) or [])
    r = CliRunner().invoke(cli, ["reproduce", "layerweaver-plus", "--pairs", "RN+BB",
                                  "--figures", "5", *args])
    assert r.exit_code == 0, r.output
    return seen, r.output


def test_one_ratio_convention_old_flag_still_works(monkeypatch) -> None:
    """Issue 25 item 8: ``--vision-nlp-ratios`` is in the pair's order (RN+BB at 1:4 is one RN
    request per four BB); the deprecated ``--ratios`` (NLP:vision) gives the same points with
    a note naming the new spelling."""
    new, _ = _tasks(monkeypatch, ["--vision-nlp-ratios", "1:4,2:1"])
    old, out = _tasks(monkeypatch, ["--ratios", "4:1,1:2"])
    assert [t[1]["ratio"] for t in new] == [t[1]["ratio"] for t in old]
    assert {t[1]["ratio"] for t in new} == {(1.0, 4.0), (2.0, 1.0)}
    assert all(t[1]["models"][0] == "resnet50" for t in new)  # ratio in models order
    assert "--vision-nlp-ratios 1:4,2:1" in out


def test_reproduce_defaults_to_the_thesis_setup(monkeypatch) -> None:
    tasks, _ = _tasks(monkeypatch, ["--vision-nlp-ratios", "1:1"])
    setup = tasks[0][1]["setup"]
    assert (setup.cost_model, setup.failsafe, setup.seeds) == ("maestro", True, (0, 1, 2))
    assert tasks[0][1]["models"] == ("resnet50", "bert-base:seq_len=384")
    tasks, _ = _tasks(monkeypatch, ["--vision-nlp-ratios", "1:1", "--cost-model",
                                    "systolic-ws", "--seq-len", "128", "--no-failsafe"])
    setup = tasks[0][1]["setup"]
    assert (setup.cost_model, setup.failsafe) == ("systolic-ws", False)
    assert tasks[0][1]["models"] == ("resnet50", "bert-base:seq_len=128")


def test_figure_6_contract_row_shape(monkeypatch, tmp_path) -> None:
    """``reproduce layerweaver-plus --figures 6 --json`` keeps its row shape at the thesis's
    loads (shortened runs here; the real command runs 60 s of arrivals per point)."""
    from click.testing import CliRunner

    from npuweave.cli import cli
    from npuweave.experiments import lwplus_repro as rp

    monkeypatch.setattr(rp, "FIG6_DURATION_S", 0.3)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["reproduce", "layerweaver-plus", "--figures", "6", "--json",
                                 "v6.json", "--requests", "200", "--seeds", "0"])
    assert r.exit_code == 0, r.output
    rows = json.loads((tmp_path / "v6.json").read_text())["rows"]
    v6 = [x for x in rows if x["figure"] == "V.6"]
    assert {(x["pair"], x["qps"]) for x in v6} == {("RN+BB", "800+200"), ("MN+BL", "7530+470")}
    assert {x["scheduler"] for x in v6} == {"baseline", "layerweaver", "lwplus-approx",
                                            "lwplus-precise"}
    want = {"RN+BB": ("miss_resnet50", "miss_bert-base"),
            "MN+BL": ("miss_mobilenetv2", "miss_bert-large")}
    for x in v6:
        for key in want[x["pair"]]:
            assert 0.0 <= x[key] <= 1.0, (x["pair"], key)
        assert x["deadlines"] == "15ms/130ms" and x["cost_model"] == "maestro"
    ours = [x for x in rows if x["figure"] == "V.6-ours"]
    assert len(ours) == 8 and all(x["load_ratio"] > 0 for x in ours)
