"""``npuweave ir``: info, validate (exit 1 on violations, 2 on bad files), timeline, simulate."""

from __future__ import annotations

import json

import pytest
from irdata import B1, needs_data, raw, tiny_ir

from npuweave.cli import main
from npuweave.compile.gemini.units import parse_bandwidth, parse_frequency
from npuweave.errors import ConfigError


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(["ir", *args])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def tiny(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny_ir()))
    return path


@needs_data
def test_info_on_published_file(capsys):
    code, out, _ = run(capsys, "info", str(B1))
    assert code == 0
    assert "69" in out and "pe: 37, vp: 32" in out
    assert "22,099,712" in out  # DRAM weight bytes (hand count in test_ir_load)
    assert "1,530,664 cycles" in out  # sum of the 69 time fields (plain json sum below)
    assert sum(w["time"] for w in raw(B1)["0"]) == 1_530_664


def test_validate_clean_exits_0(capsys, tiny):
    code, out, _ = run(capsys, "validate", str(tiny))
    assert code == 0 and "OK" in out


def test_validate_violations_exit_1_one_per_line(capsys, tmp_path):
    doc = tiny_ir()
    doc["0"][1]["ofmap_size"] = 1
    doc["0"][0]["buffer"][0]["size"] = 801
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "validate", str(path))
    assert code == 1
    lines = out.strip().splitlines()
    assert sorted(lines) == sorted([
        '$["0"][0].buffer[0].size: [size] 801 bytes, but the ifmap rule gives 800',
        '$["0"][1].ofmap_size: [ofmap-size] 1, but the ofmaps add up to 800',
    ])
    assert "2 violation(s)" in err


def test_validate_lists_checks(capsys):
    code, out, _ = run(capsys, "validate", "--list", "x.json")
    assert code == 0 and "buffer-overlap" in out and "tile-coverage" in out


@pytest.mark.parametrize("content", ["{ not json", '{"0": []}'])
def test_unreadable_file_exits_2_in_one_line(capsys, tmp_path, content):
    path = tmp_path / "x.json"
    path.write_text(content)
    for cmd in ("info", "validate", "simulate"):
        code, out, err = run(capsys, cmd, str(path))
        assert code == 2 and err.count("\n") == 1 and err.startswith("error: x.json")


def test_simulate_prints_makespan_and_sum(capsys, tiny):
    code, out, _ = run(capsys, "simulate", str(tiny), "--dram-bw", "8kB/s", "--clock", "1kHz")
    assert code == 0
    assert "makespan            500.000 ms" in out  # hand log in test_ir_simulate
    assert "sum of time fields  300.000 ms" in out


def test_simulate_rejects_bad_bandwidth(capsys, tiny):
    code, _, err = run(capsys, "simulate", str(tiny), "--dram-bw", "16")  # no unit
    assert code == 2 and "bandwidth" in err


def test_timeline_writes_png_and_trace(capsys, tiny, tmp_path):
    png, trace = tmp_path / "t.png", tmp_path / "t.json"
    code, _, _ = run(capsys, "timeline", str(tiny), "-o", str(png), "--trace", str(trace),
                     "--dram-bw", "8kB/s", "--clock", "1kHz")
    assert code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    events = json.loads(trace.read_text())["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    # the shared writer (npuweave.report.trace) names an event "<kind>:<name>"
    assert sorted(e["name"] for e in complete) == ["fmap:fmap #0", "pe:conv", "store:store #3",
                                                   "vp:relu", "weight:weight #1"]
    conv = next(e for e in complete if e["name"] == "pe:conv")
    assert (conv["ts"], conv["dur"]) == (pytest.approx(0.2e6), pytest.approx(0.2e6))  # us
    counters = [e for e in events if e["ph"] == "C"]
    assert [c["args"]["weight"] for c in counters] == [0, 320]  # L2 bytes per snapshot


@pytest.mark.parametrize("text,value", [
    ("16GB/s", 16e9), ("16 GB/s", 16e9), ("900MB/s", 9e8), ("1GiB/s", 2**30),
    ("8kB/s", 8e3), ("512B/s", 512.0), ("16Gb/s", 2e9),  # b: bits, as in NPU specs
])
def test_parse_bandwidth(text, value):
    assert parse_bandwidth(text) == value


@pytest.mark.parametrize("text", ["fast", "2e9", "16G", "-1GB/s", "0GB/s", "", "16GHz"])
def test_parse_bandwidth_rejects(text):
    with pytest.raises(ConfigError):
        parse_bandwidth(text)


@pytest.mark.parametrize("text,value", [("1GHz", 1e9), ("800 MHz", 8e8), ("1kHz", 1e3),
                                        ("1ghz", 1e9)])
def test_parse_frequency(text, value):
    assert parse_frequency(text) == value
