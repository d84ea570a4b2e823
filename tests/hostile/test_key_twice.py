"""A key given twice in one ``key=value`` list is an error naming the key (it used to take the
last value silently): model specs everywhere they are read, and the LLM option texts."""

from __future__ import annotations

import pytest

from npuweave.cli import main
from npuweave.errors import ConfigError
from npuweave.fileio.pairs import key_values
from npuweave.sim.llm.options import parse_lengths
from npuweave.workload import load_layers, parse_model_spec


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_key_values_once():
    assert key_values(["a=1", " b = x "], "spec", "a=1") == {"a": "1", "b": "x"}
    with pytest.raises(ConfigError, match="'a' is given twice"):
        key_values(["a=1", "a=1"], "spec", "a=1")  # twice even with the same value
    with pytest.raises(ConfigError, match="key=value"):
        key_values(["a"], "spec", "a=1")


@pytest.mark.parametrize("spec", ["llama-3-8b:phase=prefill:phase=decode",
                                  "bert-base:seq_len=32:seq_len=64",
                                  "llm-tiny:kv=int8:kv=fp16"])
def test_model_spec_key_twice(spec):
    with pytest.raises(ConfigError, match="is given twice"):
        parse_model_spec(spec)


def test_load_layers_key_twice():
    with pytest.raises(ConfigError, match="'seq_len' is given twice"):
        load_layers("bert-base:seq_len=8:seq_len=16")


@pytest.mark.parametrize("text", ["uniform:lo=1,lo=5,hi=8", "fixed:5,mean=7",
                                  "lognormal:mean=5,sigma=1,sigma=2"])
def test_lengths_key_twice(text):
    with pytest.raises(ConfigError, match="given twice"):
        parse_lengths(text, "--prompt-len")


@pytest.mark.parametrize(("argv", "key"), [
    (["profile", "llama-3-8b:phase=prefill:phase=decode", "--npu", "tpuv5e-like", "--quiet"],
     "'phase'"),
    (["profile", "bert-base:seq_len=32:seq_len=64", "--quiet"], "'seq_len'"),
    (["serve", "--models", "llm-tiny:kv=int8:kv=fp16", "--npu", "tpuv5e-like", "--qps", "5",
      "--duration", "0.1s"], "'kv'"),
    (["serve", "--models", "llm-tiny", "--npu", "tpuv5e-like", "--qps", "5", "--duration",
      "0.1s", "--prompt-len", "uniform:lo=1,lo=5,hi=8"], "'lo'"),
    (["zoo", "export", "bert-base:seq_len=8:seq_len=9", "x.onnx"], "'seq_len'"),
    (["serve", "--models", "resnet50", "--qps", "50", "--duration", "20ms", "--scheduler", "rr",
      "--scheduler-opt", "quantum_s=0.001", "--scheduler-opt", "quantum_s=0.002"],
     "'quantum_s'"),
])
def test_cli_key_twice_one_line(argv, key, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(argv, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), (out, err)
    assert key in lines[0] and "given twice" in lines[0]
    assert not list(tmp_path.iterdir())
