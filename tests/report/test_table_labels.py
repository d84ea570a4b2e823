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
