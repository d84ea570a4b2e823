"""Sweeps: spec validation, identical rows from every executor, streaming, resume, plots."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npuweave.errors import ConfigError
from npuweave.experiments import compare
from npuweave.experiments.sweep import (
    load_sweep,
    read_results,
    run_point,
    run_sweep,
    sweep_from_dict,
)
from npuweave.experiments.sweep.store import CsvStore, columns
from npuweave.hardware import preset
from npuweave.report.sweep_plot import sweep_series

SMALL = {"kind": "schedule", "fixed": {"requests": 2, "npu": "memory-centric"},
         "axes": {"models": ["RN,BB", "RN,ncf"], "scheduler": ["sequential", "layerweaver"],
                  "batch": [1, 2]}}


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "elapsed_s"} for r in rows]


def test_every_bad_field_is_reported_at_once():
    raw = {"kind": "schedule", "colour": 1, "mode": "zap",
           "fixed": {"batch": 0, "npu.dram_bw": "fast", "npu.bogus": 3},
           "axes": {"scheduler": ["layerwever"], "seed": []}}
    with pytest.raises(ConfigError) as err:
        sweep_from_dict(raw, "exp.yaml")
    msg = str(err.value)
    assert msg.startswith("exp.yaml: invalid sweep spec")
    for piece in ("'colour'", "'zap'", "axes.seed", "'batch'", "'fast'", "'bogus'",
                  "did you mean 'layerweaver'", "missing setting 'models'"):
        assert piece in msg, piece
    assert "\n" not in msg


def test_zip_needs_equal_lengths_and_limit_counts_points():
    with pytest.raises(ConfigError, match="mode 'zip' needs lists of one length"):
        sweep_from_dict({"kind": "profile", "mode": "zip",
                         "axes": {"models": ["RN", "BB"], "batch": [1, 2, 4]}})
    with pytest.raises(ConfigError, match="over the limit of 3"):
        sweep_from_dict({"kind": "profile", "max_points": 3,
                         "axes": {"models": ["RN", "BB"], "batch": [1, 2]}})
    spec = sweep_from_dict({"kind": "profile", "mode": "zip",
                            "axes": {"models": ["RN", "BB"], "batch": [1, 2]}})
    assert [(p.as_dict()["models"], p.as_dict()["batch"]) for p in spec.points] == [
        (("RN",), 1), (("BB",), 2)]


def test_points_are_hashable_stable_and_deduplicated():
    a = sweep_from_dict({"kind": "profile", "axes": {"models": ["RN", "RN"]}})
    b = sweep_from_dict({"kind": "profile", "fixed": {"models": "RN"}})
    assert len(a.points) == 1 and a.points == b.points
    assert a.points[0].point_id == b.points[0].point_id
    assert len({a.points[0], b.points[0]}) == 1
    c = sweep_from_dict({"kind": "profile", "fixed": {"models": "RN", "batch": 2}})
    assert c.points[0].point_id != a.points[0].point_id


def test_schedule_row_equals_compare():
    """A schedule point's metrics are what ``compare`` (npuweave schedule) reports."""
    spec = sweep_from_dict({"kind": "schedule", "fixed": {
        "models": "RN,BB", "scheduler": "layerweaver", "requests": 3}})
    row = run_point(spec.points[0])
    rows, _ = compare(["RN", "BB"], preset("memory-centric"), schedulers=["layerweaver"],
                      requests=3)
    for key in ("stp", "antt", "fairness", "pe_utilization", "dram_utilization"):
        assert row[key] == pytest.approx(rows[0][key], rel=1e-12), key
    assert row["throughput_total"] == pytest.approx(sum(rows[0]["throughput"].values()))


def test_npu_override_changes_only_that_field():
    """Halving DRAM bandwidth doubles the memory time of the same bytes (no latency on
    memory-centric), and leaves compute time alone: worked from t = bytes / bw."""
    spec = sweep_from_dict({"kind": "profile", "fixed": {"models": "RN"},
                            "axes": {"npu.dram_bw": ["100 GB/s", "50 GB/s"]}})
    fast, slow = (run_point(p) for p in spec.points)
    assert fast["dram_bytes"] == slow["dram_bytes"] > 0
    assert fast["memory_s"] == pytest.approx(fast["dram_bytes"] / 100e9)
    assert slow["memory_s"] == pytest.approx(fast["dram_bytes"] / 50e9)
    assert slow["compute_s"] == fast["compute_s"]


def test_bad_point_options_are_refused_before_any_point():
    # issue 24: checked per point, a bad option became an error row after the others ran
    with pytest.raises(ConfigError, match="no option 'nope'"):
        sweep_from_dict({"kind": "schedule", "fixed": {"models": "RN,BB", "requests": 2},
                         "axes": {"options": [{}, {"nope": 1}]}})


def test_failed_point_is_a_row_not_a_crash(monkeypatch):
    import dataclasses

    from npuweave.errors import NpuweaveError
    from npuweave.experiments.sweep import kinds

    real = kinds.KINDS["schedule"]

    def run(params, standalone):  # a point that fails only when it runs
        if params["requests"] == 3:
            raise NpuweaveError("no option 'nope'")
        return real.run(params, standalone)

    monkeypatch.setitem(kinds.KINDS, "schedule", dataclasses.replace(real, run=run))
    spec = sweep_from_dict({"kind": "schedule", "fixed": {"models": "RN,BB"},
                            "axes": {"requests": [2, 3]}})
    report = run_sweep(spec)
    assert [r["status"] for r in report.rows] == ["ok", "error"]
    assert "no option 'nope'" in report.rows[1]["error"]
    assert report.failed == 1 and report.rows[1]["stp"] is None


def test_serial_and_pool_give_identical_rows(tmp_path):
    spec = sweep_from_dict(SMALL)
    serial = run_sweep(spec, tmp_path / "s.csv", jobs=1)
    pooled = run_sweep(spec, tmp_path / "p.csv", jobs=2)
    assert _strip(serial.rows) == _strip(pooled.rows)
    on_disk = sorted(_strip(read_results(tmp_path / "p.csv")), key=lambda r: r["point_id"])
    assert on_disk == sorted(_strip(read_results(tmp_path / "s.csv")),
                             key=lambda r: r["point_id"])
    assert len(on_disk) == len(spec.points) == 8


def test_dask_local_cluster_gives_identical_rows():
    pytest.importorskip("dask.distributed")
    spec = sweep_from_dict(SMALL)
    assert _strip(run_sweep(spec, dask="local:2").rows) == _strip(run_sweep(spec).rows)


def test_parquet_dataset_reads_into_pandas(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    spec = sweep_from_dict(SMALL)
    run_sweep(spec, tmp_path / "r.parquet")
    df = pd.read_parquet(tmp_path / "r.parquet")
    assert len(df) == 8 and set(df["scheduler"]) == {"sequential", "layerweaver"}
    assert df["stp"].dtype.kind == "f" and df["batch"].dtype.kind == "i"
    assert run_sweep(spec, tmp_path / "r.parquet", resume=True).ran == 0


def test_existing_output_needs_resume_or_overwrite(tmp_path):
    spec = sweep_from_dict({"kind": "profile", "fixed": {"models": "ncf"}})
    out = tmp_path / "r.csv"
    run_sweep(spec, out)
    with pytest.raises(ConfigError, match="--resume"):
        run_sweep(spec, out)
    assert run_sweep(spec, out, overwrite=True).ran == 1
    assert len(read_results(out)) == 1
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(ConfigError, match="not a regular file"):
        run_sweep(spec, tmp_path / "d.csv")


def test_torn_last_line_is_dropped_on_resume(tmp_path):
    spec = sweep_from_dict({"kind": "profile", "axes": {"models": ["ncf", "RN", "BB"]}})
    out = tmp_path / "r.csv"
    run_sweep(spec, out)
    text = out.read_text()
    out.write_text(text[: len(text) - 7])  # a kill in the middle of the last row
    store = CsvStore(out, columns(spec))
    assert len(store.existing_ids()) == 2
    assert run_sweep(spec, out, resume=True).ran == 1
    ids = [r["point_id"] for r in read_results(out)]
    assert sorted(ids) == sorted(p.point_id for p in spec.points)


def test_resume_after_killing_the_pool_loses_and_duplicates_nothing(tmp_path):
    spec_path = tmp_path / "exp.yaml"
    spec_path.write_text(
        "kind: schedule\nfixed: {models: 'RN,BB', requests: 12}\n"
        "axes:\n  scheduler: [sequential, layerweaver, fair]\n  seed: [0, 1, 2, 3]\n"
        "  batch: [1, 2, 3]\n")
    out = tmp_path / "r.csv"
    env = {**os.environ, "NPUWEAVE_SWEEP_FLUSH_ROWS": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cmd = [sys.executable, "-m", "npuweave", "sweep", str(spec_path), "--jobs", "2",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_text().count("\n") >= 4:  # header + 3 rows
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the parent and its pool workers
    proc.wait()
    before = out.read_text()
    first = [r["point_id"] for r in csv.DictReader(before.splitlines())]
    assert 3 <= len(first) <= len(load_sweep(spec_path).points)
    done = subprocess.run([*cmd, "--resume"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    rows = read_results(out)
    ids = [r["point_id"] for r in rows]
    assert len(ids) == len(set(ids)) == 36
    assert set(ids) == {p.point_id for p in load_sweep(spec_path).points}
    kept = out.read_text()[: len(before.rstrip("\n").rsplit("\n", 1)[0])]
    assert before.startswith(kept)  # every row written before the kill is still there


def test_sweep_series_averages_seeds_by_hand():
    rows = [{"status": "ok", "batch": b, "seed": s, "scheduler": "x", "stp": v}
            for b, s, v in [(1, 0, 1.0), (1, 1, 2.0), (4, 0, 3.0), (4, 1, 5.0)]]
    rows.append({"status": "error", "batch": 8, "seed": 0, "scheduler": "x", "stp": None})
    series = sweep_series(rows, "stp", "batch", ["batch", "seed", "scheduler"])
    assert series == {"all": [(1, 1.5, 1.0, 2.0), (4, 4.0, 3.0, 5.0)]}


def test_cli_errors_are_one_line(tmp_path, capsys, monkeypatch):
    from npuweave.cli import main

    monkeypatch.chdir(tmp_path)

    spec = tmp_path / "e.yaml"
    spec.write_text("kind: profile\nfixed: {models: ncf}\n")
    cases = [
        ([str(spec), "--plot", "nonsense.png"], "METRIC_vs_SETTING"),
        ([str(spec), "--plot", "stp_vs_batch.png"], "not a metric"),
        ([str(spec), "--plot", "macs_vs_colour.png"], "not a setting"),
        ([str(spec), "--resume"], "--resume needs --out"),
        ([str(spec), "--out", "r.txt"], "unknown format"),
        ([str(tmp_path / "missing.yaml")], "not found"),
        ([str(spec), "--dask", "local:0"], "local:N"),
    ]
    for args, needle in cases:
        with pytest.raises(SystemExit) as exit_:
            main(["sweep", *args])
        out = capsys.readouterr()
        assert exit_.value.code == 2, (args, out)
        lines = [ln for ln in (out.out + out.err).splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], \
            (args, lines)
    assert not list(tmp_path.glob("*.png")) and not (tmp_path / "r.txt").exists()


def test_serve_row_equals_a_direct_serve_run():
    from npuweave.sim.arrivals import poisson
    from npuweave.sim.serving import serve

    spec = sweep_from_dict({"kind": "serve", "fixed": {
        "models": "RN,BB", "qps": [300, 80], "duration": "0.1s", "deadline": "15ms,130ms",
        "seed": 7, "scheduler": "aimt"}})
    row = run_point(spec.points[0])
    arr = poisson(("RN", "BB"), (300.0, 80.0), 0.1, 7, deadline_s=(0.015, 0.13))
    direct = serve(["RN", "BB"], preset("memory-centric"), arr, "aimt", seed=7).rows[0]
    for key in ("served", "throughput_rps", "antt", "deadline_violation", "latency_p99_s"):
        assert row[key] == direct[key], key


def test_serve_lists_need_one_value_per_model():
    with pytest.raises(ConfigError, match="'qps': 1 values for 2 models"):
        sweep_from_dict({"kind": "serve", "fixed": {"models": "RN,BB"},
                         "axes": {"qps": ["300,80", "300"]}})
    with pytest.raises(ConfigError) as err:
        sweep_from_dict({"kind": "serve", "fixed": {"models": "RN,BB", "duration": "0s",
                                                     "deadline": "0ms,130ms"},
                         "axes": {"qps": ["a,20"], "batching": ["window:1ms:max0"]}})
    for piece in ("--duration", "--deadline", "--qps", "--batching"):
        assert piece in str(err.value)


def test_capacity_row_equals_capacity_row_directly():
    from npuweave.experiments.lwplus import ServeSetup, capacity_row

    spec = sweep_from_dict({"kind": "capacity", "fixed": {
        "models": "resnet50,bert-base", "ratio": "4:1", "requests": 300,
        "scheduler": "lwplus-approx"}})
    row = run_point(spec.points[0])
    direct = capacity_row(("resnet50", "bert-base"), (4.0, 1.0), (0.015, 0.13), "lwplus-approx",
                          ServeSetup(requests=300))
    assert row["status"] == "ok"
    for key in ("qps", "stp", "miss_rate", "trials"):
        assert row[key] == direct[key], key
    with pytest.raises(ConfigError, match="ratio"):
        sweep_from_dict({"kind": "capacity", "fixed": {"models": "RN,BB", "ratio": "0:1"}})


@pytest.mark.parametrize("text,needle", [
    ("kind: schedule\nkind: profile\n", "duplicate key 'kind'"),
    ("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcde", "bcdef")),
     "expands to more than"),
    ("kind: !!python/object:os.system x\n", "plain YAML only"),
    ("[1, 2\n", "not valid YAML"),
])
def test_spec_files_are_read_with_the_bounded_loader(tmp_path, text, needle):
    spec = tmp_path / "e.yaml"
    spec.write_text(text)
    with pytest.raises(ConfigError, match=needle):
        load_sweep(spec)
