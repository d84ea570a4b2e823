"""``npuweave demo``: ResNet50 + BERT-base sharing the memory-centric NPU, every scheduler.

The README's first command, so it must finish in seconds on a fresh install: a few requests
per stream, built-in zoo and preset only. It runs two parts and, for each, prints the
comparison table and writes a timeline PNG (one PE/DRAM lane pair per scheduler) and a
Perfetto trace into ``--out`` (and nowhere else; every file is written atomically):

1. the story, under the reproduction's setup (``maestro`` layer times, BERT at the sequence
   length derived from the seeds): ResNet-50 is compute-bound and BERT-base memory-bound, so
   Layerweaver hides BERT's weight fetches under ResNet's computation;
2. the honest caveat: with SCALE-Sim-exact cycles (``systolic-ws``) and the zoo's 128 tokens,
   BERT is compute-bound too, Layerweaver has nothing to hide and its failsafe turns it off.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from npuweave.experiments.lw_setup import DERIVED_SEQ_LEN

DEMO_NPU = "memory-centric"


@dataclass(frozen=True, slots=True)
class DemoPart:
    """One co-scheduling run of the demo: two models, a cost model, what it shows."""

    tag: str
    models: tuple[str, ...]
    cost_model: str
    shows: str


PARTS = (
    DemoPart("part1", ("resnet50", f"bert-base:seq_len={DERIVED_SEQ_LEN}"), "maestro",
             "the story, under the Layerweaver reproduction's setup (MAESTRO layer times, BERT "
             f"with the {DERIVED_SEQ_LEN} tokens derived from the thesis)"),
    DemoPart("part2", ("resnet50", "bert-base"), "systolic-ws",
             "the honest caveat: SCALE-Sim-exact cycles (systolic-ws) and BERT at the zoo's "
             "128 tokens"),
)


def why(models: tuple[str, ...], cost_model: str) -> str:
    """One sentence on why Layerweaver helps (or cannot) here, from the models' totals."""
    from npuweave.cost import LayerCost, profile
    from npuweave.hardware import preset
    from npuweave.workload import load_layers

    npu = preset(DEMO_NPU)
    parts, sides = [], set()
    for spec in models:
        total = sum(profile(load_layers(spec), npu, 1, model=cost_model), LayerCost())
        fetch = total.weight_bytes / npu.dram_bw
        side = "compute" if total.compute_s >= fetch else "memory"
        sides.add(side)
        parts.append(f"{spec.split(':')[0]} computes {total.compute_s * 1e3:.2f} ms and fetches "
                     f"{fetch * 1e3:.2f} ms of weights per request ({side}-bound)")
    if len(sides) == 2:
        return ("Why: " + "; ".join(parts) + ", so Layerweaver fetches one model's weights "
                "while the other computes and keeps both the PEs and the DRAM busy.")
    return ("Why not: " + "; ".join(parts) + f", so both are {sides.pop()}-bound, there is no "
            "idle resource to fill, and Layerweaver's failsafe runs requests first come, "
            "first served.")


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
    console.print(why(part.models, part.cost_model))
    runs = {name: r.intervals for name, r in results.items()}
    report.plot_timeline(runs, png, title=f"{' + '.join(part.models)} on {DEMO_NPU} "
                                          f"({part.cost_model})")
    report.write_trace(trace, runs)


@click.command("demo")
@click.option("--out", "out_dir", default="npuweave-demo", show_default=True,
              type=click.Path(file_okay=False), help="Folder for the timelines and traces.")
@click.option("--requests", default=3, show_default=True, type=int, help="Requests per stream.")
def demo(out_dir: str, requests: int) -> None:
    """RN + BB on the memory-centric NPU: every scheduler side by side, with timeline PNGs.

    \b
    Part 1 is the Layerweaver story under the reproduction's setup; part 2 the caveat with
    SCALE-Sim-exact costs. Example:
      npuweave demo --out demo-out --requests 3
    """
    from npuweave.cli.schedule import _console
    from npuweave.errors import ConfigError
    from npuweave.experiments import scheduler_names

    if requests < 1:
        raise ConfigError(f"--requests must be >= 1, got {requests}")
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
