"""docs/notebook.md runs as written: every ``python`` block, in order, in an empty directory;
and as a real notebook in a Jupyter kernel (nbclient + ipykernel), where the timeline cell's
value displays as an image without ``%matplotlib inline``."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

import pytest
from matplotlib.figure import Figure

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.md"
pd = pytest.importorskip("pandas")


def _cells() -> list[str]:
    return re.findall(r"```python\n(.*?)```", NOTEBOOK.read_text(), flags=re.S)


def as_notebook(text: str):
    """The markdown file as a notebook: prose as markdown cells, python blocks as code cells."""
    nbformat = pytest.importorskip("nbformat")
    cells = []
    for i, part in enumerate(re.split(r"```python\n(.*?)```", text, flags=re.S)):
        if i % 2:
            cells.append(nbformat.v4.new_code_cell(part.rstrip("\n")))
        elif part.strip():
            cells.append(nbformat.v4.new_markdown_cell(part.strip()))
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})


def test_notebook_runs_in_a_real_kernel_and_shows_figures_inline(tmp_path, monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    root = str(NOTEBOOK.parents[1])
    monkeypatch.setenv("PYTHONPATH", root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # Agg, not the inline backend: the image must come from the figure itself, no magic
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = as_notebook(NOTEBOOK.read_text())
    # nbclient gives a kernel 60 s to start and, after a cell's reply, 4 s for the rest of its
    # output, then goes on without it (a missing figure, a hidden error): a busy CI host can
    # take longer. Wait as long as for the cell, and fail loudly if output never comes.
    nbclient.NotebookClient(nb, timeout=600, startup_timeout=600, iopub_timeout=600,
                            raise_on_iopub_timeout=True, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not any(o.output_type == "error" for o in c.outputs) for c in code)
    shown = [c for c in code if c.source.strip().endswith("\nfig")]
    assert len(shown) == 1, "the timeline cell ends with its figure"
    images = [o.data["image/png"] for o in shown[0].outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1 and base64.b64decode(images[0])[:4] == b"\x89PNG"
    # DataFrames display as tables (HTML) too
    assert any("text/html" in o.get("data", {}) for c in code for o in c.outputs)


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
