"""Fixtures: each published Gemini IR file in turn (skipped when shared/ is absent).

``ir_path`` covers the two files in ``shared/data/gemini-ir``; ``published_path`` adds the
files of Gemini's ``scheduler_output/`` folder when ``GEMINI_IR_DIR`` points at a copy (they
carry no license, so the project does not ship them).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from irdata import B1, B4, EXTRA


@pytest.fixture(params=[B1, B4], ids=["b1", "b4"])
def ir_path(request) -> Path:
    if not request.param.is_file():
        pytest.skip(f"{request.param} not found (clone shared/ beside the repo)")
    return request.param


@pytest.fixture(params=[B1, B4, *EXTRA] if EXTRA else [B1, B4, None],
                ids=lambda p: p.name.split(".sim_")[-1][:18] if p else "extra-absent")
def published_path(request) -> Path:
    if request.param is None:
        pytest.skip("set GEMINI_IR_DIR to a copy of Gemini's scheduler_output/ to test them all")
    if not request.param.is_file():
        pytest.skip(f"{request.param} not found")
    return request.param
