"""Loading, round-tripping and summarizing the published ResNet-34 IR files."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from irdata import B1, B4, needs_data, raw

from npuweave.compile import gemini
from npuweave.errors import IRError


def resnet34_weight_bytes() -> int:
    """Total DRAM weight bytes of ResNet-34, by hand from its layer shapes.

    Each conv/FC weight of K outputs, C inputs and an R x S kernel is stored as int8 with C
    padded to a multiple of 8, plus 32 bytes of per-output-channel parameters.
    """
    convs = [(64, 3, 7)]  # conv1: K, C, kernel side
    convs += [(64, 64, 3)] * 6  # layer1: 3 blocks x 2 convs
    convs += [(128, 64, 3)] + [(128, 128, 3)] * 7 + [(128, 64, 1)]  # layer2 + downsample
    convs += [(256, 128, 3)] + [(256, 256, 3)] * 11 + [(256, 128, 1)]  # layer3
    convs += [(512, 256, 3)] + [(512, 512, 3)] * 5 + [(512, 256, 1)]  # layer4
    convs += [(1000, 512, 1)]  # fc
    assert len(convs) == 37  # 36 convolutions + 1 fully connected layer
    return sum(k * (-(-c // 8) * 8 * r * r + 32) for k, c, r in convs)


def test_hand_count_of_weights():
    assert resnet34_weight_bytes() == 22_099_712


def test_round_trip_gives_equivalent_json(ir_path):
    ir = gemini.load(ir_path)
    assert gemini.to_dict(ir) == json.loads(ir_path.read_text())
    assert gemini.loads(gemini.dumps(ir)) == ir
    hash(ir)  # frozen all the way down


def test_dump_writes_a_file_that_reads_back(ir_path, tmp_path):
    ir = gemini.load(ir_path)
    out = tmp_path / "copy.json"
    gemini.dump(ir, out)
    assert gemini.load(out) == ir
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left


@needs_data
@pytest.mark.parametrize("path,batch", [(B1, 1), (B4, 4)])
def test_summary_numbers_match_independent_counts(path, batch):
    doc = raw(path)
    s = gemini.summarize(gemini.load(path))
    # plain json/collections counting, independent of the model
    types = Counter(w["layer_type"] for w in doc["0"])
    assert s.workloads == len(doc["0"]) == 69
    assert dict(s.cores[0].by_type) == dict(types)
    assert types["pe"] == 37  # ResNet-34: 36 convolutions + 1 FC run on the PE array
    assert s.batch == batch
    assert s.traffic_bytes("load", "weight") == resnet34_weight_bytes()
    fmap_in = sum(e["size"] for e in doc["-1"]["out"] if e["type"] == "fmap")
    assert s.traffic_bytes("load", "fmap") == fmap_in
    # input image: batch x 3 channels (padded to 4 at 16 bit) x 224 x 224 x 2 bytes
    assert batch * 4 * 224 * 224 * 2 <= fmap_in
    assert s.time_cycles == sum(w["time"] for w in doc["0"])
    peak = max(sum(b["size"] for b in w["buffer"]) for w in doc["0"])
    assert s.peak_l2_bytes == peak <= doc["buffersize"]


@needs_data
def test_final_logits_are_the_only_store_at_batch_4():
    s = gemini.summarize(gemini.load(B4))
    # 4 images x 1000 classes x 16-bit logits
    assert s.traffic_bytes("store") == 4 * 1000 * 2


@needs_data
def test_quirks_are_read_as_they_are():
    ir = gemini.load(B1)
    wls = ir.workloads(0)
    assert {w.weight_buffer_key for w in wls} == {"wl1_buffer"}
    assert any(w.weight_buffer is None for w in wls)  # a null weight-buffer snapshot
    outgoing = [b for w in wls for b in w.buffer if b.type == "ofmap"]
    assert outgoing and all(b.start_send and b.transfer_ids is None for b in outgoing)
    dram_dests = [d for w in wls for o in w.ofmaps for d in o.destinations if d.type == "DRAM"]
    assert dram_dests and all(d.workload_id is None and d.core_id == -1 for d in dram_dests)


@needs_data
def test_format_document_spelling_wl0_buffer_is_accepted_and_kept():
    doc = raw(B1)
    for w in doc["0"]:
        w["wl0_buffer"] = w.pop("wl1_buffer")
    ir = gemini.from_dict(doc)
    assert {w.weight_buffer_key for w in ir.workloads(0)} == {"wl0_buffer"}
    assert gemini.to_dict(ir) == doc
    assert gemini.validate(ir) == []


def test_minimal_document_loads():
    ir = gemini.from_dict({"-1": {"in": [], "out": []}, "0": [], "buffersize": 8,
                           "top_batch_cut": 1, "xlen": 1, "ylen": 1})
    assert ir.core_ids == (0,) and ir.workloads() == ()


@pytest.mark.parametrize("text,fragment", [
    ("not json", "not valid JSON"),
    ("[1, 2]", "expected an object"),
    ('{"0": []}', "missing required top-level key"),
    ('{"-1": {"in": [], "out": []}, "buffersize": 1, "top_batch_cut": 1, "xlen": 1, "ylen": 1}',
     "no core keys"),
    ('{"-1": {"in": [], "out": [{}]}, "0": [], "buffersize": 1, "top_batch_cut": 1,'
     ' "xlen": 1, "ylen": 1}', '$["-1"].out[0]: missing required key'),
    ('{"-1": {"in": [], "out": []}, "0": [], "buffersize": "8", "top_batch_cut": 1,'
     ' "xlen": 1, "ylen": 1}', "$.buffersize: expected an integer"),
])
def test_bad_input_is_one_line_irerror(text, fragment):
    with pytest.raises(IRError) as info:
        gemini.loads(text, source="f.json")
    msg = str(info.value)
    assert fragment in msg and "\n" not in msg and msg.startswith("f.json: ")


def test_missing_file_is_irerror(tmp_path):
    with pytest.raises(IRError, match="cannot read"):
        gemini.load(tmp_path / "absent.json")


@needs_data
def test_wrong_type_deep_inside_names_the_path():
    doc = raw(B1)
    doc["0"][3]["buffer"][1]["address"] = "0x10"
    with pytest.raises(IRError, match=r'\$\["0"\]\[3\]\.buffer\[1\]\.address: expected an integer'):
        gemini.from_dict(doc, "b1.json")
