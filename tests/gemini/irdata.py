"""Test helpers: the published Gemini IR files (ResNet-34, batch 1 and 4) beside the repo."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "gemini-ir"
B1 = DATA / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
B4 = DATA / "int8_resnet34.sim_quantized_b4_c1_bw16_stschedule.json"

needs_data = pytest.mark.skipif(
    not (B1.is_file() and B4.is_file()),
    reason=f"published Gemini IR files not found in {DATA} (clone shared/ beside the repo)",
)

_cache: dict[Path, dict] = {}


def raw(path: Path) -> dict:
    """A fresh deep copy of a published file's JSON (parsed once per session)."""
    if path not in _cache:
        _cache[path] = json.loads(path.read_text())
    return copy.deepcopy(_cache[path])
