"""``npuweave`` LLM commands end to end, and hostile input: one ``error:`` line, exit 2."""

import json

import pytest

from tests.cli.test_schedule_cli import run_cli

SERVE = ["serve", "--models", "llm-tiny", "--npu", "tpuv5e-like", "--qps", "20",
         "--duration", "0.5s", "--prompt-len", "uniform:lo=8,hi=64", "--output-len", "fixed:8"]


def test_models_family_llm(capsys):
    code, out, _ = run_cli(["models", "--family", "llm"], capsys)
    assert code == 0 and "llama-3-8b" in out and "mistral-7b" in out and "opt-13b" in out


def test_profile_phases(capsys):
    code, out, _ = run_cli(["profile", "llama-3-8b:phase=decode:batch=4:context=2048",
                            "--npu", "tpuv5e-like", "--quiet"], capsys)
    assert code == 0 and "memory-bound" in out
    code, out, _ = run_cli(["profile", "llama-3-8b:phase=prefill:tokens=512", "--npu",
                            "tpuv5e-like", "--quiet"], capsys)
    assert code == 0 and "compute-bound" in out


@pytest.mark.parametrize("sched", ["orca", "vllm", "sarathi:chunk=64", "layerweaver",
                                   "disagg:1+1"])
def test_serve_every_scheduler_writes_json(sched, capsys, tmp_path):
    path = tmp_path / "o.json"
    code, out, err = run_cli([*SERVE, "--llm-scheduler", sched, "--slo", "ttft=1s,tbt=100ms",
                              "--json", str(path)], capsys)
    assert code == 0, err
    doc = json.loads(path.read_text())
    row = doc["rows"][0]
    for key in ("ttft_p50_s", "ttft_p99_s", "tbt_p50_s", "tbt_p99_s", "tokens_per_s",
                "goodput_rps"):
        assert key in row
    assert len(doc["requests"]) == row["requests"] > 0
    assert all(r["ttft_s"] > 0 for r in doc["requests"])
    assert doc["kv_occupancy"]["total_blocks"] > 0


BAD = [
    (["profile", "llama-3-8b:phase=prefill:tokens=9000", "--npu", "tpuv5e-like"], "maximum"),
    (["profile", "llama-3-8b:phase=decode:batch=8:context=8193", "--npu", "tpuv5e-like"],
     "maximum"),
    (["profile", "llama-3-8b:phase=decode:batch=0", "--npu", "tpuv5e-like"], "batch"),
    (["profile", "llama-3-8b:phase=train", "--npu", "tpuv5e-like"], "phase"),
    ([*SERVE, "--llm-scheduler", "fcfs"], "unknown LLM scheduler"),
    # options of layer-wise serving were accepted and ignored (no --per-request file written)
    ([*SERVE, "--per-request", "r.csv"], "not used by LLM serving"),
    ([*SERVE, "--prompt-len", "fixed:1.5"], "whole numbers"),
    ([*SERVE, "--slo", "ttft=1s,ttft=2s"], "given twice"),
    (["serve", "--models", "resnet50", "--qps", "100", "--duration", "20ms", "--prompt-len",
      "fixed:5"], "need an LLM"),
    (["capacity", "--models", "llm-tiny", "--npu", "tpuv5e-like", "--llm-scheduler", "vllm",
      "--slo", "ttft=1s:p99", "--ratio", "1:1"], "not used by an LLM capacity"),
    (["capacity", "--models", "resnet50,bert-base", "--ratio", "1e300:1", "--deadline",
      "15ms,130ms"], "at most"),
    ([*SERVE, "--scheduler", "p-prema"], "not used by LLM serving"),
    ([*SERVE, "--batching", "window:1ms:max4"], "not used by LLM serving"),
    ([*SERVE, "--llm-scheduler", "sarathi:chunk=0"], "chunk"),
    ([*SERVE, "--llm-scheduler", "disagg:1"], "disagg:P+D"),
    ([*SERVE, "--prompt-len", "fixed:0"], "positive"),
    ([*SERVE, "--prompt-len", "fixed:-5"], "positive"),
    ([*SERVE, "--output-len", "lognormal:mean=-1,sigma=1"], "positive"),
    ([*SERVE, "--prompt-len", "fixed:500", "--output-len", "fixed:100"], "maximum context"),
    # a fixed prompt beyond the context with a lognormal output was clamped silently (exit 0)
    ([*SERVE, "--prompt-len", "fixed:999999"], "maximum context"),
    ([*SERVE, "--qps", "-1"], "qps"),
    ([*SERVE, "--qps", "1e9", "--duration", "1000s"], "over the limit"),
    ([*SERVE, "--slo", "tbt=fast"], "not a time"),
    (["serve", "--models", "llama-3-70b", "--npu", "tpuv5e-like"], "no room"),
    (["serve", "--models", "mistral-7b", "--npu", "tpuv5e-like", "--prompt-len",
      "fixed:30000", "--output-len", "fixed:10"], "cannot hold one request"),
    (["serve", "--models", "llm-tiny", "--npu", "prema"], "global_mem_bytes"),
    (["serve", "--models", "resnet50", "--llm-scheduler", "vllm"], "need an LLM"),
    (["capacity", "--models", "llm-tiny", "--npu", "tpuv5e-like", "--llm-scheduler", "vllm",
      "--slo", "ttft=1s,tbt=100ms"], "percentile"),
]


@pytest.mark.parametrize(("args", "words"), BAD, ids=[" ".join(a[:4]) + w for a, w in BAD])
def test_bad_input_is_one_line_exit_2(args, words, capsys):
    code, out, err = run_cli(args, capsys)
    assert code == 2, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], err


def test_trace_shows_phases(capsys, tmp_path):
    path = tmp_path / "t.json"
    code, _, err = run_cli([*SERVE, "--llm-scheduler", "sarathi:chunk=16", "--trace",
                            str(path)], capsys)
    assert code == 0, err
    events = json.loads(path.read_text())["traceEvents"]
    cats = {e.get("cat") for e in events if e.get("ph") == "X"}
    assert {"prefill", "decode"} & cats and cats <= {"prefill", "decode", "mixed"}


def test_request_trace(capsys, tmp_path):
    trace = tmp_path / "req.csv"
    trace.write_text("time_s,prompt,output\n0,64,4\n0.001,32,2\n")
    out_json = tmp_path / "o.json"
    code, _, err = run_cli(["serve", "--models", "llm-tiny", "--npu", "tpuv5e-like",
                            "--arrivals", f"trace:{trace}", "--llm-scheduler", "orca",
                            "--json", str(out_json)], capsys)
    assert code == 0, err
    reqs = json.loads(out_json.read_text())["requests"]
    assert [(r["arrival_s"], r["prompt"], r["output"]) for r in reqs] == [(0.0, 64, 4),
                                                                         (0.001, 32, 2)]


@pytest.mark.parametrize(("text", "words"), [
    ("time_s,prompt,output\n0,600,4\n", "maximum context"),
    ("time_s,prompt,output\n0,0,4\n", "lengths >= 1"),
    ("time_s,prompt,output\n1,8,4\n0,8,4\n", "non-decreasing"),
    ("time_s,prompt\n0,8\n", "header"),
    ("time_s,prompt,output\n0,x,4\n", "line 2"),
    ("", "empty"),
])
def test_bad_trace_is_one_line(text, words, capsys, tmp_path):
    trace = tmp_path / "req.csv"
    trace.write_text(text)
    code, _, err = run_cli(["serve", "--models", "llm-tiny", "--npu", "tpuv5e-like",
                            "--arrivals", f"trace:{trace}"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], err


def test_max_tokens_is_checked(capsys):
    code, _, err = run_cli([*SERVE, "--max-tokens", "0"], capsys)
    assert code == 2 and "max_tokens" in err
