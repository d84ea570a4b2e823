"""Screen tables label what they show: a column of milliseconds is not headed ``_s``."""

from __future__ import annotations

import io

from rich.console import Console

from npuweave.report import format_value, rich_table


def _text(table) -> str:
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None).print(table)
    return buf.getvalue()


def test_seconds_columns_print_milliseconds_under_a_unitless_header():
    out = _text(rich_table([{"row": "all", "p50_s": 0.0015, "overhead_s": 0,
                             "makespan_s": 0.002}]))
    header = out.splitlines()[1]
    assert "p50_s" not in out and "overhead_s" not in out
    assert "p50" in header and "overhead" in header and "makespan" in header
    assert "1.500 ms" in out and "0.000 ms" in out and "2.000 ms" in out


def test_format_value_units():
    assert format_value("p99_s", 0.25) == "250.000 ms"
    assert format_value("p99_s", 1) == "1000.000 ms"
    assert format_value("requests", 3) == "3"
    assert format_value("flag_s", True) == "True"


def test_profile_labels_mac_free_layers_vector_bound(capsys, monkeypatch):
    from npuweave.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    main(["profile", "bert-base", "--batch", "16"])
    rows = {line.split("│")[2].strip(): line for line in capsys.readouterr().out.splitlines()
            if line.count("│") > 5}
    token = rows["embeddings/token_type"]      # 0 MACs, vector adds longer than its fetch
    assert token.split("│")[4].strip() == "0" and token.split("│")[10].strip() == "vector"
    assert rows["layer0/qkv"].split("│")[10].strip() == "compute"


def test_ir_info_says_the_direction_in_words(tmp_path, capsys):
    from npuweave.cli import main

    ir = tmp_path / "ir.json"
    main(["compile", "multicore", "ncf", "--npu", "gemini-like", "--cores", "4", "--mesh",
          "2x2", "--batch", "4", "-o", str(ir)])
    capsys.readouterr()
    main(["ir", "info", str(ir)])
    out = capsys.readouterr().out
    assert "DRAM -> core (load" in out and "(out)" not in out
