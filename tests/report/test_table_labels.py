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


def test_gemini_l2_legend_gives_each_meaning_its_own_colour(tmp_path):
    from matplotlib.colors import to_hex

    from npuweave.compile import gemini
    from npuweave.compile.gemini.multicore import compile_multicore, multicore_npu
    from npuweave.compile.gemini.timeline import _draw_occupancy
    from npuweave.hardware import preset
    from npuweave.report.figure import new_figure
    from npuweave.workload import load_layers

    npu = multicore_npu(preset("gemini-like"), cores=4, mesh=(2, 2))
    ir = compile_multicore(load_layers("resnet34"), npu, batch=4)
    assert len(ir.core_ids) == 4 and gemini.validate(ir) == []
    ax = new_figure().subplots()
    _draw_occupancy(ax, ir)
    handles, labels = ax.get_legend_handles_labels()
    assert labels == ["ifmap", "weight", "ofmap", "buffersize"]  # once each, not per core
    fills = [to_hex(h.get_facecolor()) for h in handles[:3]]
    assert len(set(fills)) == 3
    assert fills[1] == to_hex("tab:red")  # the DRAM lane's weight colour above
    assert [t.get_text() for t in ax.texts] == ["core 0", "core 1", "core 2", "core 3"]


def test_sweep_plot_keeps_coinciding_lines_visible():
    from npuweave.report.sweep_plot import plot_sweep

    rows = [{"status": "ok", "scheduler": s, "batch": b, "stp": 1.0} for s in ("a", "b")
            for b in (1, 4)]
    fig = plot_sweep(rows, "stp", "batch", settings=["scheduler", "batch"])
    lines = [c.lines[0] for c in fig.axes[0].containers]  # each errorbar's data line
    assert len(lines) == 2
    (a, b) = lines
    assert a.get_marker() != b.get_marker() and a.get_linestyle() != b.get_linestyle()
    assert a.get_markersize() > b.get_markersize()   # the first still shows under the second
    assert list(fig.axes[0].get_xticks()) == [1, 4]


def test_serve_timeline_marks_misses_and_preemptions_and_names_empty_lanes():
    import numpy as np

    from npuweave.hardware import preset
    from npuweave.report import plot_timeline
    from npuweave.report.timeline import serve_marks
    from npuweave.sim.arrivals import poisson
    from npuweave.sim.serving import serve

    arr = poisson(("resnet50", "bert-base"), (300.0, 80.0), 0.2, seed=7, priority=(1, 9),
                  deadline_s=(0.015, 0.13))
    res = serve(["resnet50", "bert-base"], preset("memory-centric"), arr, "hpf-p", log=True,
                mechanism="checkpoint")
    marks = serve_marks(res.table, res.intervals)
    t = res.table
    late = np.isfinite(t.deadline_s) & ~(t.finish_s <= t.deadline_s)
    assert sum(k == "deadline miss" for _, k in marks) == int(late.sum()) > 0
    assert sum(k == "preemption" for _, k in marks) == int(t.preemptions.sum()) > 0
    fig = plot_timeline({"hpf-p": res.intervals}, marks={"hpf-p": marks})
    legend = [x.get_text() for x in fig.legends[0].get_texts()]
    assert "deadline miss" in legend and "preemption" in legend
    # a run where one lane never works says so instead of leaving a blank row
    assert not any(x.get_text() == "nothing ran" for ax in fig.axes for x in ax.texts)
    pe_only = [iv for iv in res.intervals if iv.resource == "PE"]
    empty = plot_timeline({"x": pe_only})
    assert [x.get_text() for ax in empty.axes for x in ax.texts] == ["nothing ran"]
