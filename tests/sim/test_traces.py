"""Request traces (CSV and JSON): good files and hostile ones."""

from __future__ import annotations

import json
import math

import pytest

from npuweave.errors import ConfigError
from npuweave.sim.traces import from_trace


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_trace_with_units_priorities_and_deadlines(tmp_path):
    path = write(tmp_path, "r.csv", "time,model,priority,deadline\n"
                 "0,resnet50,1,15ms\n1.5ms,bert-base,9,\n0.002,resnet50,,130ms\n")
    a = from_trace(path, ("resnet50", "bert-base"))
    assert a.time_s.tolist() == [0.0, 0.0015, 0.002]
    assert a.model.tolist() == [0, 1, 0]
    assert a.priority.tolist() == [1, 9, 1]
    assert a.deadline_s.tolist() == [0.015, math.inf, 0.13]


def test_json_trace_and_model_order_from_the_file(tmp_path):
    rows = [{"time_s": 0.1, "model": "b"}, {"arrival": "200ms", "model": "a", "priority": 3,
                                             "deadline_s": 0.05}]
    a = from_trace(write(tmp_path, "r.json", json.dumps({"requests": rows})))
    assert a.models == ("b", "a")
    assert a.model.tolist() == [0, 1] and a.priority.tolist() == [1, 3]
    assert a.time_s.tolist() == [0.1, 0.2] and a.deadline_s.tolist() == [math.inf, 0.05]


@pytest.mark.parametrize("body,where", [
    ("time,model\n0,a\n-1,a\n", "row 3: field 'time'"),
    ("time,model\n2ms,a\n1ms,a\n", "row 3: field 'time' = '1ms' is earlier"),
    ("time,model\n0,a\n1,zzz\n", "row 3: field 'model' = 'zzz'"),
    ("time,model\n5 furlongs,a\n", "row 2: field 'time'"),
    ("time,model\n1kg,a\n", "row 2: field 'time'"),
    ("time,model,deadline\n0,a,0\n", "row 2: field 'deadline'"),
    ("time,model,deadline\n0,a,3xs\n", "row 2: field 'deadline'"),
    ("time,model,priority\n0,a,0\n", "row 2: field 'priority'"),
    ("time,model,priority\n0,a,high\n", "row 2: field 'priority'"),
    ("time,model,colour\n0,a,red\n", "header: unknown column 'colour'"),
    ("time,model\n0,\n", "row 2: field 'model' is missing"),
    ("time,model\n0,a,extra\n", "row 2: more fields"),
    ("time,model\ninf,a\n", "row 2: field 'time'"),
    ("time,model\nnan,a\n", "row 2: field 'time'"),
    ("time,model\n", "no requests"),
    ("", "empty trace"),
])
def test_bad_csv_rows_name_file_row_and_field(tmp_path, body, where):
    path = write(tmp_path, "bad.csv", body)
    with pytest.raises(ConfigError) as info:
        from_trace(path, ("a", "b"))
    msg = str(info.value)
    assert str(path) in msg and where in msg and "\n" not in msg


@pytest.mark.parametrize("body,where", [
    ("{not json", "not valid JSON"),
    ('{"rows": []}', "list of request objects"),
    ('[1, 2]', "list of request objects"),
    ('[{"time": 0, "model": "a"}, {"time": "1s"}]', "request 1: field 'model' is missing"),
    ('[{"time": "1s", "model": "a"}, {"time": 0, "model": "a"}]', "request 1: field 'time'"),
])
def test_bad_json(tmp_path, body, where):
    path = write(tmp_path, "bad.json", body)
    with pytest.raises(ConfigError, match=where):
        from_trace(path, ("a",))


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        from_trace(tmp_path / "nope.csv")


def test_boolean_priority_in_json_is_rejected(tmp_path):
    path = write(tmp_path, "b.json", '[{"time": 0, "model": "a", "priority": true}]')
    with pytest.raises(ConfigError, match="request 0: field 'priority'"):
        from_trace(path, ("a",))
