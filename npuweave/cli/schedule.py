"""``npuweave schedule``, ``npuweave schedulers`` and ``npuweave reproduce``.

``schedule`` runs closed-loop streams of several models on one NPU under one scheduler (or
compares several) and prints STP, ANTT, fairness, utilizations, per-model throughput and the
makespan over its lower bound; it can also write a timeline PNG, a Perfetto trace, JSON and
CSV. ``reproduce layerweaver`` (``npuweave.cli.reproduce_lw``) re-runs the thesis's
evaluation with a progress bar.
"""

from __future__ import annotations

from typing import Any

import click

from npuweave.errors import ConfigError


def _console() -> Any:
    """The shared full-width console (piped output gets wide lines, not wrapped cells)."""
    from npuweave.cli._console import console

    return console()


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _write_outputs(rows: list[dict], results: dict[str, Any], info: dict[str, Any],
                   timeline: str | None, trace: str | None, json_path: str | None,
                   csv_path: str | None) -> list[str]:
    from npuweave import report

    written = []
    if timeline:
        title = f"{' + '.join(info['models'])} on {info['npu']} (batch {info['batch']})"
        report.plot_timeline({n: r.intervals for n, r in results.items()}, timeline, title=title)
        written.append(f"timeline: {timeline}")
    if trace:
        report.write_trace(trace, {n: r.intervals for n, r in results.items()})
        written.append(f"trace: {trace} (open in ui.perfetto.dev)")
    if json_path:
        notes = {n: list(r.notes) for n, r in results.items()}
        report.write_rows_json(json_path, {**info, "rows": rows, "notes": notes})
        written.append(f"json: {json_path}")
    if csv_path and csv_path != "-":
        report.write_csv(csv_path, rows)
        written.append(f"csv: {csv_path}")
    return written


@click.command("schedule")
@click.option("--models", required=True, help="Comma list of zoo names or ONNX paths (RN,BB...).")
@click.option("--npu", "npu_spec", default="memory-centric", show_default=True,
              help="NPU preset name or YAML file.")
@click.option("--batch", default=1, show_default=True, type=int, help="Batch size of every stream.")
@click.option("--scheduler", default="layerweaver", show_default=True,
              help="Scheduling policy (see 'npuweave schedulers').")
@click.option("--compare", "compare_with", default=None,
              help="Also run these schedulers ('all' or a comma list) and compare.")
@click.option("--requests", default=10, show_default=True, type=int,
              help="Requests per stream.")
@click.option("--window-s", type=float, default=None, help="Stop the streams at this time instead.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed for random policies.")
@click.option("--cost-model", default="systolic-ws", show_default=True, help="Per-layer cost model.")
@click.option("--timeline", type=click.Path(dir_okay=False), help="Write a PE/DRAM timeline PNG.")
@click.option("--trace", type=click.Path(dir_okay=False), help="Write a Perfetto/Chrome trace JSON.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write results as JSON.")
@click.option("--csv", "csv_path", is_flag=False, flag_value="-", default=None,
              type=click.Path(dir_okay=False, allow_dash=True),
              help="Print the table as CSV, or with a path write it there.")
def schedule(models: str, npu_spec: str, batch: int, scheduler: str, compare_with: str | None,
             requests: int, window_s: float | None, seed: int, cost_model: str,
             timeline: str | None, trace: str | None, json_path: str | None,
             csv_path: str | None) -> None:
    """Co-schedule models layer by layer on one NPU as closed-loop streams."""
    from npuweave import report
    from npuweave.experiments import compare, resolve_schedulers
    from npuweave.hardware import get_npu

    names = resolve_schedulers([scheduler])
    if compare_with:
        names = resolve_schedulers(names + resolve_schedulers(compare_with))
    model_list = _split(models)
    if not model_list:
        raise ConfigError("--models is empty; give e.g. --models resnet50,bert-base")
    if batch < 1 or requests < 1:
        raise ConfigError(f"--batch and --requests must be >= 1, got {batch} and {requests}")
    if window_s is not None and not 0 < window_s < float("inf"):
        raise ConfigError(f"--window-s must be a finite number of seconds > 0, got {window_s}; "
                          "or leave it out and give --requests")
    npu = get_npu(npu_spec)
    rows, results = compare(model_list, npu, batch, names, requests, window_s, seed, cost_model)
    info = {"models": model_list, "npu": npu.name, "batch": batch, "requests": requests,
            "cost_model": cost_model, "seed": seed}
    if csv_path == "-":
        click.echo(report.to_csv(rows), nl=False)
    else:
        title = f"{' + '.join(model_list)} on {npu.name}, batch {batch}, {requests} requests/stream"
        console = _console()
        console.print(report.rich_table(rows, title=title))
        for name, result in results.items():
            for note in result.notes:
                console.print(f"[yellow]note[/] ({name}): {note}")
    for line in _write_outputs(rows, results, info, timeline, trace, json_path, csv_path):
        click.echo(f"wrote {line}", err=csv_path == "-")


@click.command("schedulers")
def schedulers() -> None:
    """List the registered scheduling policies, one line each."""
    from npuweave.schedule import schedulers as registry

    entries = registry()
    width = max(len(n) for n in entries)
    for name, description in entries.items():
        click.echo(f"{name:<{width}}  {description}")


@click.group("reproduce")
def reproduce() -> None:
    """Re-run a paper's experiment and compare with its published numbers."""


from npuweave.cli.reproduce_lw import layerweaver as _layerweaver  # noqa: E402

reproduce.add_command(_layerweaver)
