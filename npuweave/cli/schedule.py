"""``npuweave schedule``, ``npuweave schedulers`` and ``npuweave reproduce``.

``schedule`` runs closed-loop streams of several models on one NPU under one scheduler (or
compares several) and prints STP, ANTT, fairness, utilizations, per-model throughput and the
makespan over its lower bound; it can also write a timeline PNG, a Perfetto trace, JSON and
CSV. ``reproduce layerweaver`` re-runs the thesis's evaluation with a progress bar.
"""

from __future__ import annotations

import time
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
    """List the registered scheduling policies, one line each (layer-wise first, then the
    task-level ones that only 'npuweave serve' runs)."""
    from npuweave.schedule import schedulers as registry

    entries = registry("all")
    width = max(len(n) for n in entries)
    for name, description in entries.items():
        click.echo(f"{name:<{width}}  {description}")


@click.group("reproduce")
def reproduce() -> None:
    """Re-run a paper's experiment and compare with its published numbers."""


@reproduce.command("layerweaver")
@click.option("--requests", default=10, show_default=True, type=int, help="Requests per stream.")
@click.option("--pairs", default="all", show_default=True,
              help="Pairs such as RN+BB,IC+XL (compute model + memory model), or 'all'.")
@click.option("--scenarios", default="single-batch,multi-batch", show_default=True,
              help="single-batch (memory-centric, batch 1) and/or multi-batch (compute-centric, 16).")
@click.option("--schedulers", "scheduler_list", default=None,
              help="Comma list of schedulers (default: the thesis's set).")
@click.option("--aimt-sweep", is_flag=True,
              help="First sweep AI-MT's two thresholds per scenario and use the best setting.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write every row as CSV.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Write rows, averages and the thesis's numbers as JSON.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--cost-model", default="systolic-ws", show_default=True,
              help="Per-layer cost model (see npuweave.cost.cost_models()).")
@click.option("--seq-len", type=int, default=None,
              help="Tokens per request of BB, BL and XL only [default: the zoo's].")
def layerweaver(requests: int, pairs: str, scenarios: str, scheduler_list: str | None,
                aimt_sweep: bool, csv_path: str | None, json_path: str | None, seed: int,
                cost_model: str, seq_len: int | None) -> None:
    """Layerweaver (thesis IV.5): 16 model pairs x 2 scenarios x every scheduler."""
    from npuweave import report
    from npuweave.experiments import averages, headline
    from npuweave.experiments.layerweaver import SCHEDULERS, THESIS, check_options

    started = time.perf_counter()
    names = _split(scheduler_list) if scheduler_list else list(SCHEDULERS)
    # every option is checked before the header and the progress bar appear
    names = check_options(pairs, _split(scenarios), names, requests, cost_model, seq_len)[1]
    config = {"cost_model": cost_model, "seq_len": seq_len, "requests": requests,
              "seed": seed, "pairs": pairs, "scenarios": _split(scenarios),
              "aimt_sweep": aimt_sweep}
    console = _console()
    console.print(_header(config))
    rows, sweeps = _reproduce(config, names)
    for scenario, sw in sweeps.items():
        console.print(f"AI-MT thresholds for {scenario}: low={sw['low']}, high={sw['high']} "
                      f"(best geomean STP {sw['stp_geomean']:.3f} of {len(sw['grid'])} settings)")
    console.print(report.rich_table(averages(rows), title="Averages over pairs"))
    title = "Ours vs thesis" + ("" if _is_default(config) else " (sensitivity study)")
    console.print(report.rich_table(_versus(headline(rows), THESIS), title=title))
    if csv_path:
        report.write_csv(csv_path, rows)
        click.echo(f"wrote csv: {csv_path}")
    if json_path:
        report.write_rows_json(json_path, {"config": config, "rows": rows,
                                           "averages": averages(rows),
                                           "headline": headline(rows), "thesis": THESIS,
                                           "aimt_sweeps": sweeps})
        click.echo(f"wrote json: {json_path}")
    click.echo(f"{len(rows)} runs in {time.perf_counter() - started:.1f} s")


def _is_default(config: dict[str, Any]) -> bool:
    return config["cost_model"] == "systolic-ws" and config["seq_len"] is None


def _header(config: dict[str, Any]) -> str:
    """One line naming the configuration, so a saved log says what it reproduced."""
    seq = ("zoo default" if config["seq_len"] is None else str(config["seq_len"]))
    kind = ("defaults: the reproduction" if _is_default(config)
            else "not the defaults: a sensitivity study")
    return (f"Layerweaver reproduction: cost model {config['cost_model']}, seq_len {seq} "
            f"(BB, BL, XL), {config['requests']} requests/stream, pairs {config['pairs']}, "
            f"seed {config['seed']} ({kind})")


def _reproduce(config: dict[str, Any], names: list[str]) -> tuple[list[dict], dict[str, dict]]:
    from npuweave.experiments.layerweaver import (
        parse_pairs,
        reproduce_layerweaver,
        sweep_aimt_thresholds,
    )
    from npuweave.sim.sweep import HIGHS, LOWS

    pairs, scenarios, aimt_sweep = config["pairs"], config["scenarios"], config["aimt_sweep"]
    requests, seed = config["requests"], config["seed"]
    common = {"seed": seed, "cost_model": config["cost_model"], "seq_len": config["seq_len"]}
    n_pairs = len(parse_pairs(pairs))
    grid = sum(1 for lo in LOWS for hi in HIGHS if lo < hi) if aimt_sweep and "aimt" in names else 0
    total = len(scenarios) * n_pairs * (len(names) + grid)

    def work(step: Any) -> tuple[list[dict], dict[str, dict]]:
        rows, sweeps = [], {}
        for scenario in scenarios:
            opts = {}
            if aimt_sweep and "aimt" in names:
                sweeps[scenario] = sweep_aimt_thresholds(pairs, scenario, requests,
                                                         on_step=step, **common)
                opts["aimt"] = {"low": sweeps[scenario]["low"], "high": sweeps[scenario]["high"]}
            rows += reproduce_layerweaver(pairs, [scenario], names, requests, opts,
                                          on_step=step, **common)
        return rows, sweeps

    return _with_progress(total, work)


def _with_progress(total: int, work: Any) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description:<32}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=_console(), transient=False) as bar:
        task = bar.add_task("reproducing", total=total)

        def step(row: dict[str, Any]) -> None:
            desc = f"{row['scenario']} {row['pair']} {row['scheduler']}"
            bar.update(task, advance=1, description=desc)

        return work(step)


def _versus(ours: dict[str, dict[str, float]], thesis: dict[str, dict[str, float]]) -> list[dict]:
    rows = []
    for scenario, values in ours.items():
        for key, value in values.items():
            paper = thesis.get(scenario, {}).get(key)
            rows.append({"scenario": scenario, "metric": key, "ours": value,
                         "thesis": paper})
    return rows


def _add_prema() -> None:
    from npuweave.cli.prema import reproduce_prema

    reproduce.add_command(reproduce_prema)


_add_prema()
