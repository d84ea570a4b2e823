"""Real MLPerf LoadGen runs against the simulated NPU (skipped without the loadgen extra)."""

from __future__ import annotations

import numpy as np
import pytest

from npuweave.errors import ConfigError
from npuweave.experiments.loadgen import (
    LoadgenSpec,
    check_spec,
    compare_with_replay,
    expected_latency_s,
    run_loadgen,
    sample_models,
)
from npuweave.experiments.loadgen_logs import invalid_reasons, latencies_s
from npuweave.hardware import preset

NPU = preset("memory-centric")


def test_sample_mix_is_proportional_and_contiguous():
    m = sample_models(1000, [4, 1])
    assert (m[:800] == 0).all() and (m[800:] == 1).all()
    assert np.bincount(sample_models(7, [1, 1, 1]), minlength=3).tolist() == [2, 3, 2]


def test_latency_lines_convert_to_npu_seconds():
    summary = {"99.00 percentile latency (ns)": "50000000", "Mean latency (ns)": "20000000",
               "Result is": "VALID"}
    assert latencies_s(summary, 10.0) == {"p99": 0.005, "mean": 0.002}


@pytest.mark.parametrize("change,needle", [
    ({"scenario": "Nope"}, "--scenario"),
    ({"qps": None}, "needs a QPS"),
    ({"qps": -3.0}, "needs a QPS"),
    ({"target_latency_s": None}, "--target-latency"),
    ({"time_scale": 0.0}, "--time-scale"),
    ({"mix": (1.0,)}, "--mix"),
    ({"mode": "FindPeakPerformance", "scenario": "Offline"}, "only with --scenario Server"),
])
def test_bad_settings_are_one_error(change, needle):
    base = dict(scenario="Server", models=("resnet50", "ncf"), npu=NPU, qps=100.0,
                target_latency_s=0.01)
    with pytest.raises(ConfigError, match=needle):
        check_spec(LoadgenSpec(**{**base, **change}))


def test_single_stream_run_is_valid_and_counts_match(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    # VALID needs LoadGen's early-stopping minimum of 64 queries (p90 at 99% confidence); ask
    # for them, as the README does: a count left to the minimum duration (1 s real, ~15 ms a
    # query) came to 63 on a loaded machine and the run was INVALID
    spec = LoadgenSpec("SingleStream", ("resnet50",), NPU, "layerweaver", time_scale=10.0,
                       min_duration_s=0.1, min_queries=64, target_latency_s=0.002)
    r = run_loadgen(spec, tmp_path)
    assert r.valid, r.summary
    assert r.queries == r.samples >= 64  # every LoadGen query became one simulated request
    assert (tmp_path / "mlperf_log_summary.txt").is_file()
    # SingleStream: one request at a time, so the NPU latency is the isolated time; LoadGen's
    # minimum can only add the device thread's wake-up delay to it.
    ours = r.npu_rows[0]["latency_p50_s"]
    assert ours <= r.latency_s["min"] <= ours * 1.5


def test_server_run_matches_the_virtual_replay(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    # 200 QPS of ResNet-50 (1.5 ms alone) loads the NPU ~30%; the 100 ms bound leaves room
    # for a busy machine's thread delays (x2 time scale: 5 s of real time, 500 queries, enough
    # for LoadGen's early-stopping test at p99 with no query over the bound)
    spec = LoadgenSpec("Server", ("resnet50",), NPU, "layerweaver", qps=200.0,
                       target_latency_s=0.1, time_scale=2.0, min_duration_s=2.5,
                       min_queries=500, seed=3)
    r = run_loadgen(spec, tmp_path)
    # light load, loose bound, enough queries for early stopping: VALID, unless the host
    # stalled the device thread for a good part of the bound (CI once saw p90 at 115 ms real
    # with p50 at 3 ms); then the stall must be on record, and the NPU side is still checked
    bound_real_s = spec.target_latency_s * spec.time_scale  # type: ignore[operator]
    assert r.valid or r.host_stall_s >= bound_real_s / 4, (r.host_stall_s, r.summary)
    assert r.queries == r.samples >= 500
    cmp = compare_with_replay(spec, r)
    assert cmp.queries_replay == r.queries
    assert cmp.replay_valid
    assert cmp.loadgen_latency_ok or not r.valid
    p50 = next(row for row in cmp.rows if row["latency"] == "p50")
    # the replay serves the same schedule without thread delays: never slower at the median
    assert p50["loadgen_s"] >= p50["replay_s"] * 0.99


def test_cli_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch):
    from npuweave.cli import main

    monkeypatch.chdir(tmp_path)
    cases = [(["--scenario", "SingleStream", "--models", "nope", "--out", "o1"], "nope"),
             (["--scenario", "SingleStream", "--models", "resnet50", "--min-duration", "0s",
               "--out", "o2"], "--min-duration"),
             (["--scenario", "Server", "--models", "resnet50", "--qps", "-3",
               "--target-latency", "10ms", "--out", "o3"], "--qps")]
    for args, needle in cases:
        with pytest.raises(SystemExit) as exit_:
            main(["loadgen", *args])
        err = capsys.readouterr().err.strip().splitlines()
        assert exit_.value.code == 2 and len(err) == 1 and needle in err[0], (args, err)
    assert list(tmp_path.iterdir()) == []


def test_expected_latency_defaults_to_one_query_alone():
    ss = LoadgenSpec("SingleStream", ("a", "b"), NPU, mix=(3.0, 1.0))
    # 3:1 mix of 1 ms and 5 ms alone: (3 * 1 + 1 * 5) / 4 = 2 ms
    assert expected_latency_s(ss, [0.001, 0.005]) == pytest.approx(0.002)
    ms = LoadgenSpec("MultiStream", ("a",), NPU, samples_per_query=8)
    assert expected_latency_s(ms, [0.001]) == pytest.approx(0.008)
    given = LoadgenSpec("SingleStream", ("a",), NPU, target_latency_s=0.05)
    assert expected_latency_s(given, [0.001]) == 0.05


def test_invalid_reasons_lists_unmet_checks_and_advice(tmp_path):
    # the layout of LoadGen 6.0's mlperf_log_summary.txt for an INVALID SingleStream run
    (tmp_path / "s.txt").write_text(
        "Result is : INVALID\n  Min duration satisfied : NO\n  Min queries satisfied : Yes\n"
        "  Early stopping satisfied: NO\nRecommendations:\n * Decrease the expected latency.\n"
        "Early Stopping Result:\n * Only processed 50 queries.\n\n"
        "=====\nAdditional Stats\n * not a reason\n")
    assert invalid_reasons(tmp_path / "s.txt") == (
        "Min duration satisfied: NO", "Early stopping satisfied: NO",
        "Decrease the expected latency.", "Only processed 50 queries.")
    assert invalid_reasons(tmp_path / "missing.txt") == ()


def test_readme_single_stream_example_is_valid_and_labelled(tmp_path, capsys, monkeypatch):
    """The README's SingleStream command (LoadGen's 64-query early-stopping minimum) is VALID;
    the three latency views are told apart and the priority row is named."""
    pytest.importorskip("mlperf_loadgen")
    from npuweave.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "160")
    main(["loadgen", "--scenario", "SingleStream", "--models", "resnet50", "--npu",
          "memory-centric", "--min-duration", "0.2s", "--min-queries", "64", "--out", "lg-ss"])
    out = capsys.readouterr().out
    assert "LoadGen's result: VALID" in out and "p90 latency" in out
    assert "LoadGen's measured latencies" in out and "simulated latencies" in out
    assert "priority 1" in out and "sim p99" in out


def test_a_host_stall_is_measured_and_reported(tmp_path, monkeypatch):
    pytest.importorskip("mlperf_loadgen")
    import threading
    import time

    from npuweave.experiments import loadgen

    real = threading.Condition

    class Stalling(real):  # type: ignore[misc,valid-type]
        stalls = 1

        def wait(self, timeout=None):  # one wait oversleeps by 0.4 s, as a paused host would
            got = super().wait(timeout)
            if Stalling.stalls and timeout:
                Stalling.stalls -= 1
                time.sleep(0.4)
            return got

    monkeypatch.setattr(loadgen.threading, "Condition", Stalling)
    spec = LoadgenSpec("SingleStream", ("resnet50",), NPU, "layerweaver", time_scale=10.0,
                       min_duration_s=0.05, min_queries=10, target_latency_s=0.002)
    r = run_loadgen(spec, tmp_path)
    assert 0.34 <= r.host_stall_s < 1.0  # the 0.4 s, less at most the 50 ms it asked for
