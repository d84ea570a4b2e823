"""Report outputs: Trace Event Format, atomic PNG timelines, CSV/JSON rows, rich tables."""

import csv
import io
import json

import pytest
from rich.console import Console

from npuweave.report import (
    chrome_trace,
    flatten,
    plot_timeline,
    rich_table,
    to_csv,
    write_csv,
    write_trace,
)
from npuweave.sim.records import Interval

IVS = [
    Interval("DRAM", "bert-base", 0, "fc1", 0.0, 40e-6),
    Interval("PE", "bert-base", 0, "fc1", 40e-6, 50e-6),
    Interval("DRAM", "resnet50", 0, "conv1", 40e-6, 45e-6),
    Interval("PE", "resnet50", 0, "conv1", 50e-6, 150e-6),
]


def _lane_names(doc):
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
               if e["ph"] == "M" and e["name"] == "thread_name"}
    return procs, threads


def test_trace_is_valid_trace_event_format(tmp_path):
    path = tmp_path / "t.json"
    write_trace(path, {"sequential": IVS[:2], "layerweaver": IVS})
    doc = json.loads(path.read_text())
    assert set(doc) == {"traceEvents", "displayTimeUnit"}
    for e in doc["traceEvents"]:
        assert e["ph"] in ("X", "M", "C")  # spans, names, the buffer counter
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if e["ph"] == "X":
            assert {"name", "ts", "dur", "cat", "args"} <= set(e)
            assert e["dur"] >= 0
    procs, threads = _lane_names(doc)
    assert procs == {1: "sequential", 2: "layerweaver"}
    assert threads == {(1, 1): "PE", (1, 2): "DRAM", (2, 1): "PE", (2, 2): "DRAM"}


def test_trace_durations_are_microseconds_on_the_right_lane():
    doc = chrome_trace(IVS)
    _, threads = _lane_names(doc)
    spans = [(threads[(e["pid"], e["tid"])], e["cat"], e["ts"], e["dur"])
             for e in doc["traceEvents"] if e["ph"] == "X"]
    # 40 us of bert-base fetch at t = 0; resnet50's conv1 computes 100 us from t = 50 us.
    assert spans[0] == ("DRAM", "bert-base", 0.0, pytest.approx(40.0))
    assert ("PE", "resnet50", pytest.approx(50.0), pytest.approx(100.0)) in spans
    assert len(spans) == len(IVS)


def test_timeline_png_is_written_atomically(tmp_path):
    path = tmp_path / "sub" / "timeline.png"
    fig = plot_timeline({"layerweaver": IVS, "sequential": IVS[:2]}, path, title="RN + BB")
    assert len(fig.axes) == 2  # the Figure comes back (notebooks show it inline)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in path.parent.iterdir()] == ["timeline.png"]  # no temp file left


def test_timeline_interrupted_while_saving_leaves_no_file(tmp_path, monkeypatch):
    import matplotlib.figure

    def half_write(self, fh, **kwargs):
        fh.write(b"\x89PNG partial")
        raise OSError("disk full")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", half_write)
    with pytest.raises(OSError, match="disk full"):
        plot_timeline(IVS, tmp_path / "bad.png")
    assert list(tmp_path.iterdir()) == []


def test_timeline_colours_by_callable(tmp_path):
    path = tmp_path / "by_lane.png"
    plot_timeline(IVS, path, color_by=lambda iv: iv.unit)
    assert path.stat().st_size > 1000


ROWS = [
    {"scheduler": "layerweaver", "stp": 1.5, "pe_utilization": 0.997,
     "throughput": {"resnet50": 100.0, "bert-base": 50.0}},
    {"scheduler": "sequential", "stp": 1.0, "pe_utilization": 0.5,
     "throughput": {"resnet50": 40.0, "bert-base": 30.0}},
]


def test_csv_flattens_nested_columns(tmp_path):
    assert flatten(ROWS[0])["throughput[bert-base]"] == 50.0
    path = tmp_path / "rows.csv"
    write_csv(path, ROWS)
    parsed = list(csv.DictReader(io.StringIO(path.read_text())))
    assert parsed[1]["scheduler"] == "sequential"
    assert float(parsed[0]["throughput[resnet50]"]) == 100.0
    assert path.read_text() == to_csv(ROWS)


def test_rich_table_formats_percent_and_columns():
    console = Console(width=160, record=True)
    console.print(rich_table(ROWS, title="RN + BB"))
    text = console.export_text()
    assert "99.7%" in text and "req/s resnet50" in text and "layerweaver" in text
