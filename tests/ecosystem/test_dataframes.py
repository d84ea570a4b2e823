"""DataFrames of profiles, simulation results, comparisons and reproductions; Parquet files;
one-line errors when the optional extras are missing."""

from __future__ import annotations

import sys

import pytest
from eco_helpers import run

from npuweave.cost import Profile, profile, profile_model
from npuweave.errors import ConfigError, MissingDependencyError, UnknownNameError
from npuweave.experiments import compare, reproduce_layerweaver
from npuweave.hardware import preset
from npuweave.report import Rows
from npuweave.workload import load_layers

pd = pytest.importorskip("pandas")


def test_profile_costs_carry_layer_names():
    npu = preset("prema")
    prof = profile_model("resnet50", npu, batch=2)
    layers = load_layers("resnet50")
    costs = profile(layers, npu, batch=2)
    assert isinstance(prof, Profile) and prof.names == [la.name for la in layers]
    assert dict(prof) == {la.name: c for la, c in zip(layers, costs, strict=True)}
    assert prof["conv1"] == costs[0]
    assert prof.total == sum(costs)
    with pytest.raises(UnknownNameError, match="did you mean 'conv1'"):
        prof["conv"]


def test_profile_dataframe_is_indexed_by_layer():
    npu = preset("memory-centric")
    prof = profile_model("bert-base", npu)
    df = prof.to_dataframe()
    assert list(df.index) == prof.names
    row = df.loc["layer0/attention/query"] if "layer0/attention/query" in df.index else df.iloc[0]
    name = row.name
    c = prof[name]
    assert row["macs"] == c.macs and row["compute_us"] == pytest.approx(c.compute_s * 1e6)
    assert row["compute_cycles"] == round(c.compute_s * npu.clock_hz)
    assert df["macs"].sum() == prof.total.macs


def test_sim_result_dataframes():
    rows, results = compare(["ncf", "bert-base"], preset("memory-centric"),
                            schedulers=["layerweaver"], requests=2)
    res = results["layerweaver"]
    req = res.to_dataframe("requests")
    assert len(req) == len(res.requests) == 4
    assert (req["latency_s"] == req["finish_s"] - req["arrival_s"]).all()
    assert set(req["tenant"]) == {"ncf", "bert-base"}
    # no deadline: NaN in a float column, not None in an object one
    assert str(req["deadline_s"].dtype) == "float64" and req["deadline_s"].isna().all()
    ivs = res.to_dataframe("intervals")
    assert len(ivs) == len(res.intervals)
    pe = ivs[ivs.resource == "PE"].duration_s.sum()
    assert pe == pytest.approx(sum(i.duration_s for i in res.intervals if i.resource == "PE"))
    with pytest.raises(ConfigError, match="requests"):
        res.to_dataframe("layers")


def test_comparison_and_reproduction_rows_are_frames():
    rows, _ = compare(["ncf", "bert-base"], preset("memory-centric"),
                      schedulers=["sequential", "layerweaver"], requests=1)
    assert isinstance(rows, Rows) and isinstance(rows, list)
    df = rows.to_dataframe()
    assert list(df["scheduler"]) == ["sequential", "layerweaver"]
    assert "throughput[ncf]" in df.columns
    assert df["stp"].tolist() == [r["stp"] for r in rows]
    rep = reproduce_layerweaver(pairs="RN+BB", scenarios=["single-batch"],
                                schedulers=["sequential"], requests=1)
    assert isinstance(rep, Rows) and len(rep.to_dataframe()) == 1


def test_parquet_outputs_round_trip(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    p, s = tmp_path / "p.parquet", tmp_path / "s.parquet"
    assert run(["profile", "ncf", "--quiet", "--parquet", str(p)], capsys)[0] == 0
    assert run(["schedule", "--models", "ncf,bert-base", "--requests", "1", "--compare",
                "sequential", "--parquet", str(s)], capsys)[0] == 0
    back = pd.read_parquet(p)
    prof = profile_model("ncf", preset("memory-centric"))
    assert back["name"].tolist() == prof.names
    assert back["macs"].tolist() == [c.macs for c in prof.costs]
    assert pd.read_parquet(s)["scheduler"].tolist() == ["layerweaver", "sequential"]


def test_missing_pandas_is_one_line_saying_what_to_install(monkeypatch, capsys):
    prof = profile_model("ncf", preset("prema"))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install 'npuweave\[pandas\]'"):
        prof.to_dataframe()
    with pytest.raises(MissingDependencyError, match="pandas"):
        Rows([{"a": 1}]).to_dataframe()
    for argv in (["profile", "ncf", "--parquet", "x.parquet"],
                 ["schedule", "--models", "ncf,bert-base", "--parquet", "x.parquet"],
                 ["reproduce", "layerweaver", "--pairs", "RN+BB", "--parquet", "x.parquet"]):
        code, out, err = run(argv, capsys)
        assert code == 2 and err.count("\n") == 1, argv
        assert err.startswith("error: pandas is not installed") and "npuweave[parquet]" in err
        assert out == ""  # refused before any work


def test_missing_pyarrow_names_the_parquet_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    code, _, err = run(["profile", "ncf", "--quiet", "--parquet", str(tmp_path / "x.parquet")],
                       capsys)
    assert code == 2 and "pyarrow is not installed" in err and "npuweave[parquet]" in err
    assert list(tmp_path.iterdir()) == []
