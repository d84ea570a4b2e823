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
                                  "--ratios", "1:1", *args])
    assert r.exit_code == 0, r.output
    figures = {t[1]["figure"] for t in seen}
    assert figures == {"V.5", "V.6", "V.7"}
    got = {(t[1]["setup"].grouping, t[1]["setup"].max_inflight, t[1]["setup"].inherit)
           for t in seen}
    assert got == {want}
