"""Fixture: each published Gemini IR file in turn (skipped when shared/ is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from irdata import B1, B4


@pytest.fixture(params=[B1, B4], ids=["b1", "b4"])
def ir_path(request) -> Path:
    if not request.param.is_file():
        pytest.skip(f"{request.param} not found (clone shared/ beside the repo)")
    return request.param
