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

from npuweave.cli._checks import MAX_REQUESTS, stream_bounds  # noqa: E402  (re-exported)
from npuweave.cli._console import cost_model_help
from npuweave.cli._runconfig import run_config
from npuweave.cli._suggest import SuggestingGroup
from npuweave.errors import ConfigError


def _console(piped: bool = False) -> Any:
    """The shared full-width console (piped output gets wide lines, not wrapped cells); on
    stderr when stdout carries CSV or JSON."""
    from npuweave.cli._console import pick

    return pick(piped)


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _write_outputs(rows: list[dict], results: dict[str, Any], info: dict[str, Any],
                   paths: dict[str, str | None]) -> list[str]:
    from npuweave import report

    written = []
    timeline, trace = paths.get("timeline"), paths.get("trace")
    json_path, csv_path, parquet_path = paths.get("json"), paths.get("csv"), paths.get("parquet")
    if timeline:
        title = f"{' + '.join(info['models'])} on {info['npu']} (batch {info['batch']})"
        report.plot_timeline({n: r.intervals for n, r in results.items()}, path=timeline,
                             title=title)
        written.append(f"timeline: {timeline}")
    if trace:
        report.write_trace(trace, {n: r.intervals for n, r in results.items()},
                           dram_bw=info.get("dram_bw"), extra=info.get("power", ()))
        written.append(f"trace: {trace} (open in ui.perfetto.dev)")
    if json_path:
        notes = {n: list(r.notes) for n, r in results.items()}
        report.write_rows_json(json_path, {**info, "rows": rows, "notes": notes})
        written.append(f"json: {json_path}")
    if csv_path and csv_path != "-":
        report.write_csv(csv_path, rows)
        written.append(f"csv: {csv_path}")
    if parquet_path:
        report.write_parquet(parquet_path, rows)
        written.append(f"parquet: {parquet_path}")
    return [w for w in written if not w.endswith(": -")]


@click.command("schedule")
@click.option("--models", required=True, help="Comma list of zoo names or ONNX paths (RN,BB...).")
@click.option("--npu", "npu_spec", default="memory-centric", show_default=True,
              help="NPU preset name or YAML file.")
@click.option("--batch", default=1, show_default=True, type=int,
              help="Batch size of every stream (>= 1).")
@click.option("--scheduler", default="layerweaver", show_default=True,
              help="Scheduling policy (see 'npuweave schedulers').")
@click.option("--compare", "compare_with", default=None,
              help="Also run these schedulers ('all' or a comma list) and compare.")
@click.option("--requests", default=10, show_default=True, type=int,
              help=f"Requests per stream (1 to {MAX_REQUESTS}).")
@click.option("--window-s", type=float, default=None,
              help="Stop issuing requests at this simulated time (seconds) instead.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed for random policies.")
@click.option("--cost-model", default="systolic-ws", show_default=True, help=cost_model_help())
@click.option("--timeline", type=click.Path(dir_okay=False), help="Write a PE/DRAM timeline PNG.")
@click.option("--trace", type=click.Path(dir_okay=False), help="Write a Perfetto/Chrome trace JSON.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write results as JSON ('-': stdout).")
@click.option("--csv", "csv_path", is_flag=False, flag_value="-", default=None,
              type=click.Path(dir_okay=False, allow_dash=True),
              help="Print the table as CSV, or with a path write it there.")
@click.option("--parquet", "parquet_path", type=click.Path(dir_okay=False),
              help="Write the table as Parquet (needs npuweave[parquet]).")
def schedule(models: str, npu_spec: str, batch: int, scheduler: str, compare_with: str | None,
             requests: int, window_s: float | None, seed: int, cost_model: str,
             timeline: str | None, trace: str | None, json_path: str | None,
             csv_path: str | None, parquet_path: str | None) -> None:
    """Co-schedule models layer by layer on one NPU as closed-loop streams.

    \b
    Examples:
      npuweave schedule --models resnet50,bert-base --npu memory-centric --requests 10
      npuweave schedule --models RN,ncf --npu compute-centric --batch 16 --compare aimt --csv
      npuweave schedule --models resnet50,bert-base --compare fcfs --csv - --trace t.json.gz
    """
    from npuweave import report
    from npuweave.experiments import compare, resolve_schedulers
    from npuweave.fileio import FIGURE_SUFFIXES, check_output_path
    from npuweave.hardware import get_npu

    check_output_path(timeline, "--timeline", FIGURE_SUFFIXES)
    check_output_path(trace, "--trace")
    check_output_path(json_path, "--json", allow_dash=True)
    check_output_path(csv_path, "--csv", allow_dash=True)
    check_output_path(parquet_path, "--parquet")
    if csv_path == "-" and json_path == "-":
        raise click.UsageError("--csv and --json cannot both go to stdout ('-'); give one a file")
    from npuweave.fileio import check_parquet

    check_parquet(parquet_path)
    names = resolve_schedulers([scheduler])
    if compare_with:
        names = resolve_schedulers(names + resolve_schedulers(compare_with))
    model_list = _split(models)
    if not model_list:
        raise ConfigError("--models is empty; give e.g. --models resnet50,bert-base")
    if batch < 1 or requests < 1:
        raise ConfigError(f"--batch and --requests must be >= 1, got {batch} and {requests}; "
                          "use e.g. --batch 1 --requests 10")
    if window_s is not None and not 0 < window_s < float("inf"):
        raise ConfigError(f"--window-s must be a finite time > 0 seconds, got {window_s}; or "
                          "leave it out and give --requests")
    stream_bounds(batch, requests)
    npu = get_npu(npu_spec)
    if window_s is not None:
        _check_window(model_list, npu, batch, window_s, cost_model)
    with _status(f"simulating {len(names)} scheduler(s)"):
        rows, results = compare(model_list, npu, batch, names, requests, window_s, seed,
                                cost_model)
    info = {"models": model_list, "npu": npu.name, "batch": batch, "requests": requests,
            "cost_model": cost_model, "seed": seed}
    piped = "-" in (csv_path, json_path)
    if csv_path == "-":
        report.write_csv("-", rows)
    elif json_path != "-":
        title = f"{' + '.join(model_list)} on {npu.name}, batch {batch}, {requests} requests/stream"
        console = _console()
        from npuweave.cli._energy import energy_rows, without_energy

        console.print(report.rich_table(without_energy(rows), title=title))
        console.print(report.rich_table(energy_rows(rows, "scheduler"), title="energy"))
        for name, result in results.items():
            for note in result.notes:
                console.print(f"[yellow]note[/] ({name}): {note}")
    paths = {"timeline": timeline, "trace": trace, "json": json_path, "csv": csv_path,
             "parquet": parquet_path}
    trace_info = {**info, "dram_bw": npu.dram_bw}
    if trace:
        from npuweave.experiments.energy import power_track

        trace_info["power"] = power_track({n: r.intervals for n, r in results.items()}, npu,
                                          batch, cost_model)
    for line in _write_outputs(rows, results, trace_info, paths):
        click.echo(f"wrote {line}", err=piped)


def _status(text: str) -> Any:
    """A spinner with elapsed time on stderr while a long step runs (gone when it ends)."""
    from rich.console import Console

    return Console(stderr=True).status(f"{text} ...")


def _check_window(models: list[str], npu: Any, batch: int, window_s: float,
                  cost_model: str) -> None:
    """A window implies a request count: bound it before the simulation starts."""
    from npuweave.cost import profile
    from npuweave.workload import load_layers

    for model in models:
        costs = profile(load_layers(model), npu, batch=batch, model=cost_model)
        alone = max(sum(c.compute_s for c in costs), sum(c.memory_s for c in costs))
        implied = window_s / alone if alone > 0 else float("inf")
        if implied > MAX_REQUESTS:
            raise ConfigError(f"--window-s {window_s:g} lets {model} issue about {implied:.3g} "
                              f"requests (one takes >= {alone:.3g} s alone), over the limit "
                              f"{MAX_REQUESTS} (npuweave.cli.schedule.MAX_REQUESTS); shorten "
                              "the window")


@click.command("schedulers")
def schedulers() -> None:
    """List the registered scheduling policies, one line each (layer-wise first, then the
    task-level ones that only 'npuweave serve' runs).

    \b
    Example:
      npuweave schedulers
    """
    from npuweave.schedule import schedulers as registry

    entries = registry("all")
    width = max(len(n) for n in entries)
    for name, description in entries.items():
        click.echo(f"{name:<{width}}  {description}")


@click.group("reproduce", cls=SuggestingGroup)
def reproduce() -> None:
    """Re-run a paper's experiment and compare with its published numbers.

    \b
    Example:
      npuweave reproduce layerweaver --pairs RN+BB --scenarios single-batch --requests 2
    """


from npuweave.cli.reproduce_lw import layerweaver as _layerweaver  # noqa: E402

reproduce.add_command(_layerweaver)

from npuweave.cli.lwplus import reproduce_lwplus  # noqa: E402  (reproduce layerweaver-plus)

reproduce.add_command(reproduce_lwplus)

from npuweave.cli.prema import reproduce_prema  # noqa: E402  (reproduce prema)

reproduce.add_command(reproduce_prema)

from npuweave.cli.reproduce_energy import reproduce_scalesim_energy  # noqa: E402

reproduce.add_command(reproduce_scalesim_energy)

from npuweave.cli.llm import reproduce_sarathi_cmd  # noqa: E402  (reproduce sarathi)

reproduce.add_command(reproduce_sarathi_cmd)

schedule = run_config(schedule)  # --config run.yaml, --save-config
