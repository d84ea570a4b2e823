"""docs/notebook.md runs as written: every ``python`` block, in order, in an empty directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from matplotlib.figure import Figure

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.md"
pd = pytest.importorskip("pandas")


def _cells() -> list[str]:
    return re.findall(r"```python\n(.*?)```", NOTEBOOK.read_text(), flags=re.S)


def test_notebook_runs_and_covers_the_done_criteria(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cells = _cells()
    assert len(cells) >= 8
    ns: dict = {}
    for i, cell in enumerate(cells):
        exec(compile(cell, f"{NOTEBOOK.name}[cell {i}]", "exec"), ns)  # noqa: S102
    # profiled into a DataFrame, with layer names as the index
    assert isinstance(ns["df"], pd.DataFrame) and "conv1" in ns["df"].index
    # compared schedulers
    assert list(ns["table"].index) == ["sequential", "layerweaver"]
    # a timeline Figure to show inline, and one drawn into the user's Axes and saved
    assert isinstance(ns["fig"], Figure) and ns["fig"].axes
    assert (tmp_path / "layerweaver.png").read_bytes()[:4] == b"\x89PNG"
    # a SCALE-Sim topology and config read as workload and NPU
    scale = ns["scale"]
    assert scale.npu.name == "scale_32x32_ws" and scale.names == ["Conv1", "Conv2_DP", "FC"]
    # FC on 32x32: ceil(2048/32) * ceil(1000/32) = 64 * 32 folds of 2*32 + 32 + 1 - 2 = 95
    # cycles, minus one (SCALE-Sim v3 WS count)
    assert ns["scale"].to_dataframe().loc["FC", "compute_cycles"] == 64 * 32 * 95 - 1
