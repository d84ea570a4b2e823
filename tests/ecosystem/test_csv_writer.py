"""One CSV writer, one convention: LF line ends everywhere, ``-`` prints to stdout everywhere."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from eco_helpers import run

from npuweave.fileio import csv_text

ROOT = Path(__file__).resolve().parents[2] / "npuweave"


def test_csv_text_convention():
    text = csv_text([{"a": 1, "b": 0.1 + 0.2}, {"a": "x,y", "c": None}])
    # header from first appearance, None empty, full float precision, quoting, LF only
    assert text == 'a,b,c\n1,0.30000000000000004,\n"x,y",,\n'


def test_profile_and_schedule_write_lf_files(tmp_path, capsys):
    p, s = tmp_path / "p.csv", tmp_path / "s.csv"
    assert run(["profile", "ncf", "--quiet", "--csv", str(p)], capsys)[0] == 0
    assert run(["schedule", "--models", "ncf,bert-base", "--requests", "1", "--csv", str(s)],
               capsys)[0] == 0
    for f in (p, s):
        data = f.read_bytes()
        assert b"\r" not in data and data.endswith(b"\n"), f
    assert next(csv.reader(io.StringIO(p.read_text())))[0] == "name"


def test_dash_means_stdout_for_every_table_flag(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cases = [
        ["profile", "ncf", "--quiet", "--csv", "-"],
        ["schedule", "--models", "ncf,bert-base", "--requests", "1", "--csv", "-"],
        ["schedule", "--models", "ncf,bert-base", "--requests", "1", "--csv"],
        ["reproduce", "layerweaver", "--pairs", "RN+BB", "--scenarios", "single-batch",
         "--requests", "1", "--schedulers", "sequential", "--csv", "-"],
    ]
    for argv in cases:
        code, out, err = run(argv, capsys)
        assert code == 0, (argv, err)
        rows = list(csv.DictReader(io.StringIO(out)))  # stdout holds only the CSV
        assert rows, argv
        assert "\r" not in out
    assert list(tmp_path.iterdir()) == []  # no file named '-'


def test_both_to_stdout_is_refused(capsys):
    code, _, err = run(["profile", "ncf", "--csv", "-", "--json", "-"], capsys)
    assert code == 2 and err.count("\n") == 1 and "stdout" in err


def test_one_csv_writer():
    """Only npuweave/fileio/formats.py builds CSV text (csv.writer / csv.DictWriter)."""
    offenders = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                 if p.relative_to(ROOT).as_posix() != "fileio/formats.py"
                 and re.search(r"csv\.(writer|DictWriter)\(", p.read_text())]
    assert offenders == []
