"""Test helpers: the published Gemini IR files (ResNet-34, batch 1 and 4) beside the repo."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
#: the two published files beside the repository (``../shared`` or ``../../shared``)
DATA = next((p for p in (_ROOT.parent / "shared" / "data" / "gemini-ir",
                         _ROOT.parent.parent / "shared" / "data" / "gemini-ir") if p.is_dir()),
            _ROOT.parent / "shared" / "data" / "gemini-ir")
#: more published files (Gemini's ``scheduler_output/``), if the user copied them somewhere:
#: ``GEMINI_IR_DIR=/tmp/gemini-files pytest tests/gemini``
EXTRA_DIR = Path(os.environ.get("GEMINI_IR_DIR", "/nonexistent"))
EXTRA = sorted(p for p in EXTRA_DIR.glob("*_stschedule.json") if p.stat().st_size > 0) \
    if EXTRA_DIR.is_dir() else []
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


def _box(lower, upper):
    return {"lower": list(lower), "upper": list(upper)}


def tiny_ir() -> dict:
    """A hand-written two-workload IR: DRAM input -> relu (vp) -> 1x1 conv (pe) -> DRAM.

    Sizes by hand: the 8 x 10 x 10 int8 fmap is 800 bytes; the 8 x 8 x 1 x 1 conv weight is
    8 * (8 + 32) = 320 bytes.
    """
    fm = ([0, 0, 0, 0], [0, 7, 9, 9])
    tile = {"tile_num_0": {**_box(*fm), "ofmap_lower": fm[0], "ofmap_upper": fm[1],
                           "ifmap_lower": fm[0], "ifmap_upper": fm[1],
                           "single_tile_time_pred": 1.0, "tile_padding_tblr": [0, 0, 0, 0]}}
    for t in tile.values():
        del t["lower"], t["upper"]
    common = {"ring_buffer_info": [[0, 1 << 20]], "tile_info": tile, "tile_padding_tblr":
              [0, 0, 0, 0], "workload": [fm[0], fm[1]], "ofmap_size": 800}
    relu = {**common, "workload_id": 0, "layer_name": "relu", "layer_type": "vp", "time": 100,
            "ifmap": [{**_box(*fm), "size": 800, "transfer_id": [0], "align": 8, "bitwidth": 8}],
            "ofmap": [{**_box(*fm), "size": 800, "transfer_id": 2,
                       "destination": [{"type": "core", "core_id": 0, "workload_id": 1}]}],
            "buffer": [{**_box(*fm), "tensor_id": 0, "tensor_order": 0, "type": "ifmap",
                        "address": 0, "size": 800, "align": 8, "bitwidth": 8,
                        "transfer_id": [0], "newly_added": True, "cur_wl_ifmap": True,
                        "source": [{**_box(*fm), "type": "DRAM", "core_id": -1, "size": 800,
                                    "transfer_id": 0}]}],
            "wl1_buffer": None}
    conv = {**common, "workload_id": 1, "layer_name": "conv", "layer_type": "pe", "time": 200,
            "ifmap": [{**_box(*fm), "size": 800, "transfer_id": [2], "align": 8, "bitwidth": 8}],
            "weight": {**_box([0, 0, 0, 0], [0, 7, 7, 0]), "size": 320, "transfer_id": [1]},
            "ofmap": [{**_box(*fm), "size": 800, "transfer_id": 3,
                       "destination": [{"type": "DRAM", "core_id": -1}]}],
            "buffer": [
                {**_box(*fm), "tensor_id": 1, "tensor_order": 2, "type": "ifmap",
                 "address": 1000, "size": 800, "align": 8, "bitwidth": 8, "transfer_id": [2],
                 "newly_added": True, "cur_wl_ifmap": True,
                 "source": [{**_box(*fm), "type": "core", "core_id": 0, "layer_name": "relu",
                             "size": 800, "transfer_id": 2}]},
                {**_box([0, 0, 0, 0], [0, 7, 7, 0]), "tensor_id": 2, "tensor_order": 1,
                 "type": "weight", "address": 2000, "size": 320, "align": 8, "bitwidth": 8,
                 "transfer_id": [1], "newly_added": True, "layer_name": "conv",
                 "source": [{**_box([0, 0, 0, 0], [0, 7, 7, 0]), "type": "DRAM", "core_id": -1,
                             "size": 320, "transfer_id": 1}]},
                {**_box(*fm), "tensor_id": 3, "tensor_order": 3, "type": "ofmap",
                 "address": 3000, "size": 800, "align": 8, "bitwidth": 8, "layer_name": "conv",
                 "start_send": True}],
            "wl1_buffer": []}
    dest = {"type": "core", "core_id": 0}
    return {
        "-1": {"in": [{**_box(*fm), "transfer_id": 3, "core_id": 0, "workload_id": 1,
                       "layer_name": "conv"}],
               "out": [{**_box(*fm), "transfer_id": 0, "type": "fmap", "size": 800,
                        "related_ifmap": [], "destination": [{**dest, "workload_id": 0,
                                                              "layer_name": "relu"}]},
                       {**_box([0, 0, 0, 0], [0, 7, 7, 0]), "transfer_id": 1, "type": "weight",
                        "size": 320, "related_ifmap": [],
                        "destination": [{**dest, "workload_id": 1, "layer_name": "conv"}]}]},
        "0": [relu, conv], "buffersize": 1 << 20, "top_batch_cut": 1, "xlen": 1, "ylen": 1,
    }
