"""The ``llm-serve`` sweep kind: its row equals a direct ``serve_llm`` run; bad settings are
all reported before anything runs."""

import pytest

from npuweave.errors import ConfigError
from npuweave.experiments.sweep import run_point, sweep_from_dict
from npuweave.sim.llm import Lengths, LLMServeSpec, serve_llm


def test_llm_serve_row_equals_a_direct_run():
    spec = sweep_from_dict({"kind": "llm-serve", "fixed": {
        "model": "llm-tiny", "qps": 200, "duration": "0.1s", "scheduler": "sarathi:chunk=32",
        "prompt_len": "uniform:lo=8,hi=64", "output_len": "fixed:6", "seed": 3}})
    row = run_point(spec.points[0])
    direct = serve_llm(LLMServeSpec("llm-tiny", "tpuv5e-like", 200.0, 0.1,
                                    Lengths("uniform", 36, lo=8, hi=64), Lengths("fixed", 6),
                                    "sarathi:chunk=32", seed=3)).row
    assert row["status"] == "ok"
    for key in ("requests", "ttft_p99_s", "tbt_p99_s", "tokens_per_s", "iterations"):
        assert row[key] == direct[key], key


def test_llm_serve_bad_settings():
    with pytest.raises(ConfigError) as err:
        sweep_from_dict({"kind": "llm-serve", "fixed": {"model": "llama-9b", "qps": -1},
                         "axes": {"scheduler": ["fcfs"], "prompt_len": ["fixed:0"]}})
    for piece in ("llama-9b", "'qps'", "fcfs", "positive"):
        assert piece in str(err.value)
