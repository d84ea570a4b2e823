"""``--cost-model`` given for an LLM run is used, not replaced by the LLM default.

``serve`` and ``capacity`` took the LLM default (``systolic-ws-db``) whenever ``--cost-model``
held the command's own default value, even when it was typed: ``serve --cost-model
systolic-ws`` ran ``systolic-ws-db`` and ``capacity --cost-model maestro`` (or any other) was
ignored. Under plain ``systolic-ws`` each decode fold pays its weight shift-in
(docs/LLM_SERVING.md), so its TBT is longer.
"""

import json

from tests.cli.test_schedule_cli import run_cli

SERVE = ["serve", "--models", "llm-tiny", "--npu", "tpuv5e-like", "--qps", "20", "--duration",
         "0.5s", "--prompt-len", "fixed:64", "--output-len", "fixed:16"]
CAP = ["capacity", "--models", "llm-tiny", "--npu", "tpuv5e-like", "--llm-scheduler", "vllm",
       "--slo", "ttft=1s,tbt=1ns:p99", "--probe-duration", "0.2s", "--start-qps", "50"]  # fails: halves


def _row(args, capsys, path):
    code, _, err = run_cli([*args, "--json", str(path)], capsys)
    assert code == 0, err
    return json.loads(path.read_text())


def test_serve_explicit_cost_model_is_used(capsys, tmp_path):
    default = _row(SERVE, capsys, tmp_path / "d.json")["rows"][0]
    db = _row([*SERVE, "--cost-model", "systolic-ws-db"], capsys, tmp_path / "db.json")["rows"][0]
    ws = _row([*SERVE, "--cost-model", "systolic-ws"], capsys, tmp_path / "ws.json")["rows"][0]
    assert default["tbt_p50_s"] == db["tbt_p50_s"]          # the LLM default is systolic-ws-db
    assert ws["tbt_p50_s"] > db["tbt_p50_s"]                # the shift-in per fold is paid


def test_save_config_keeps_the_llm_cost_model(capsys, tmp_path):
    code, _, err = run_cli([*SERVE, "--save-config", str(tmp_path / "a.yaml")], capsys)
    assert code == 0, err
    assert "cost-model" not in (tmp_path / "a.yaml").read_text()  # default: derived, not saved
    code, _, err = run_cli([*SERVE, "--cost-model", "systolic-ws", "--save-config",
                            str(tmp_path / "b.yaml")], capsys)
    assert code == 0, err
    assert "cost-model: systolic-ws" in (tmp_path / "b.yaml").read_text()
    again = _row(["serve", "--config", str(tmp_path / "b.yaml")], capsys, tmp_path / "r.json")
    ws = _row([*SERVE, "--cost-model", "systolic-ws"], capsys, tmp_path / "ws.json")
    assert again["rows"][0]["tbt_p50_s"] == ws["rows"][0]["tbt_p50_s"]


def test_capacity_cost_model_is_used(capsys, tmp_path):
    default = _row(CAP, capsys, tmp_path / "d.json")["probes"][0]
    roof = _row([*CAP, "--cost-model", "roofline"], capsys, tmp_path / "r.json")["probes"][0]
    assert default["qps"] == roof["qps"] == 50.0
    assert roof["tbt_p50_s"] != default["tbt_p50_s"]
