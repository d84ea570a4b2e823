"""SCALE-Sim interop: topology CSVs (conv and GEMM forms and their quirks), .cfg files as NPUs,
``zoo export --format scalesim``, and the round trip export -> import.

Golden cycle counts use SCALE-Sim v3's weight-stationary count for one layer run alone,
``folds * (2R + C + m - 2) - 1`` with ``folds = ceil(k / R) * ceil(n / C)`` (checked against
scalesim==3.0.0 by benchmarks/scalesim_crosscheck.py; docs/COST_MODEL.md), worked by hand below;
a depthwise (DP) layer is ``channels`` such runs.
"""

from __future__ import annotations

import csv
import io

import pytest
from eco_helpers import run

from npuweave.cost import profile_model
from npuweave.cost.systolic import gemm_cycles
from npuweave.errors import ConfigError, ModelImportError
from npuweave.hardware import get_npu, preset
from npuweave.hardware.scalesim import load_scalesim_cfg, scalesim_cfg_text
from npuweave.workload import load_graph, lower
from npuweave.workload.layer import LayerKind
from npuweave.workload.scalesim import read_topology, topology_rows, topology_text

# Spelled as SCALE-Sim's own example files are: spaces around values, a blank line after the
# header, a trailing comment after the last comma, a v3 sparsity ratio field.
CONV_TOPOLOGY = """Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,

Conv1,  10, 10,    3, 3,   4,  8,  1,
Conv2_DP, 12, 12, 3, 3, 16, 1, 2,#dw
FC,  1, 1, 1, 1, 100, 40, 1, 1:1,
,,,,,,,,
"""

GEMM_TOPOLOGY = "Layer,M,N,K,\nL0,196,192,384,\nL1,20,7,50,\n"

SCALE_CFG = """[general]
run_name = tiny_ws

[architecture_presets]
ArrayHeight:    32
ArrayWidth:     16
IfmapSramSzkB:   64
FilterSramSzkB:  128
OfmapSramSzkB:   32
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Bandwidth : 10
Dataflow : ws
MemoryBanks:   1
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[run_presets]
InterfaceBandwidth: USER
UseRamulatorTrace: False
"""


@pytest.fixture()
def files(tmp_path):
    conv, gemm, cfg = tmp_path / "topo.csv", tmp_path / "gemm.csv", tmp_path / "scale.cfg"
    conv.write_text(CONV_TOPOLOGY)
    gemm.write_text(GEMM_TOPOLOGY)
    cfg.write_text(SCALE_CFG)
    return conv, gemm, cfg


def test_conv_topology_layers(files):
    layers = lower(read_topology(files[0]))
    # Conv1: 10x10 unpadded, 3x3 s1 -> 8x8 outputs: m = 64, k = 4*9 = 36, n = 8
    # Conv2_DP: depthwise ("DP"): 16 channels, 12x12 3x3 s2. SCALE-Sim's output size is
    #   ceil((12 - 3 + 2) / 2) = 6 (the ragged last window counts; floor would give 5), so
    #   per channel m = 6*6 = 36, k = 9, n = 1
    # FC: 1x1 input, 100 channels, 40 filters -> m=1, k=100, n=40 (the 1:1 sparsity ignored)
    assert [(la.name, la.gemm) for la in layers] == [
        ("Conv1", (1, 64, 36, 8)), ("Conv2_DP", (16, 36, 9, 1)), ("FC", (1, 1, 100, 40))]
    assert [la.macs for la in layers] == [64 * 36 * 8, 16 * 36 * 9, 4000]
    assert all(la.kind is LayerKind.CONV for la in layers)


def test_gemm_topology_layers(files):
    layers = lower(read_topology(files[1]))
    # GEMM rows are M, N, K: (M x K) @ (K x N)
    assert [(la.name, la.gemm) for la in layers] == [("L0", (1, 196, 384, 192)),
                                                      ("L1", (1, 20, 50, 7))]


def test_cfg_is_an_npu(files):
    npu = load_scalesim_cfg(files[2])
    assert (npu.name, npu.pe_rows, npu.pe_cols) == ("tiny_ws", 32, 16)
    assert npu.weight_buffer == 128 * 1024 and npu.act_buffer == (64 + 32) * 1024
    assert npu.clock_hz == 1e9 and npu.dram_bw == 10 * 1e9  # 10 one-byte words per cycle
    assert get_npu(str(files[2])) == npu


def test_profile_topology_with_cfg_gives_scalesim_cycles(files, capsys):
    code, out, err = run(["profile", str(files[0]), "--npu", str(files[2]), "--csv", "-"],
                         capsys)
    assert code == 0, err
    cycles = {r["name"]: int(r["compute_cycles"]) for r in csv.DictReader(io.StringIO(out))}
    # R=32, C=16, fold = 2R + C + m - 2 = 78 + m
    # Conv1: ceil(36/32)*ceil(8/16) = 2 folds of 78+64 = 142 -> 284 - 1 = 283
    # Conv2_DP: 16 channel runs of ceil(9/32)*ceil(1/16) = 1 fold of 78+36 = 114 -> 113 each
    # FC: ceil(100/32)*ceil(40/16) = 4*3 = 12 folds of 78+1 = 79 -> 948 - 1 = 947
    assert cycles == {"Conv1": 283, "Conv2_DP": 16 * 113, "FC": 947}


@pytest.mark.parametrize(("text", "match"), [
    ("Layer name, H, W, FH, FW, C, NF, S,\nConv1, 10, 10, 3, 3, 4, 8, 1\n", "trailing comma|end every row"),
    ("Layer name, H, W, FH, FW, C, NF, S,\nConv1, 10, 10, 3, 3, four, 8, 1,\n", "Channels must be an integer"),
    ("Layer name, H, W, FH, FW, C, NF, S,\nConv1, 2, 2, 3, 3, 4, 8, 1,\n", "larger than the IFMAP"),
    ("Layer name, H, W, FH, FW, C, NF, S,\nConv1, 10, 10, 3, 3, 0, 8, 1,\n", "must be >= 1"),
    ("Layer,M,N,K,\nL0,196,192\n", "GEMM row"),
])
def test_bad_topologies_name_the_line(tmp_path, capsys, text, match):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(ConfigError, match=match):
        read_topology(f)
    code, _, err = run(["profile", str(f)], capsys)
    assert code == 2 and err.count("\n") == 1 and "bad.csv:2" in err


def test_header_only_and_missing_topology(tmp_path):
    f = tmp_path / "empty.csv"
    f.write_text("Layer name, IFMAP Height,\n\n")
    with pytest.raises(ModelImportError, match="no layer rows"):
        read_topology(f)
    with pytest.raises(ModelImportError, match="no such file"):
        read_topology(tmp_path / "missing.csv")


@pytest.mark.parametrize(("edit", "match"), [
    (("Dataflow : ws", "Dataflow : os"), "weight-stationary"),
    (("ArrayHeight:    32", "ArrayHeight:    0"), "ArrayHeight must be >= 1"),
    (("InterfaceBandwidth: USER", "InterfaceBandwidth: FAST"), "USER or CALC"),
    (("[architecture_presets]", "[arch]"), "no \\[architecture_presets\\]"),
])
def test_bad_cfg_files(tmp_path, capsys, edit, match):
    f = tmp_path / "bad.cfg"
    f.write_text(SCALE_CFG.replace(*edit))
    with pytest.raises(ConfigError, match=match):
        load_scalesim_cfg(f)
    code, _, err = run(["profile", "ncf", "--npu", str(f)], capsys)
    assert code == 2 and err.count("\n") == 1 and "bad.cfg" in err


def test_cfg_calc_bandwidth_and_overrides(tmp_path):
    f = tmp_path / "calc.cfg"
    f.write_text(SCALE_CFG.replace("InterfaceBandwidth: USER", "InterfaceBandwidth: CALC")
                 + "\n[npuweave]\nclock_hz: 500 MHz\ndram_latency_cycles: 7\n")
    npu = load_scalesim_cfg(f)
    assert npu.clock_hz == 5e8 and npu.dram_latency_cycles == 7
    assert npu.dram_bw == 1_000_000 * 5e8  # CALC: an interface that never stalls
    f.write_text(SCALE_CFG + "\n[npuweave]\nwarp_drive: 1\n")
    with pytest.raises(ConfigError, match="unknown field 'warp_drive'"):
        load_scalesim_cfg(f)


@pytest.mark.parametrize("name", ["memory-centric", "prema", "compute-centric"])
def test_cfg_written_for_a_preset_reads_back(tmp_path, name):
    npu = preset(name)
    f = tmp_path / f"{name}.cfg"
    f.write_text(scalesim_cfg_text(npu))
    back = load_scalesim_cfg(f)
    assert (back.pe_rows, back.pe_cols, back.clock_hz, back.dram_bw) == (
        npu.pe_rows, npu.pe_cols, npu.clock_hz, npu.dram_bw)
    assert back.weight_buffer == npu.weight_buffer


@pytest.mark.parametrize("model", ["resnet50", "mobilenetv2", "bert-base", "inceptionv3",
                                   "lstm-translation"])
def test_zoo_export_round_trip_same_layers_and_cycles(tmp_path, capsys, model):
    path = tmp_path / f"{model}.csv"
    code, out, err = run(["zoo", "export", model, str(path), "--format", "scalesim"], capsys)
    assert code == 0, err
    graph = load_graph(model)
    original = [la for la in lower(graph) if la.gemm is not None]
    back = lower(load_graph(str(path)))
    assert [la.gemm for la in back] == [la.gemm for la in original]
    npu = preset("memory-centric")
    assert [gemm_cycles(la, npu) for la in back] == [gemm_cycles(la, npu) for la in original]
    assert sum(la.macs for la in back) == sum(la.macs for la in original)
    # and the file is a fixed point: exporting the imported layers writes the same text
    assert topology_text(topology_rows(back, load_graph(str(path)))[0]) == path.read_text()


def test_export_keeps_conv_shapes_and_marks_depthwise(tmp_path, capsys):
    path = tmp_path / "mn.csv"
    assert run(["zoo", "export", "mobilenetv2", str(path)], capsys)[0] == 0  # .csv -> scalesim
    lines = path.read_text().splitlines()
    assert lines[0].startswith("Layer name, IFMAP Height") and lines[0].endswith(",")
    assert all(line.endswith(",") for line in lines)
    # stem conv: 224x224 padded by 1, 3x3 stride 2 -> 112x112 outputs; the windows read
    # (112 - 1) * 2 + 3 = 225 rows of the padded 226 (a 226 input would make SCALE-Sim, which
    # rounds up, count a 113th output row)
    assert lines[1] == "conv, 225, 225, 3, 3, 3, 32, 2,"
    # first depthwise conv: 112x112 padded to 114, 32 channels, one filter each
    assert lines[2] == "block1/conv_DP, 114, 114, 3, 3, 32, 1, 1,"
    dp = [line for line in lines if "DP" in line]
    assert dp and all(int(line.split(", ")[6]) == 1 for line in dp)  # one filter per channel
    prof = profile_model(str(path), preset("memory-centric"))
    assert prof.total.macs == sum(la.macs for la in lower(load_graph("mobilenetv2"))
                                  if la.gemm is not None)


def test_export_lists_layers_without_array_work(tmp_path, capsys):
    code, out, _ = run(["zoo", "export", "bert-base", str(tmp_path / "bb.csv")], capsys)
    assert code == 0 and "embeddings/word" in out and "no SCALE-Sim form" in out


def test_round_trip_loses_exactly_the_fused_vector_work(tmp_path, capsys):
    """What `profile` shows after the round trip: the original compute cycles of each layer
    minus its vector-unit cycles (ceil(vector_ops / lanes)), which SCALE-Sim rows cannot
    carry; the export's note says so."""
    pytest.importorskip("pandas")
    path = tmp_path / "rn.csv"
    code, out, _ = run(["zoo", "export", "resnet50", str(path)], capsys)
    assert code == 0 and "vector-unit" in out and "not in the file" in out
    npu = preset("memory-centric")
    before = profile_model("resnet50", npu)
    after = profile_model(str(path), npu)
    layers = {la.name: la for la in lower(load_graph("resnet50"))}
    got = after.to_dataframe()["compute_cycles"]
    want = before.to_dataframe()["compute_cycles"]
    assert len(got) == 54 and set(got.index) <= set(want.index)
    for name in got.index:
        vector = -(-layers[name].vector_ops // npu.lanes)
        assert got[name] == want[name] - vector, name
