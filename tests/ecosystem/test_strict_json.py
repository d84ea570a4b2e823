"""Every JSON file the CLI writes parses with a strict parser (no Infinity/NaN); one writer."""

from __future__ import annotations

import gzip
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from eco_helpers import run, strict_loads

from npuweave.fileio import json_safe, json_text, write_json

ROOT = Path(__file__).resolve().parents[2] / "npuweave"


def test_strict_loads_rejects_what_python_json_writes():
    # the test's own parser must fail on what plain json.dumps produces, or it proves nothing
    with pytest.raises(ValueError, match="Infinity"):
        strict_loads(json.dumps({"x": math.inf}))


def test_non_finite_numbers_become_null():
    doc = {"inf": math.inf, "ninf": -math.inf, "nan": math.nan, "ok": 1.5,
           "nested": [(1, math.inf)], "np": np.float64("inf"), "arr": np.array([1.0, np.nan])}
    assert strict_loads(json_text(doc)) == {"inf": None, "ninf": None, "nan": None, "ok": 1.5,
                                            "nested": [[1, None]], "np": None,
                                            "arr": [1.0, None]}
    assert json_safe({1: 2}) == {"1": 2}


def test_write_json_dash_is_stdout_and_gz_is_gzip(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_json("-", {"a": math.nan})
    assert strict_loads(capsys.readouterr().out) == {"a": None}
    assert not (tmp_path / "-").exists()
    write_json("doc.json.gz", {"a": [1, 2]})
    data = (tmp_path / "doc.json.gz").read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert strict_loads(gzip.decompress(data).decode()) == {"a": [1, 2]}


def _json_outputs(tmp_path: Path) -> list[tuple[list[str], list[Path]]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gemini"))
    from irdata import tiny_ir

    ir = tmp_path / "tiny-ir.json"
    ir.write_text(json.dumps(tiny_ir()))
    t = tmp_path
    return [
        (["profile", "bert-base", "--quiet", "--json", str(t / "p.json")], [t / "p.json"]),
        (["profile", "vgg16", "--npu", "prema", "--cost-model", "roofline", "--quiet", "--json",
          str(t / "p2.json")], [t / "p2.json"]),
        (["schedule", "--models", "ncf,bert-base", "--requests", "2", "--compare",
          "sequential,memory-only", "--json", str(t / "s.json"), "--trace", str(t / "s.trace.json"),
          "--csv", str(t / "s.csv")], [t / "s.json", t / "s.trace.json"]),
        (["reproduce", "layerweaver", "--pairs", "RN+BB", "--scenarios", "single-batch",
          "--requests", "1", "--schedulers", "sequential,memory-only", "--json",
          str(t / "r.json")], [t / "r.json"]),
        (["compile", "groups", "mobilenetv2", "--method", "greedy", "--json", str(t / "g.json")],
         [t / "g.json"]),
        (["ir", "timeline", str(ir), "-o", str(t / "ir.png"), "--trace", str(t / "ir.json")],
         [t / "ir.json"]),
        (["demo", "--out", str(t / "demo"), "--requests", "1"], []),
    ]


def test_every_json_the_cli_writes_is_strict(tmp_path, capsys):
    checked = 0
    for argv, files in _json_outputs(tmp_path):
        code, _, err = run(argv, capsys)
        assert code == 0, (argv, err)
        if argv[0] == "demo":
            files = sorted((tmp_path / "demo").glob("*.json"))
            assert files
        for f in files:
            text = f.read_text()
            assert not re.search(r"\b(Infinity|NaN)\b", text), f
            strict_loads(text)
            checked += 1
    # JSON printed to stdout, and the schema
    for argv in (["profile", "bert-base", "--quiet", "--json", "-"], ["npus", "--schema"],
                 ["schedule", "--models", "ncf,bert-base", "--requests", "1", "--json", "-"],
                 ["compile", "groups", "mobilenetv2", "--method", "greedy", "--json", "-"]):
        code, out, err = run(argv, capsys)
        assert code == 0, err
        strict_loads(out)
        checked += 1
    assert checked >= 10


def test_bert_profile_intensity_without_traffic_is_null(tmp_path, capsys):
    """bert-base has layers without DRAM traffic (attention matmuls): their intensity is inf,
    written as null (the documented sentinel), and every other intensity is a number."""
    code, out, _ = run(["profile", "bert-base", "--quiet", "--json", "-"], capsys)
    assert code == 0
    layers = strict_loads(out)["layers"]
    nulls = [r for r in layers if r["intensity"] is None]
    assert nulls and all(r["dram_bytes"] == 0 for r in nulls)
    assert all(isinstance(r["intensity"], float) for r in layers if r["dram_bytes"] > 0)


# compile/gemini/writer.py writes the Gemini IR, a format with its own spec and no floats that
# can be infinite; the Gemini engineer owns it. reader.py only quotes a key for a message.
_JSON_EXEMPT = {"compile/gemini/writer.py", "compile/gemini/reader.py"}


def test_one_json_writer():
    """Only npuweave/fileio/formats.py serializes JSON (so every file gets the strict rules)."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "fileio/formats.py" or rel in _JSON_EXEMPT:
            continue
        if re.search(r"\bjson\.dumps?\(", path.read_text()):
            offenders.append(rel)
    assert offenders == []
