"""The validator: clean on the published files, and each corruption gives exactly its violation.

Each corrupted copy is built from the batch-1 file in memory; the expected violations are
reasoned out from the edit (and from the file contents, read with plain json), not copied
from a run of the validator.
"""

from __future__ import annotations

import pytest
from irdata import B1, needs_data, raw

from npuweave.compile import gemini
from npuweave.errors import UnknownNameError

pytestmark = needs_data

W = '$["0"]'


def violations(doc: dict) -> set[tuple[str, str]]:
    return {(v.check, v.path) for v in gemini.validate(gemini.from_dict(doc))}


def test_published_files_validate_clean(ir_path):
    assert gemini.validate(gemini.load(ir_path)) == []


def test_dangling_transfer_id():
    doc = raw(B1)
    entry = doc["0"][25]["buffer"][0]  # the prefetched Conv_86 weight (transfer id 25)
    assert entry["type"] == "weight" and entry["transfer_id"] == [25]
    entry["transfer_id"] = [9999]
    entry["source"][0]["transfer_id"] = 9999
    assert violations(doc) == {
        ("transfer-dangling", f"{W}[25].buffer[0].transfer_id[0]"),
        ("transfer-dangling", f"{W}[25].buffer[0].source[0].transfer_id"),
    }


def test_overlapping_buffers():
    doc = raw(B1)
    buf = doc["0"][1]["buffer"]  # [401408, +802816) and [0, +401408)
    assert (buf[0]["address"], buf[1]["address"], buf[1]["size"]) == (401408, 0, 401408)
    buf[0]["address"] = 401408 - 100
    assert violations(doc) == {("buffer-overlap", f"{W}[1].buffer[1]")}


def test_ring_wrap_around_overlap():
    doc = raw(B1)
    buf = doc["0"][1]["buffer"]
    # 802816 bytes starting 1000 bytes before the end of the 8 MiB ring wrap onto address 0
    buf[0]["address"] = 8388608 - 1000
    assert violations(doc) == {("buffer-overlap", f"{W}[1].buffer[1]")}
    buf[1]["address"] = 802816 - 1000  # just after the wrapped tail: no overlap any more
    assert violations(doc) == set()


def test_box_outside_its_layer():
    doc = raw(B1)
    of = doc["0"][2]["ofmap"][0]  # MaxPool ofmap [0,0,0,0]..[0,63,55,55]
    of["lower"][2] += 10
    of["upper"][2] += 10  # same size, shifted 10 rows past the layer
    assert violations(doc) == {("box-outside", f"{W}[2].ofmap[0]")}


def test_store_box_outside_its_layer():
    doc = raw(B1)
    store = doc["-1"]["in"][3]  # Gemm logits [0,0,0,0]..[0,999,0,0]
    store["upper"][1] = 1999
    # also no longer the producer's ofmap box
    assert violations(doc) == {("box-outside", '$["-1"].in[3]'), ("dram-store", '$["-1"].in[3]')}


def test_ifmap_not_covered_by_buffer_sources():
    doc = raw(B1)
    wl = doc["0"][15]  # Conv_31 (1x1, stride 2) reads rows 0..54 of a 56-row tensor
    assert wl["ifmap"][0]["upper"] == [0, 63, 54, 54]
    entry = next(b for b in wl["buffer"] if b.get("cur_wl_ifmap"))
    entry["upper"][2] = entry["source"][0]["upper"][2] = 53  # keep rows 0..53 only
    entry["size"] = entry["source"][0]["size"] = 64 * 54 * 56  # int8, 64 channels
    assert violations(doc) == {("ifmap-coverage", f"{W}[15].ifmap[0]")}


def test_size_disagrees_with_box():
    doc = raw(B1)
    doc["0"][1]["ifmap"][0]["size"] += 1
    doc["-1"]["out"][0]["size"] = 64 * 3 * 49  # weights without channel padding and extras
    assert violations(doc) == {("size", f"{W}[1].ifmap[0].size"), ("size", '$["-1"].out[0].size')}


def test_box_order():
    doc = raw(B1)
    doc["0"][1]["wl1_buffer"][0]["upper"][3] = -1
    assert violations(doc) == {("box-order", f"{W}[1].wl1_buffer[0]")}


def test_related_links_must_be_mutual():
    doc = raw(B1)
    load = next(e for e in doc["-1"]["out"] if e["transfer_id"] == 73)
    load["related_ifmap"] = []  # store 72 still names load 73
    assert violations(doc) == {("related-mutual", '$["-1"].in[0].related_ofmap[0]')}


def test_store_must_match_its_producer():
    doc = raw(B1)
    doc["-1"]["in"][0]["workload_id"] = 33  # transfer 72 is produced by workload 34
    assert violations(doc) == {("dram-store", '$["-1"].in[0]')}


def test_ofmap_to_dram_needs_a_store_entry():
    doc = raw(B1)
    del doc["-1"]["in"][3]  # Gemm logits go to DRAM (workload 68)
    assert violations(doc) == {("dram-store", f"{W}[68].ofmap[0]")}


def test_duplicate_transfer_id():
    doc = raw(B1)
    doc["-1"]["out"][1]["transfer_id"] = 0  # now two DRAM loads define id 0
    # id 1 (Conv_5 weight) is gone: every reference to it dangles, and the load now called 0
    # is sent to a workload that does not read id 0
    expected = {("transfer-unique", '$["-1"].out[1].transfer_id'),
                ("destination", '$["-1"].out[1].destination[0]')}
    for i, w in enumerate(doc["0"]):
        if 1 in w.get("weight", {}).get("transfer_id", []):
            expected.add(("transfer-dangling", f"{W}[{i}].weight.transfer_id[0]"))
        for j, e in enumerate(w["wl1_buffer"] or []):
            if e["transfer_id"] == [1]:
                expected.add(("transfer-dangling", f"{W}[{i}].wl1_buffer[{j}].transfer_id[0]"))
    assert len(expected) == 5  # Conv_5's weight, and its WL1 slices in workloads 3 and 4
    assert violations(doc) == expected


def test_newly_added_and_cur_wl_ifmap_flags():
    doc = raw(B1)
    buf = doc["0"][1]["buffer"]
    assert buf[1]["newly_added"] is False and buf[1]["cur_wl_ifmap"] is True
    buf[1]["newly_added"] = True
    del buf[1]["cur_wl_ifmap"]
    assert violations(doc) == {("newly-added", f"{W}[1].buffer[1].newly_added"),
                               ("cur-wl-ifmap", f"{W}[1].buffer")}


def test_capacity():
    doc = raw(B1)
    doc["buffersize"] = 4_000_000
    over = {i for i, w in enumerate(doc["0"]) if sum(b["size"] for b in w["buffer"]) > 4_000_000}
    assert over  # the late layers hold several MiB of prefetched weights
    assert violations(doc) == {("buffer-capacity", f"{W}[{i}].buffer") for i in over}


def test_workload_ids_ascend():
    doc = raw(B1)
    doc["0"][10]["workload_id"] = 9
    # wl 9 and 10 now share id 9: ofmaps sent to "workload 10" find no workload 10, and
    # the destinations of "workload 9" still resolve to the first one
    dests = {(i, j, k) for i, w in enumerate(doc["0"]) for j, o in enumerate(w["ofmap"])
             for k, d in enumerate(o["destination"]) if d.get("workload_id") == 10}
    expected = {("workload-order", f"{W}[10].workload_id")}
    expected |= {("destination", f"{W}[{i}].ofmap[{j}].destination[{k}]") for i, j, k in dests}
    assert violations(doc) == expected


def test_ofmap_size_sum():
    doc = raw(B1)
    doc["0"][4]["ofmap_size"] += 64
    assert violations(doc) == {("ofmap-size", f"{W}[4].ofmap_size")}


def test_tiles_must_cover_the_workload():
    doc = raw(B1)
    tiles = doc["0"][33]["tile_info"]  # Conv_59: four 64-channel tiles
    assert len(tiles) == 4
    del tiles["tile_num_2"]
    assert violations(doc) == {("tile-coverage", f"{W}[33].tile_info")}


def test_tile_outside_workload():
    doc = raw(B1)
    tile = doc["0"][33]["tile_info"]["tile_num_3"]
    tile["ofmap_upper"][1] = 300  # past K = 256
    assert violations(doc) == {("tile-coverage", f"{W}[33].tile_info.tile_num_3")}


def test_all_violations_reported_at_once():
    doc = raw(B1)
    doc["0"][4]["ofmap_size"] += 64
    doc["0"][33]["tile_info"].pop("tile_num_2")
    assert len(gemini.validate(gemini.from_dict(doc))) == 2


def test_select_checks_by_name():
    doc = raw(B1)
    doc["0"][4]["ofmap_size"] += 64
    ir = gemini.from_dict(doc)
    assert gemini.validate(ir, ["size"]) == []
    assert len(gemini.validate(ir, ["ofmap-size"])) == 1
    with pytest.raises(UnknownNameError, match="ofmap-size"):
        gemini.validate(ir, ["no-such-check"])
