"""``npuweave compile multicore``: writes IR that ``ir validate`` accepts; bad input exits 2."""

from __future__ import annotations

import json

import pytest

from npuweave.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_compile_multicore_then_validate_and_simulate(capsys, tmp_path):
    out, summary, png = tmp_path / "rn34.json", tmp_path / "s.json", tmp_path / "t.png"
    code, text, err = run(capsys, "compile", "multicore", "resnet34", "--cores", "2", "--mesh",
                          "2x1", "--batch", "1", "--dram-bw", "16GB/s", "-o", str(out),
                          "--json", str(summary), "--timeline", str(png))
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert sorted(k for k in doc if k.lstrip("-").isdigit()) == ["-1", "0", "1"]
    assert (doc["xlen"], doc["ylen"], doc["buffersize"]) == (2, 1, 8 * 2**20)
    row = json.loads(summary.read_text())
    assert row["cores"] == 2 and row["batch"] == 1 and row["mesh_bytes"] > 0 and row["makespan_ms"] > 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    code, text, _ = run(capsys, "ir", "validate", str(out))
    assert code == 0 and "no violations" in text
    code, text, _ = run(capsys, "ir", "simulate", str(out), "--noc-bw", "32GB/s",
                        "--hop-cycles", "10")
    assert code == 0 and "mesh" in text


@pytest.mark.parametrize("args,message", [
    (["--cores", "3", "--mesh", "2x2"], "2x2 mesh holds 4 cores"),
    (["--mesh", "two"], "mesh 'two' not understood"),
    (["--npu", "prema"], "no per-core L2"),
    (["--batch", "0"], "batch"),
    (["--dram-bw", "fast"], "bandwidth"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, message):
    out = tmp_path / "x.json"
    code, _, err = run(capsys, "compile", "multicore", "resnet34", *args, "-o", str(out))
    assert code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_help_has_an_example(capsys):
    code, text, _ = run(capsys, "compile", "multicore", "--help")
    assert code == 0 and "npuweave compile multicore resnet34" in text
