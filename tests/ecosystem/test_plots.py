"""Plots for notebooks: no backend selection, optional ax= and path=, the Figure returned."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest
from matplotlib.figure import Figure

from npuweave.report import plot_timeline
from npuweave.sim.records import Interval

ROOT = Path(__file__).resolve().parents[2] / "npuweave"
IVS = [Interval("DRAM", "bert-base", 0, "fc1", 0.0, 40e-6),
       Interval("PE", "bert-base", 0, "fc1", 40e-6, 50e-6),
       Interval("PE", "resnet50", 0, "conv1", 50e-6, 150e-6)]

# compile/gemini/timeline.py is being moved into report/ by the Gemini engineer (it may not be
# edited on this branch); the move removes its matplotlib.use call. Listed so it is visible.
_PENDING_MOVE = {"compile/gemini/timeline.py"}


def test_no_library_module_selects_a_backend():
    offenders = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                 if re.search(r"matplotlib\.use\(|\buse\(\s*[\"']Agg", p.read_text())]
    assert sorted(set(offenders) - _PENDING_MOVE) == []


@pytest.fixture()
def pdf_backend():
    before = matplotlib.get_backend()
    matplotlib.use("pdf")
    yield
    matplotlib.use(before)


def test_plotting_keeps_the_users_backend(pdf_backend, tmp_path):
    import matplotlib.pyplot as plt

    open_before = plt.get_fignums()
    fig = plot_timeline({"a": IVS}, path=tmp_path / "t.png")
    assert matplotlib.get_backend() == "pdf"  # a notebook's inline backend would survive too
    assert plt.get_fignums() == open_before  # nothing left open in pyplot
    assert isinstance(fig, Figure)


def test_timeline_returns_figure_without_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fig = plot_timeline({"layerweaver": IVS, "sequential": IVS[:2]}, title="t")
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert list(tmp_path.iterdir()) == []  # no file without path=


def test_timeline_draws_into_given_ax(tmp_path):
    fig = Figure()
    ax = fig.add_subplot()
    out = plot_timeline({"lw": IVS, "seq": IVS[:1]}, ax=ax, path=tmp_path / "ax.svg")
    assert out is fig and fig.axes == [ax]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["lw PE", "lw DRAM", "seq PE", "seq DRAM"]
    # one bar per interval: lw has two PE and one DRAM interval, seq one DRAM interval
    assert sum(len(c.get_paths()) for c in ax.collections) == 4
    assert (tmp_path / "ax.svg").read_text().lstrip().startswith("<?xml")


def test_layer_group_plot_takes_ax_and_path(tmp_path):
    from npuweave.compile.layergroup import compile_groups
    from npuweave.compile.layergroup.plot import plot_plan
    from npuweave.errors import ConfigError
    from npuweave.hardware import preset
    from npuweave.workload import load_layers

    plan = compile_groups(load_layers("mobilenetv2"), preset("lmem-16m"), method="greedy",
                          model="mobilenetv2")
    fig = plot_plan(plan)
    assert isinstance(fig, Figure)
    grouped = sum(1 for a in fig.axes if a.patches)
    assert grouped >= 1
    target = Figure()
    axes = [target.add_subplot(1, grouped, i + 1) for i in range(grouped)]
    assert plot_plan(plan, path=tmp_path / "p.png", ax=axes) is target
    assert all(a.patches for a in axes)
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    if grouped > 1:
        with pytest.raises(ConfigError, match="axes"):
            plot_plan(plan, ax=axes[0])
