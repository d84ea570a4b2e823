"""Split workloads: every convention of the published files, on small hand-made files.

``tests/data/gemini/split_n.json`` (a relu and a 1x1 conv, batch 2, each split in N like
Gemini's ResNet-50 b4 file) and ``split_h.json`` (layers A, B split in H, C whole, like the
ResNet-50 b1 file) are written by hand; each convention the published files show is used at
least once (named in the tests below). The old validator reported 6 and 7 violations on them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from npuweave.compile import gemini
from npuweave.errors import IRError

DATA = Path(__file__).resolve().parents[1] / "data" / "gemini"
W = '$["0"]'


def doc(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def violations(d: dict) -> set[tuple[str, str]]:
    return {(v.check, v.path) for v in gemini.validate(gemini.from_dict(d))}


@pytest.mark.parametrize("name", ["split_n", "split_h"])
def test_hand_made_split_files_validate_clean(name):
    assert gemini.validate(gemini.load(DATA / f"{name}.json")) == []


def test_conventions_are_present_in_the_hand_made_files():
    """Guards the data: each convention the validator must accept really occurs."""
    n, h = doc("split_n"), doc("split_h")
    # tile-local ofmap of a split workload (absolute workload box starts at N = 1)
    assert n["0"][2]["workload"][0] == [1, 0, 0, 0] and n["0"][2]["ofmap"][0]["lower"] == [0] * 4
    # N-split store: the split's own absolute box, while its ofmap box is tile-local
    assert n["-1"]["in"][1]["lower"] == [1, 0, 0, 0] and n["0"][3]["ofmap"][0]["lower"] == [0] * 4
    # absolute DRAM load box, read through a tile-local ifmap / L2 box
    assert n["-1"]["out"][1]["lower"] == [1, 0, 0, 0] and n["0"][2]["ifmap"][0]["lower"] == [0] * 4
    # mixed ifmap frames: absolute single id (A#1), tile-local single id (B#1), absolute merged
    assert h["0"][1]["ifmap"][0]["lower"] == [0, 0, 2, 0]
    assert h["0"][3]["ifmap"][0]["lower"] == [0, 0, 0, 0] and h["0"][3]["workload"][0][2] == 2
    assert h["0"][4]["ifmap"][0]["transfer_id"] == [3, 4]
    # producers list every workload of the consumer layer (A#0 -> B#0 and B#1)
    assert [d["workload_id"] for d in h["0"][0]["ofmap"][0]["destination"]] == [2, 3]
    # a merged L2 entry holds more ids than the workload reads, flagged cur_wl_ifmap
    entry = h["0"][2]["buffer"][0]
    assert entry["transfer_id"] == [1, 2] and entry["cur_wl_ifmap"] and h["0"][2]["ifmap"][0][
        "transfer_id"] == [1]


def test_tile_box_truly_outside_its_layer_is_caught():
    d = doc("split_h")
    of = d["0"][3]["ofmap"][0]  # B#1 rows 2..3, written tile-local as rows 0..1
    of["lower"][2], of["upper"][2] = 4, 5  # rows 4..5: outside as is and as rows 6..7
    # ... and id 4 now names rows 4..5, so the merged B entry's source for it (rows 2..3, in
    # the snapshots of workloads 2, 3 and 4) lies outside the tensor it comes from
    assert violations(d) == {("box-outside", f"{W}[3].ofmap[0]"),
                             ("box-outside", f"{W}[2].buffer[1].source[1]"),
                             ("box-outside", f"{W}[3].buffer[1].source[1]"),
                             ("box-outside", f"{W}[4].buffer[0].source[1]")}


def test_dangling_id_in_a_split_workload_is_caught():
    """B#1 reads id 99 instead of 2: dangling; no L2 entry covers it; the flagged merged
    entry [1, 2] no longer holds the ifmap's id; A#0 and A#1 still name B#1 as a destination
    but B#1 reads nothing of layer A any more."""
    d = doc("split_h")
    d["0"][3]["ifmap"][0]["transfer_id"] = [99]
    assert violations(d) == {
        ("transfer-dangling", f"{W}[3].ifmap[0].transfer_id[0]"),
        ("ifmap-coverage", f"{W}[3].ifmap[0]"),
        ("cur-wl-ifmap", f"{W}[3].buffer"),
        ("destination", f"{W}[0].ofmap[0].destination[1]"),
        ("destination", f"{W}[1].ofmap[0].destination[1]"),
    }


def test_destination_outside_the_consumer_layers_is_caught():
    d = doc("split_h")
    d["0"][0]["ofmap"][0]["destination"].append({"type": "core", "core_id": 0, "workload_id": 4})
    assert violations(d) == {("destination", f"{W}[0].ofmap[0].destination[2]")}


def test_split_store_with_a_box_of_neither_frame_is_caught():
    d = doc("split_n")
    d["-1"]["in"][1]["upper"][1] = 15  # 16 channels of an 8-channel layer
    assert violations(d) == {("dram-store", '$["-1"].in[1]'), ("box-outside", '$["-1"].in[1]')}


def test_split_ifmap_outside_both_frames_is_caught():
    d = doc("split_n")
    d["0"][2]["ifmap"][0]["lower"][2] = 1
    d["0"][2]["ifmap"][0]["upper"][2] = 4  # rows 1..4 of a 4-row tensor
    d["0"][2]["ifmap"][0]["size"] = 128
    assert ("box-outside", f"{W}[2].ifmap[0]") in violations(d)


def test_merged_entry_without_the_read_id_is_caught():
    d = doc("split_h")
    d["0"][2]["buffer"][0]["cur_wl_ifmap"] = False  # wl 2 reads id 1: no flagged entry holds it
    del d["0"][2]["buffer"][0]["cur_wl_ifmap"]
    d["0"][2]["buffer"][1]["cur_wl_ifmap"] = True  # the B entry [3, 4]: none of wl 2's ids
    assert violations(d) == {("cur-wl-ifmap", f"{W}[2].buffer")}


@pytest.mark.parametrize("edit,check,path", [
    (lambda d: d["0"][1].__setitem__("time", -5), "header", f"{W}[1].time"),
    (lambda d: d.__setitem__("xlen", -3), "header", "$.xlen"),
    (lambda d: d.update(xlen=2, ylen=2), "header", "$"),
    (lambda d: d.__setitem__("buffersize", 0), "header", "$.buffersize"),
])
def test_hostile_header_values_are_errors(edit, check, path):
    d = doc("split_n")
    edit(d)
    assert (check, path) in violations(d)


def test_replay_refuses_a_negative_time():
    d = doc("split_n")
    d["0"][1]["time"] = -5
    with pytest.raises(IRError, match="workload 1 .*negative"):
        gemini.simulate(gemini.from_dict(d))


def test_replay_of_an_n_split_file_by_hand():
    """clock 1 kHz (cycles = ms), DRAM 1280 B/s (128 B = 0.1 s, the 320 B weight 0.25 s).

    load 0 at 0..0.1; relu#0 0.1..0.2 and at its start the weight (first held by conv#0)
    0.1..0.35; conv#0 0.35..0.55 and at its start load 1 (first held by relu#1) 0.35..0.45;
    store 4 (128 B: only the slice) 0.55..0.65; relu#1 0.55..0.65; conv#1 0.65..0.85;
    store 6 0.85..0.95.
    """
    r = gemini.simulate(gemini.load(DATA / "split_n.json"), dram_bw=1280, clock_hz=1000)
    assert r.makespan == pytest.approx(0.95)
    assert [(s.start, s.end) for s in r.workloads] == [
        pytest.approx((0.1, 0.2)), pytest.approx((0.35, 0.55)), pytest.approx((0.55, 0.65)),
        pytest.approx((0.65, 0.85))]
    assert sum(s.bytes for s in r.transfers) == 128 * 4 + 320


def two_core_doc() -> dict:
    """relu on core 0 -> 1x1 conv on core 1 of a 2 x 1 mesh (from ``irdata.tiny_ir``)."""
    from irdata import tiny_ir

    d = tiny_ir()
    relu, conv = d["0"]
    conv = copy.deepcopy(conv)
    relu["ofmap"][0]["destination"] = [{"type": "core", "core_id": 1, "workload_id": 1}]
    conv["buffer"][0]["source"][0]["core_id"] = 0
    conv["buffer"] = conv["buffer"][:2]  # the received relu output and the weight
    d["-1"]["in"][0]["core_id"] = 1
    d["-1"]["out"][1]["destination"][0]["core_id"] = 1
    d.update({"0": [relu], "1": [conv], "xlen": 2, "ylen": 1})
    return d


def test_two_core_replay_with_a_mesh_hop_by_hand():
    """clock 1 kHz, DRAM 8000 B/s, mesh 4000 B/s and 10 cycles (0.01 s) per hop.

    DRAM: input (800 B) 0..0.1, then the weight (320 B, order 1) 0.1..0.14. relu (100 cycles)
    0.1..0.2; its 800-byte ofmap crosses one hop to core 1: 0.2 + 0.01 + 800/4000 = 0.41;
    conv (200 cycles) 0.41..0.61; the store (800 B) 0.61..0.71. Without mesh costs conv runs
    0.2..0.4 and the store ends at 0.5.
    """
    ir = gemini.from_dict(two_core_doc())
    assert gemini.validate(ir) == []
    r = gemini.simulate(ir, dram_bw=8000, clock_hz=1000, noc_bw=4000, hop_cycles=10)
    assert r.makespan == pytest.approx(0.71)
    assert [(s.start, s.end) for s in r.mesh] == [pytest.approx((0.2, 0.41))]
    assert r.mesh[0].bytes == 800
    free = gemini.simulate(ir, dram_bw=8000, clock_hz=1000)
    assert free.makespan == pytest.approx(0.5) and free.mesh == ()


def test_published_files_validate_clean_and_replay(published_path):
    ir = gemini.load(published_path)
    assert gemini.validate(ir) == []
    r = gemini.simulate(ir, 16e9)
    assert r.makespan >= r.sum_time  # one core: DRAM stalls can only add


def test_cli_reports_hostile_files(tmp_path, capsys):
    from npuweave.cli import main

    d = doc("split_n")
    d["0"][1]["time"] = -5
    d["xlen"] = -3
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(d))
    for args, code in ((["ir", "validate", str(path)], 1), (["ir", "simulate", str(path)], 2)):
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == code
    out = capsys.readouterr()
    assert "[header] -5 cycles" in out.out and "$.xlen: [header] -3" in out.out
    assert out.err.count("error: ") == 1 and "negative" in out.err
