"""``npuweave demo``: ResNet50 + BERT-base sharing the memory-centric NPU, every scheduler.

The README's first command, so it must finish in seconds on a fresh install: a few requests
per stream, built-in zoo and preset only. It prints the comparison table and writes a
timeline PNG (one PE/DRAM lane pair per scheduler) and a Perfetto trace.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

DEMO_MODELS = ("resnet50", "bert-base")
DEMO_NPU = "memory-centric"


@click.command("demo")
@click.option("--out", "out_dir", default="npuweave-demo", show_default=True,
              type=click.Path(file_okay=False), help="Folder for the timeline and trace.")
@click.option("--requests", default=3, show_default=True, type=int, help="Requests per stream.")
def demo(out_dir: str, requests: int) -> None:
    """RN + BB on the memory-centric NPU: every scheduler side by side, with a timeline PNG."""
    from npuweave import report
    from npuweave.cli.schedule import _console
    from npuweave.experiments import compare, scheduler_names
    from npuweave.hardware import preset

    started = time.perf_counter()
    console = _console()
    npu = preset(DEMO_NPU)
    names = scheduler_names()
    console.print(f"Co-scheduling {' + '.join(DEMO_MODELS)} on the {DEMO_NPU} NPU "
                  f"({requests} requests per stream) under {len(names)} schedulers...")
    rows, results = compare(DEMO_MODELS, npu, 1, names, requests)
    console.print(report.rich_table(rows, title="STP: higher is better (1 = taking turns); "
                                                "ANTT: lower is better (1 = no slowdown)"))
    for name, result in results.items():
        for note in result.notes:
            console.print(f"[yellow]note[/] ({name}): {note}")
    out = Path(out_dir)
    png = out / "timeline.png"
    trace = out / "trace.json"
    runs = {name: r.intervals for name, r in results.items()}
    report.plot_timeline(runs, png, title=f"{' + '.join(DEMO_MODELS)} on {DEMO_NPU}")
    report.write_trace(trace, runs)
    console.print(f"wrote timeline: {png.resolve()}")
    console.print(f"wrote trace: {trace.resolve()} (open in ui.perfetto.dev)")
    console.print(f"done in {time.perf_counter() - started:.1f} s; next: "
                  "npuweave schedule --models resnet50,bert-base --compare all")
