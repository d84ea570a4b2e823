"""``--config run.yaml`` / ``--save-config`` on schedule and serve; ``reproduce layerweaver
--setup`` (the former ``--config``, still accepted)."""

from __future__ import annotations

import json

import pytest
import yaml
from test_schedule_cli import run_cli as run  # (exit code, stdout, stderr) of one CLI call

SERVE = """\
models: [ncf, mobilenetv2]     # a list or the flag's comma text
qps: [200, 100]
duration: 20ms
scheduler: fcfs
cost-model: roofline
traffic: false
"""


def test_serve_reads_the_file_and_flags_override_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text(SERVE)
    code, _, err = run(["serve", "--config", "run.yaml", "--scheduler", "sjf",
                        "--json", "a.json"], capsys)
    assert code == 0, err
    info = json.loads((tmp_path / "a.json").read_text())
    assert info["models"] == ["ncf", "mobilenetv2"] and info["cost_model"] == "roofline"
    assert info["traffic"] is False and info["scheduler"].startswith("sjf")  # the flag won


def test_save_config_repeats_the_run_exactly(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["schedule", "--models", "ncf,mobilenetv2", "--requests", "2", "--cost-model",
            "roofline", "--compare", "sequential", "--json", "first.json"]
    code, _, err = run([*args, "--save-config", "saved.yaml"], capsys)
    assert code == 0, err
    saved = yaml.safe_load((tmp_path / "saved.yaml").read_text())
    # every option's value, defaults included, under the flags' names
    assert saved["models"] == "ncf,mobilenetv2" and saved["cost-model"] == "roofline"
    assert saved["npu"] == "memory-centric" and saved["batch"] == 1
    code, _, err = run(["schedule", "--config", "saved.yaml", "--json", "again.json"], capsys)
    assert code == 0, err
    first = json.loads((tmp_path / "first.json").read_text())
    again = json.loads((tmp_path / "again.json").read_text())
    assert first == again


def test_every_bad_field_is_reported_at_once(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text("modles: ncf\nseed: abc\nrequests: 2\nbatch: two\n"
                                       "colour: red\nnpu: {a: 1}\n")
    code, out, err = run(["schedule", "--config", "bad.yaml", "--json", "x.json"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    for word in ("bad.yaml", "'modles'", "did you mean 'models'", "'seed'", "'batch'",
                 "'colour'", "'npu'"):
        assert word in lines[0], (word, lines[0])
    assert "'requests'" not in lines[0]
    assert list(tmp_path.iterdir()) == [tmp_path / "bad.yaml"]  # nothing ran


@pytest.mark.parametrize("text, words", [
    ("- a\n", ["a mapping"]), ("a: [\n", ["bad2.yaml"]), ("", ["--models"])])
def test_malformed_run_configs_are_one_line(tmp_path, capsys, monkeypatch, text, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad2.yaml").write_text(text)
    code, _, err = run(["serve", "--config", "bad2.yaml"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and all(w in lines[0] for w in words), err


def test_reproduce_setup_and_its_old_name(capsys):
    for flag in ("--setup", "--config"):
        code, _, err = run(["reproduce", "layerweaver", "--pairs", "RN+BB", flag, "nope"], capsys)
        assert code == 2 and "'nope'" in err and "systolic" in err
    code, _, err = run(["reproduce", "layerweaver", "--pairs", "RN+BB", "--setup", "thesis",
                        "--config", "systolic"], capsys)
    assert code == 2 and "contradicts" in err


@pytest.mark.parametrize("bad", [["--qps", "abc"], ["--scheduler", "nosuch"],
                                 ["--models", "nosuchmodel"]])
def test_a_rejected_run_saves_no_config(tmp_path, capsys, monkeypatch, bad):
    # the config used to be written before the options were checked
    monkeypatch.chdir(tmp_path)
    args = ["serve", "--models", "ncf", "--qps", "100", "--duration", "20ms", "--cost-model",
            "roofline", *bad, "--save-config", "saved.yaml"]
    code, _, err = run(args, capsys)
    assert code == 2 and err.startswith("error:")
    assert not (tmp_path / "saved.yaml").exists()
