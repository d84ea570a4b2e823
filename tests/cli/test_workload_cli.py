"""`npuweave models / npus / profile / zoo export`: output content, files, and bad input."""

import csv
import json
from pathlib import Path

import onnx
import pytest

from npuweave.cli import main
from npuweave.cost import profile
from npuweave.hardware import preset
from npuweave.workload import load_layers, lower
from npuweave.workload.onnx_import import import_onnx


def run(argv, capsys):
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_models_lists_zoo(capsys):
    code, out, _ = run(["models"], capsys)
    assert code == 0
    for name in ("resnet50", "bert-base", "ncf", "xlnet", "lstm-speech"):
        assert name in out


def test_npus_lists_presets(capsys):
    code, out, _ = run(["npus"], capsys)
    assert code == 0
    assert "memory-centric" in out and "22.9" in out and "128.0" in out


def test_profile_csv_matches_api(tmp_path, capsys):
    path = tmp_path / "rn.csv"
    code, out, _ = run(["profile", "resnet50", "--npu", "prema", "--batch", "2",
                        "--csv", str(path), "--quiet"], capsys)
    assert code == 0 and "total" in out
    rows = list(csv.DictReader(path.open()))
    layers = load_layers("resnet50")
    costs = profile(layers, preset("prema"), batch=2)
    assert len(rows) == len(layers) == 54
    assert [r["name"] for r in rows] == [layer.name for layer in layers]
    # the CSV carries the API's numbers, not a re-derivation
    assert float(rows[0]["compute_us"]) == pytest.approx(costs[0].compute_s * 1e6)
    assert int(rows[-1]["weight_bytes"]) == costs[-1].weight_bytes


def test_profile_json_totals(tmp_path, capsys):
    path = tmp_path / "bb.json"
    code, _, _ = run(["profile", "bert-base", "--json", str(path), "--quiet"], capsys)
    assert code == 0
    data = json.loads(path.read_text())
    assert data["batch"] == 1 and data["npu"]["name"] == "memory-centric"
    assert data["total"]["macs"] == sum(r["macs"] for r in data["layers"])


def test_profile_onnx_file(tmp_path, capsys):
    from npuweave.workload import zoo
    from npuweave.workload.export import save_onnx

    path = tmp_path / "mn.onnx"
    save_onnx(zoo.build("mobilenetv2"), path)
    code, out, _ = run(["profile", str(path), "--npu", "compute-centric", "--batch", "16",
                        "--quiet"], capsys)
    assert code == 0 and "total" in out


@pytest.mark.parametrize("batch", ["0", "-3"])
def test_profile_bad_batch(batch, capsys):
    code, _, err = run(["profile", "resnet50", "--batch", batch], capsys)
    assert code == 2
    assert "--batch" in err and batch in err and err.count("\n") == 1


def test_profile_unknown_model_and_preset(capsys):
    code, _, err = run(["profile", "resnet5O"], capsys)
    assert code == 2 and "resnet50" in err
    code, _, err = run(["profile", "resnet50", "--npu", "tpu-v9"], capsys)
    assert code == 2 and "memory-centric" in err


def test_profile_negative_bandwidth_yaml(tmp_path, capsys):
    p = tmp_path / "neg.yaml"
    p.write_text("pe_rows: 8\npe_cols: 8\nclock_hz: 1 GHz\ndram_bw: -1 GB/s\n"
                 "weight_buffer: 1 MiB\nact_buffer: 1 MiB\n")
    code, _, err = run(["profile", "resnet50", "--npu", str(p)], capsys)
    assert code == 2 and "dram_bw" in err and str(p) in err


def test_profile_reports_layers_too_big_for_weight_buffer(capsys):
    # prema has a 4 MiB weight buffer; VGG-16's fc6 holds 25088*4096 weights (~196 MiB at 16b)
    code, out, _ = run(["profile", "vgg16", "--npu", "prema", "--quiet"], capsys)
    assert code == 0
    assert "cannot be scheduled whole" in out


def test_profile_not_onnx(tmp_path, capsys):
    p = tmp_path / "notes.onnx"
    p.write_text("this is not a model\n")
    code, _, err = run(["profile", str(p)], capsys)
    assert code == 2 and str(p) in err


def test_zoo_export_roundtrip(tmp_path, capsys):
    path = tmp_path / "bert.onnx"
    code, out, _ = run(["zoo", "export", "bert-base", str(path)], capsys)
    assert code == 0 and path.exists()
    assert lower(import_onnx(path)) == list(load_layers("bert-base"))


def test_profile_with_number_formats(tmp_path, capsys):
    layers = load_layers("resnet50")
    cfg = tmp_path / "fmt.txt"
    cfg.write_text(f"{layers[0].name}.weight FIXED 8 4\nno_such_layer.weight FIXED 8 4\n")
    out_json = tmp_path / "p.json"
    code, out, _ = run(["profile", "resnet50", "--formats", str(cfg), "--json", str(out_json),
                        "--quiet"], capsys)
    assert code == 0 and "no_such_layer" in out
    rows = json.loads(out_json.read_text())["layers"]
    assert rows[0]["weight_bytes"] == layers[0].weight_elems  # 8-bit: one byte per weight
    assert rows[1]["weight_bytes"] == 2 * layers[1].weight_elems


NPU_YAML = ("pe_rows: 8\npe_cols: 8\nclock_hz: 1 GHz\ndram_bw: 10 GB/s\n"
            "weight_buffer: 1 MiB\nact_buffer: 1 MiB\n")


def _bad_inputs(tmp):
    """(argv, text the one-line error must contain) for user mistakes the CLI must not crash on."""
    light = (Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
             / "light_resnet50.onnx").read_bytes()
    (tmp / "empty.onnx").write_bytes(b"")
    (tmp / "cut.onnx").write_bytes(light[:300])
    (tmp / "folder.onnx").mkdir()
    (tmp / "list.yaml").write_text("- pe_rows: 8\n- pe_cols: 8\n")
    (tmp / "word.yaml").write_text(NPU_YAML.replace("10 GB/s", "fast"))
    (tmp / "inf.yaml").write_text(NPU_YAML.replace("1 MiB\nact", ".inf\nact"))
    (tmp / "blob.yaml").write_bytes(b"\xff\xfe\x00\x01")
    (tmp / "plain").write_text("a file, so nothing can be written under it\n")
    return [
        (["profile", str(tmp / "empty.onnx")], "empty.onnx"),
        (["profile", str(tmp / "cut.onnx")], "cut.onnx"),
        (["profile", str(tmp / "folder.onnx")], "folder.onnx: is a directory"),
        (["profile", "resnet50", "--npu", str(tmp / "list.yaml")], "list.yaml: expected a mapping"),
        (["profile", "resnet50", "--npu", str(tmp / "word.yaml")], "field 'dram_bw': cannot parse"),
        (["profile", "resnet50", "--npu", str(tmp / "inf.yaml")],
         "field 'weight_buffer': must be a finite number"),
        (["profile", "resnet50", "--npu", str(tmp / "blob.yaml")], "blob.yaml: not a text file"),
        (["profile", "resnet50", "--cost-model", "timeloop"], "unknown cost model 'timeloop'"),
        (["profile", "resnet50", "--formats", str(tmp / "none.cfg")], "none.cfg"),
        (["profile", "resnet50", "--quiet", "--csv", str(tmp / "plain" / "o.csv")],
         f"{tmp / 'plain' / 'o.csv'}: cannot write"),
        (["profile", "bert-base:seq_len=0"], "'seq_len' must be in [1, 512]"),
        (["zoo", "export", "resnet51", str(tmp / "x.onnx")], "unknown model 'resnet51'"),
        (["zoo", "export", "resnet50", str(tmp / "plain" / "x.onnx")],
         f"{tmp / 'plain' / 'x.onnx'}: cannot write"),
    ]


def test_bad_input_is_one_error_line_and_exit_2(tmp_path, capsys):
    for argv, needle in _bad_inputs(tmp_path):
        code, _, err = run(argv, capsys)
        assert (code, err.count("\n")) == (2, 1), (argv, err)
        assert err.startswith("error: ") and needle in err, (argv, err)


def test_zoo_export_takes_builder_parameters(tmp_path, capsys):
    path = tmp_path / "bert8.onnx"
    code, _, _ = run(["zoo", "export", "bert-base:seq_len=8", str(path)], capsys)
    assert code == 0
    layers = lower(import_onnx(path))
    assert layers == list(load_layers("bert-base:seq_len=8"))
    # the QKV projection of layer 0 runs on 8 tokens: 8 x 768 x (3 x 768) MACs
    assert {layer.name: layer.macs for layer in layers}["layer0/qkv"] == 8 * 768 * 2304
