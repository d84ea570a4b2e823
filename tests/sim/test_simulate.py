"""``simulate(spec)``: the front door picks a path, says which, and every path equals the engine."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave import ClosedLoop, SimSpec, simulate
from npuweave.cost import LayerCost
from npuweave.errors import ConfigError, UnknownNameError
from npuweave.hardware import NPU
from npuweave.sim import run_streams
from npuweave.sim.arrivals import make_arrivals, poisson
from npuweave.sim.serving import serve

NPU_ = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1.0, dram_bw=10.0, weight_buffer=100,
           act_buffer=1)
CNN = ("cnn", [LayerCost(compute_s=4.0, weight_bytes=10)] * 3)
NLP = ("nlp", [LayerCost(compute_s=0.5, weight_bytes=40)] * 3)


def test_closed_loop_runs_the_fast_path_and_equals_the_engine():
    spec = SimSpec([CNN, NLP], NPU_, ClosedLoop(requests=3), "layerweaver")
    fast = simulate(spec)
    engine = simulate(SimSpec([CNN, NLP], NPU_, ClosedLoop(requests=3), "layerweaver",
                              path="engine"))
    assert fast.path.startswith("closed-loop fast path")
    assert engine.path.startswith("engine: ")
    assert fast == engine == run_streams([CNN, NLP], NPU_, scheduler="layerweaver", requests=3)


def test_closed_loop_engine_only_policy_says_why():
    res = simulate(SimSpec([CNN, NLP], NPU_, ClosedLoop(window_s=20.0), "fcfs"))
    assert res.path.startswith("engine: ") and "fcfs" in res.path


def test_open_loop_default_runs_the_engine_and_says_why():
    arr = make_arrivals([0.0, 1.0], [0, 0], ("cnn",))
    res = simulate(SimSpec([CNN], NPU_, arr, "fcfs"))
    ref = serve([CNN], NPU_, arr, "fcfs")
    assert res.notes[0].startswith("path: event engine (") and "fcfs" in res.notes[0]
    assert res.notes[1:] == ref.notes
    assert res.table.finish_s.tolist() == ref.table.finish_s.tolist()
    assert res.rows == ref.rows


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["sequential", "layerweaver",
                                                    "layerweaver-plus", "aimt"]),
       st.floats(0.02, 0.3))
def test_compiled_serving_loop_equals_the_engine(seed, name, qps):
    """Poisson arrivals (no ties), traffic off, no DRAM latency: the compiled serving loop
    gives the engine's finish times, hence the same latency metrics."""
    arr = poisson(("cnn", "nlp"), (qps, qps), 80.0, seed, deadline_s=(30.0, 12.0))
    if len(arr) == 0:
        return
    kw = dict(models=[CNN, NLP], npu=NPU_, arrivals=arr, scheduler=name, traffic=False)
    fast, eng = simulate(SimSpec(**kw)), simulate(SimSpec(**kw, path="engine"))
    assert fast.notes[0].startswith("path: compiled serving loop") or \
        fast.notes[0].startswith("path: Python serving loop")
    assert eng.notes[0] == "path: event engine (path='engine' asked for)"
    assert fast.table.finish_s.tolist() == eng.table.finish_s.tolist()
    for key in ("antt", "stp", "fairness", "sla_violation_x2", "deadline_violation",
                "latency_p99_s"):
        assert fast.rows[0][key] == eng.rows[0][key], key
    for key in ("pe_busy_s", "dram_busy_s", "span_s"):
        assert getattr(fast, key) == pytest.approx(getattr(eng, key), rel=1e-12), key


def test_hostile_specs():
    arr = make_arrivals([0.0], [0], ("cnn",))
    with pytest.raises(ConfigError, match="path"):
        simulate(SimSpec([CNN], NPU_, path="quick"))
    with pytest.raises(ConfigError, match="give a list of model"):
        simulate(SimSpec([], NPU_))
    with pytest.raises(ConfigError, match="give a list of model"):
        simulate(SimSpec("resnet50,bert-base", NPU_))
    with pytest.raises(UnknownNameError, match="memory-centric"):
        simulate(SimSpec([CNN], "memory-centrik"))  # type: ignore[arg-type]
    with pytest.raises(UnknownNameError, match="fcfs"):
        simulate(SimSpec([CNN], NPU_, scheduler="fcfz"))
    with pytest.raises(ConfigError, match="ClosedLoop or Arrivals"):
        simulate(SimSpec([CNN], NPU_, arrivals=[0.0, 1.0]))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="compiled serving loop cannot run this: .*fcfs"):
        simulate(SimSpec([CNN], NPU_, arr, "fcfs", path="fast"))
    with pytest.raises(ConfigError, match="no request arrives"):
        simulate(SimSpec([CNN], NPU_, make_arrivals([], [], ("cnn",))))
    with pytest.raises(ConfigError, match="fast path cannot run this"):
        simulate(SimSpec([CNN], NPU_, ClosedLoop(requests=2), "fcfs", path="fast"))


def test_mixed_deadlines_refuse_the_compiled_loop():
    arr = make_arrivals([0.0, 1.0], [0, 0], ("cnn",), deadline_s=[5.0, math.inf])
    res = simulate(SimSpec([CNN], NPU_, arr, "sequential", traffic=False))
    assert "one deadline per model" in res.notes[0]
    assert np.all(np.isfinite(res.table.finish_s))


def test_readme_example_runs(tmp_path, monkeypatch, capsys):
    """The README's 'One front door' Python block runs as written (test_readme runs bash only)."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text.split("## One front door", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(code.group(1), "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert "closed-loop fast path" in out[0] or "engine: " in out[0]
    assert "path: event engine (not the layer-wise serving loop" in out[1]
