"""``npuweave demo``: ResNet50 + BERT-base sharing the memory-centric NPU, every scheduler.

The README's first command, so it must finish in seconds on a fresh install: a few requests
per stream, built-in zoo and preset only. It runs two parts and, for each, prints the
comparison table and writes a timeline PNG (one PE/DRAM lane pair per scheduler) and a
Perfetto trace into ``--out`` (and nowhere else; every file is written atomically):

1. the defaults (``systolic-ws``, BERT at the zoo's 128 tokens): both models are
   compute-bound at batch 1, so Layerweaver's failsafe turns it off;
2. the thesis's premise: BERT-base with 32 tokens under the ``roofline`` cost model, where
   BERT is memory-bound and Layerweaver interleaves it with ResNet-50.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

DEMO_NPU = "memory-centric"


@dataclass(frozen=True, slots=True)
class DemoPart:
    """One co-scheduling run of the demo: two models, a cost model, what it shows."""

    tag: str
    models: tuple[str, ...]
    cost_model: str
    shows: str


PARTS = (
    DemoPart("part1", ("resnet50", "bert-base"), "systolic-ws",
             "the defaults: RN + BB (128 tokens) under the systolic-ws cost model, where both "
             "models are compute-bound at batch 1 and Layerweaver's failsafe runs requests "
             "first come, first served"),
    DemoPart("part2", ("resnet50", "bert-base:seq_len=32"), "roofline",
             "the thesis's premise, a memory-intensive BERT: RN + BB with 32 tokens under the "
             "roofline cost model, where Layerweaver interleaves BB's weight fetches with RN's "
             "computation"),
)


def _run_part(number: int, part: DemoPart, out: Path, requests: int, console: Any) -> None:
    from npuweave import report
    from npuweave.experiments import compare, scheduler_names
    from npuweave.hardware import preset

    png, trace = out / f"{part.tag}-timeline.png", out / f"{part.tag}-trace.json"
    console.print(f"\n[bold]Part {number}[/] shows {part.shows}; its timeline goes to {png} "
                  f"and its trace to {trace}.")
    names = scheduler_names()
    rows, results = compare(part.models, preset(DEMO_NPU), 1, names, requests,
                            cost_model=part.cost_model)
    title = (f"{' + '.join(part.models)} on {DEMO_NPU}, cost model {part.cost_model}: "
             "STP higher is better (1 = taking turns), ANTT lower is better (1 = no slowdown)")
    console.print(report.rich_table(rows, title=title))
    for name, result in results.items():
        for note in result.notes:
            console.print(f"[yellow]note[/] ({name}): {note}")
    stp = {r["scheduler"]: r["stp"] for r in rows}
    console.print(f"Layerweaver STP {stp['layerweaver']:.3f} vs sequential "
                  f"{stp['sequential']:.3f}")
    runs = {name: r.intervals for name, r in results.items()}
    report.plot_timeline(runs, png, title=f"{' + '.join(part.models)} on {DEMO_NPU} "
                                          f"({part.cost_model})")
    report.write_trace(trace, runs, dram_bw=preset(DEMO_NPU).dram_bw)


@click.command("demo")
@click.option("--out", "out_dir", default="npuweave-demo", show_default=True,
              type=click.Path(file_okay=False), help="Folder for the timelines and traces.")
@click.option("--requests", default=3, show_default=True, type=int, help="Requests per stream.")
def demo(out_dir: str, requests: int) -> None:
    """RN + BB on the memory-centric NPU: every scheduler side by side, with timeline PNGs.

    Takes a few seconds.

    \b
    Example:
      npuweave demo --out npuweave-demo --requests 3
    """
    from npuweave.cli.schedule import _console
    from npuweave.errors import ConfigError
    from npuweave.experiments import scheduler_names

    if requests < 1:
        raise ConfigError(f"--requests must be >= 1, got {requests}; use e.g. --requests 3")
    if requests > 1000:
        raise ConfigError(f"--requests {requests} is over the demo's limit of 1000 per stream; "
                          "use 'npuweave schedule' for long runs")
    started = time.perf_counter()
    console = _console()
    out = Path(out_dir)
    console.print(f"Co-scheduling ResNet-50 + BERT-base on the {DEMO_NPU} NPU ({requests} "
                  f"requests per stream) under {len(scheduler_names())} schedulers, in "
                  f"{len(PARTS)} parts; outputs go to {out.resolve()}")
    for number, part in enumerate(PARTS, start=1):
        _run_part(number, part, out, requests, console)
    console.print(f"\ndone in {time.perf_counter() - started:.1f} s; next: "
                  "npuweave schedule --models resnet50,bert-base --compare all")
