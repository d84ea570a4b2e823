"""``npuweave compile groups``: table, JSON, PNG, and one-line errors."""

import json
import os

import onnx
from click.testing import CliRunner

from npuweave.cli import main
from npuweave.cli.compile import compile_

VGG19 = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                     "light_vgg19.onnx")


def test_groups_writes_json_and_png(tmp_path):
    out_json, out_png = tmp_path / "groups.json", tmp_path / "lmem.png"
    result = CliRunner().invoke(compile_, ["groups", VGG19, "--npu", "lmem-16m", "--method",
                                           "greedy", "--json", str(out_json), "--png",
                                           str(out_png)], terminal_width=160)
    assert result.exit_code == 0, result.output
    assert "Layer groups: light_vgg19 on lmem-16m" in result.output
    assert "ungrouped" in result.output and "weights stream" in result.output
    data = json.loads(out_json.read_text())
    assert data["format"] == "npuweave.layergroup/1" and data["method"] == "greedy"
    assert data["totals"]["dram_bytes"] < data["totals"]["baseline_dram_bytes"]
    assert out_png.read_bytes()[:4] == b"\x89PNG"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_npu_without_lmem_exits_2(capsys):
    try:
        main(["compile", "groups", VGG19, "--npu", "prema"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("expected exit 2")
    err = capsys.readouterr().err
    assert err.startswith("error: NPU 'prema' has no local memory") and err.count("\n") == 1


def _exit_2_one_line(capsys, args):
    try:
        main(["compile", "groups", *args])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("expected exit 2")
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_bad_npu_and_options_exit_2_naming_the_field(capsys, tmp_path):
    spec = (tmp_path / "banks0.yaml")
    spec.write_text("name: b0\npe_rows: 8\npe_cols: 8\nclock_hz: 1 GHz\ndram_bw: 1 GB/s\n"
                    "weight_buffer: 1 MiB\nact_buffer: 1 MiB\nlmem_bytes: 1 MiB\nlmem_banks: 0\n")
    err = _exit_2_one_line(capsys, [VGG19, "--npu", str(spec)])
    assert "banks0.yaml" in err and "lmem_banks" in err
    assert "no local memory" in _exit_2_one_line(capsys, [VGG19, "--npu", "memory-centric"])
    assert "'--batch'" in _exit_2_one_line(capsys, [VGG19, "--batch", "0"])
    small = spec.read_text().replace("lmem_bytes: 1 MiB\nlmem_banks: 0", "lmem_bytes: 4 KiB\n"
                                     "lmem_banks: 1")
    spec.write_text(small)
    err = _exit_2_one_line(capsys, ["resnet50", "--npu", str(spec)])
    assert "'conv1' needs at least" in err and "bytes" in err
