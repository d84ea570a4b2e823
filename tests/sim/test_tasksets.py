"""Task sets (trace rows with ``layer_latencies_s``) and per-request records (issues 20, 25).

The np-fcfs finish times are checked against a ten-line reference loop written here (one
request at a time in arrival order, each layer exactly its given time, nothing else); the
CLI contract is run as an outside check would run it, in an empty directory.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from npuweave.cli import main
from npuweave.errors import ConfigError
from npuweave.sim.tasksets import serve_tasks, task_set_from_rows


def _cli(args, capsys):
    """Run the CLI in-process: (exit code, stdout + stderr)."""
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out + err


def _rows(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    t, out = 0.0, []
    for i in range(n):
        t += rng.choice([0.0, rng.expovariate(300.0)])
        lat = [rng.uniform(1e-5, 2e-3) for _ in range(rng.randint(1, 10))]
        out.append({"id": f"t{i}", "model": f"m{i % 3}_L{len(lat)}", "arrival_s": t,
                    "priority": rng.choice([1, 3, 9]), "layer_latencies_s": lat})
    return out


def reference_fcfs(rows: list[dict]) -> list[float]:
    """Non-preemptive FCFS by hand: the PE takes the earliest arrival when it frees."""
    free, finish = 0.0, []
    for r in sorted(rows, key=lambda r: r["arrival_s"]):  # stable: ties keep file order
        clock = max(free, r["arrival_s"])
        for lat in r["layer_latencies_s"]:
            clock += lat
        free = clock
        finish.append(clock)
    return finish


@pytest.mark.parametrize("seed", range(40))
def test_np_fcfs_equals_the_reference_loop(seed):
    rows = _rows(seed, 12)
    res = serve_tasks(task_set_from_rows(rows, "t.json"), "np-fcfs")
    assert [r["finish_s"] for r in res.requests] == reference_fcfs(rows)
    assert [r["id"] for r in res.requests] == [r["id"] for r in rows]
    assert all(r["preemptions"] == 0 for r in res.requests)


def test_segments_are_maximal_runs_and_count_preemptions():
    # a (low, 3 layers of 1 ms) at 0; b (high, 1 layer of 1 ms) at 1.5 ms. p-hpf preempts a
    # at the end of its layer 1 (2 ms); b runs 2-3 ms; a resumes 3-4 ms.
    rows = [{"id": "a", "model": "x", "arrival_s": 0.0, "priority": 1,
             "layer_latencies_s": [1e-3] * 3},
            {"id": "b", "model": "y", "arrival_s": 1.5e-3, "priority": 9,
             "layer_latencies_s": [1e-3]}]
    res = serve_tasks(task_set_from_rows(rows, "t.json"), "p-hpf")
    segs = [(s["id"], round(s["start_s"] * 1e3, 9), round(s["end_s"] * 1e3, 9))
            for s in res.segments]
    assert segs == [("a", 0.0, 2.0), ("b", 2.0, 3.0), ("a", 3.0, 4.0)]
    assert [(r["id"], r["preemptions"], r["start_s"]) for r in res.requests] == [
        ("a", 1, 0.0), ("b", 0, 2e-3)]


def test_cli_contract_in_an_empty_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rows = _rows(7, 10)
    (tmp_path / "tasks.json").write_text(json.dumps(rows))
    for sched, extra in (("p-prema", ["--scheduler-opt", "reading=dysta"]), ("np-fcfs", []),
                         ("p-sjf", [])):
        code, text = _cli(["serve", "--arrivals", "trace:tasks.json", "--scheduler", sched,
                           *extra, "--preempt-at", "layer", "--json", "out.json"], capsys)
        assert code == 0, text
        out = json.loads((tmp_path / "out.json").read_text())
        assert [q["id"] for q in out["requests"]] == [q["id"] for q in rows]
        for q in out["requests"]:
            assert {"id", "model", "arrival_s", "start_s", "finish_s", "preemptions"} <= set(q)
        ends = [s["end_s"] for s in out["segments"]]
        assert ends == sorted(ends) and len(out["segments"]) >= len(rows)
        work = sum(s["end_s"] - s["start_s"] for s in out["segments"])
        assert work == pytest.approx(sum(sum(q["layer_latencies_s"]) for q in rows))


BAD = [
    ("empty", {"layer_latencies_s": []}, "non-empty list"),
    ("negative", {"layer_latencies_s": [1e-3, -1e-3]}, r"\[1\] = -0.001"),
    ("nan", {"layer_latencies_s": [math.nan]}, "finite"),
    ("not a list", {"layer_latencies_s": "1ms"}, "non-empty list"),
    ("too long", {"layer_latencies_s": [1e-6] * 100_001}, "at most 100000"),
    ("bad isolated", {"isolated_s": -1}, "isolated_s"),
    ("hours", {"layer_latencies_s": [1e300]}, "over an hour"),
    ("id list", {"id": [1, 2]}, "string or an integer"),
    ("unknown field", {"foo": 1}, "unknown field 'foo'"),
]


@pytest.mark.parametrize("name,change,msg", BAD, ids=[b[0] for b in BAD])
def test_bad_task_rows_are_one_line_errors(name, change, msg):
    rows = _rows(1, 3)
    rows[1].update(change)
    with pytest.raises(ConfigError, match=msg):
        task_set_from_rows(rows, "t.json")


@pytest.mark.parametrize("args,msg", [
    (["--scheduler", "p-prema", "--scheduler-opt", "reading=dystaa"], "reading"),
    (["--scheduler", "np-fcfs", "--preempt-at", "op"], "--preempt-at"),
    (["--scheduler", "np-fcfs", "--models", "resnet50"], "--models"),
    (["--scheduler", "np-fcfs", "--per-request", "x.txt"], "--per-request"),
    (["--scheduler", "np-fcfs", "--mixed"], "in every"),
])
def test_cli_bad_input_exits_2_in_one_line(tmp_path, monkeypatch, capsys, args, msg):
    monkeypatch.chdir(tmp_path)
    rows = _rows(3, 4)
    if "--mixed" in args:
        args = [a for a in args if a != "--mixed"]
        del rows[2]["layer_latencies_s"]
    (tmp_path / "tasks.json").write_text(json.dumps(rows))
    code, text = _cli(["serve", "--arrivals", "trace:tasks.json", *args], capsys)
    assert code == 2, text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and msg in lines[0], text


def test_cli_trace_of_a_task_set_shows_every_layer(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rows = _rows(5, 4)
    (tmp_path / "tasks.json").write_text(json.dumps(rows))
    code, text = _cli(["serve", "--arrivals", "trace:tasks.json", "--scheduler", "np-fcfs",
                       "--trace", "t.json"], capsys)
    assert code == 0, text
    events = json.loads((tmp_path / "t.json").read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    spans = [e for e in events if e.get("ph") == "X"]
    assert len(spans) == sum(len(r["layer_latencies_s"]) for r in rows)


def test_cli_many_labels_keep_every_row_in_json_and_a_short_screen(tmp_path, monkeypatch,
                                                                   capsys):
    """Every request its own label (the worst case for per-label work): the screen shows at
    most ``SCREEN_MODELS`` per-model rows and says how many more there are; ``--json`` keeps
    one row per label, and the records are those of the same run served in-process."""
    from npuweave.cli.serve import SCREEN_MODELS

    monkeypatch.chdir(tmp_path)
    rows = _rows(11, SCREEN_MODELS + 12)
    for i, r in enumerate(rows):
        r["model"] = f"m{i}_L{len(r['layer_latencies_s'])}"
    (tmp_path / "tasks.json").write_text(json.dumps(rows))
    code, text = _cli(["serve", "--arrivals", "trace:tasks.json", "--scheduler", "np-fcfs",
                       "--preempt-at", "layer", "--json", "out.json"], capsys)
    assert code == 0, text
    assert "12 more per-model rows" in text and f"({len(rows)} models)" in text
    assert f"model m{SCREEN_MODELS - 1}_" in text and f"model m{SCREEN_MODELS}_" not in text
    out = json.loads((tmp_path / "out.json").read_text())
    assert sorted(r["name"] for r in out["rows"] if r["scope"] == "model") == sorted(
        r["model"] for r in rows)
    ref = serve_tasks(task_set_from_rows(rows, "tasks.json"), "np-fcfs")
    assert [q["finish_s"] for q in out["requests"]] == [q["finish_s"] for q in ref.requests]
