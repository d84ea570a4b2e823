"""``npuweave reproduce layerweaver``: the thesis's evaluation, ours beside its numbers.

The default configuration is the thesis's setup (``maestro`` layer times and the sequence
length derived from the seeds, ``docs/REPRODUCTION.md``); ``--setup systolic`` keeps the
SCALE-Sim-exact physics as a sensitivity study. ``--seq-len-sweep`` prints the headline per
sequence length and draws it; ``--jobs`` spreads the runs over worker processes.
"""

from __future__ import annotations

import time
from typing import Any

import click

from npuweave.cli import _console as consoles
from npuweave.errors import ConfigError

_STDOUT_DATA = [False]  # a --csv/--json of '-' puts the data on stdout: tables go to stderr


def _console() -> Any:
    return consoles.pick(_STDOUT_DATA[0])


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


@click.command("layerweaver")
@click.option("--requests", default=10, show_default=True, type=int, help="Requests per stream.")
@click.option("--pairs", default="all", show_default=True,
              help="Pairs such as RN+BB,IC+XL (compute model + memory model), or 'all'.")
@click.option("--scenarios", default="single-batch,multi-batch", show_default=True,
              help="single-batch (memory-centric, batch 1) and/or multi-batch (compute-centric, 16).")
@click.option("--schedulers", "scheduler_list", default=None,
              help="Comma list of schedulers (default: the thesis's set).")
@click.option("--aimt-sweep", is_flag=True,
              help="First sweep AI-MT's two thresholds (mem x dist) per scenario and use the "
                   "best setting.")
@click.option("--aimt", "aimt_opts", default=None, metavar="KEY=V,...",
              help="AI-MT's options without a sweep: mem (fraction of the buffer, 0-1), dist "
                   "(fraction of the fill time, 0-10), merge (block cap, fraction of the "
                   "buffer, 1/2048-1). Default: mem=0.0625,dist=0.05,merge=0.03125.")
@click.option("--setup", "config_name", default="thesis", show_default=True,
              help="thesis (maestro, derived seq_len: the reproduction) or systolic "
                   "(SCALE-Sim-exact cycles, 128 tokens: a sensitivity study).")
@click.option("--config", "old_setup", default=None, hidden=True,
              help="The former name of --setup (kept working).")
@click.option("--cost-model", default=None, help="Override the configuration's cost model.")
@click.option("--seq-len", type=int, default=None,
              help="Override the tokens per request of BB, BL and XL.")
@click.option("--ncf", default="tables", show_default=True,
              help="tables (whole embedding tables per request: the thesis's tensor-dimension "
                   "transfers and layer latencies) or gather (zoo NCF, one row per table: a "
                   "sensitivity study).")
@click.option("--seq-len-sweep", "sweep", default=None,
              help="Comma list of sequence lengths: headline per length, table and PNG.")
@click.option("--png", "png_path", default="layerweaver-seq-len.png", show_default=True,
              type=click.Path(dir_okay=False), help="Where --seq-len-sweep draws its curve.")
@click.option("--jobs", default=1, show_default=True, type=int,
              help="Worker processes (0: one per CPU); rows are identical to --jobs 1.")
@click.option("--dask", "dask_addr", default=None, metavar="ADDR",
              help="Run on Dask instead: local:N workers or tcp://scheduler:8786.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write every row as CSV ('-': stdout).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write rows, averages and the thesis's numbers as JSON ('-': stdout).")
@click.option("--parquet", "parquet_path", type=click.Path(dir_okay=False),
              help="Write every row as Parquet (needs npuweave[parquet]).")
@click.option("--seed", default=0, show_default=True, type=int)
def layerweaver(requests: int, pairs: str, scenarios: str, scheduler_list: str | None,
                aimt_sweep: bool, aimt_opts: str | None, config_name: str,
                old_setup: str | None, cost_model: str | None,
                seq_len: int | None, ncf: str, sweep: str | None, png_path: str, jobs: int,
                dask_addr: str | None, csv_path: str | None, json_path: str | None,
                parquet_path: str | None, seed: int) -> None:
    """Layerweaver (thesis IV.5): 16 model pairs x 2 scenarios x every scheduler.

    \b
    Examples:
      npuweave reproduce layerweaver --aimt-sweep --jobs 2
      npuweave reproduce layerweaver --setup systolic
      npuweave reproduce layerweaver --seq-len-sweep 8,16,32,64,128 --png curve.png
    """
    from npuweave.cli._checks import stream_bounds
    from npuweave.experiments.executor import check_dask
    from npuweave.experiments.layerweaver import SCHEDULERS, check_options, resolve_physics
    from npuweave.experiments.lw_sweeps import check_seq_lens
    from npuweave.fileio import FIGURE_SUFFIXES, check_output_path, check_parquet

    if csv_path == "-" and json_path == "-":
        raise click.UsageError("--csv and --json cannot both go to stdout ('-'); give one a file")
    check_output_path(csv_path, "--csv", allow_dash=True)
    check_output_path(json_path, "--json", allow_dash=True)
    check_output_path(parquet_path, "--parquet")
    check_parquet(parquet_path)
    if sweep is not None:
        check_output_path(png_path, "--png", FIGURE_SUFFIXES)
    stream_bounds(1, requests)
    check_dask(dask_addr)
    _STDOUT_DATA[0] = "-" in (csv_path, json_path)
    started = time.perf_counter()
    names = _split(scheduler_list) if scheduler_list else list(SCHEDULERS)
    # every option is checked before the header and the progress bar appear
    if old_setup is not None:
        given = click.get_current_context().get_parameter_source("config_name")
        if given == click.core.ParameterSource.COMMANDLINE and config_name != old_setup:
            raise ConfigError(f"--config {old_setup} (the former name of --setup) contradicts "
                              f"--setup {config_name}; give --setup only")
        config_name = old_setup
    model, seq = resolve_physics(config_name, cost_model, seq_len)
    names = check_options(pairs, _split(scenarios), names, requests, model, seq, ncf, jobs)[1]
    aimt = _aimt_options(aimt_opts, aimt_sweep)
    if aimt_opts is not None and "aimt" not in names and sweep is None:
        raise ConfigError("--aimt: aimt is not among --schedulers; add it or drop --aimt")
    lens = check_seq_lens(sweep) if sweep is not None else None
    config = {"config": config_name, "cost_model": model, "seq_len": seq, "ncf": ncf,
              "requests": requests, "seed": seed, "pairs": pairs,
              "scenarios": _split(scenarios), "aimt_sweep": aimt_sweep, "aimt": aimt,
              "jobs": jobs, "dask": dask_addr}
    shown = config if lens is None else {**config, "seq_len": "swept " + ",".join(map(str, lens))}
    _console().print(_header(shown, cost_model is None and seq_len is None))
    if lens is not None:
        runs, rows = _seq_len_sweep(config, names, lens, png_path, csv_path, json_path)
    else:
        runs, rows = _main(config, names, csv_path, json_path,
                           cost_model is None and seq_len is None)
    if parquet_path:
        from npuweave import report

        report.write_parquet(parquet_path, rows)
        _console().print(f"wrote parquet: {parquet_path}")
    _console().print(f"{runs} runs in {time.perf_counter() - started:.1f} s")


def _aimt_options(text: str | None, sweep: bool) -> dict[str, float]:
    """``--aimt mem=..,dist=..`` as options, checked by building the policy (one-line errors)."""
    from npuweave.cli._checks import scheduler_options
    from npuweave.errors import ConfigError
    from npuweave.schedule import get_scheduler

    if text is None:
        return {}
    pairs = _split(text)
    if any(p.partition("=")[0].strip() == "seed" for p in pairs):
        raise ConfigError("--aimt: the seed is --seed; give mem, dist and merge only")
    opts = scheduler_options(pairs)
    if sweep and ({"mem", "dist"} & set(opts)):
        raise ConfigError("--aimt: mem and dist are chosen by --aimt-sweep; give only merge, "
                          "or drop --aimt-sweep")
    get_scheduler("aimt", **opts)
    return opts


def _is_reproduction(config: dict[str, Any], plain: bool) -> bool:
    return (config["config"] == "thesis" and plain and config["ncf"] == "tables"
            and not config.get("aimt"))


def _header(config: dict[str, Any], plain: bool) -> str:
    """One line naming the configuration, so a saved log says what it reproduced."""
    seq = "zoo default" if config["seq_len"] is None else str(config["seq_len"])
    kind = "the reproduction" if _is_reproduction(config, plain) else "sensitivity study"
    return (f"Layerweaver ({kind}): config {config['config']}, cost model "
            f"{config['cost_model']}, seq_len {seq} (BB, BL, XL), NCF {config['ncf']}, "
            f"{config['requests']} requests/stream, pairs {config['pairs']}, seed {config['seed']}")


def _common(config: dict[str, Any]) -> dict[str, Any]:
    return {"seed": config["seed"], "cost_model": config["cost_model"],
            "config": config["config"], "ncf": config["ncf"], "jobs": config["jobs"],
            "dask": config["dask"]}


def _main(config: dict[str, Any], names: list[str], csv_path: str | None,
          json_path: str | None, plain: bool) -> tuple[int, list[dict]]:
    from npuweave import report
    from npuweave.experiments import averages, headline
    from npuweave.experiments.layerweaver import THESIS, parse_pairs, reproduce_layerweaver
    from npuweave.experiments.lw_sweeps import aimt_grid, sweep_aimt_thresholds

    pairs, scenarios, requests = config["pairs"], config["scenarios"], config["requests"]
    sweep = config["aimt_sweep"] and "aimt" in names
    n_pairs = len(parse_pairs(pairs))
    total = len(scenarios) * n_pairs * (len(names) + (len(aimt_grid()) if sweep else 0))
    common = {**_common(config), "seq_len": config["seq_len"]}

    def work(step: Any) -> tuple[list[dict], dict[str, dict]]:
        rows: list[dict] = []
        sweeps: dict[str, dict] = {}
        for scenario in scenarios:
            opts = {"aimt": dict(config["aimt"])}
            if sweep:
                merge = {k: v for k, v in config["aimt"].items() if k == "merge"}
                sweeps[scenario] = sweep_aimt_thresholds(pairs, scenario, requests,
                                                         on_step=step, merge=merge, **common)
                opts["aimt"].update(mem=sweeps[scenario]["mem"], dist=sweeps[scenario]["dist"])
            rows += reproduce_layerweaver(pairs, [scenario], names, requests, opts,
                                          on_step=step, **common)
        return rows, sweeps

    rows, sweeps = _with_progress(total, work)
    _print_results(rows, sweeps, "" if _is_reproduction(config, plain) else " (sensitivity study)")
    if csv_path:
        report.write_csv(csv_path, rows)
        _wrote("csv", csv_path)
    if json_path:
        report.write_rows_json(json_path, {"config": config, "rows": rows,
                                           "averages": averages(rows),
                                           "headline": headline(rows), "thesis": THESIS,
                                           "aimt_sweeps": sweeps})
        _wrote("json", json_path)
    return total, rows


def _print_results(rows: list[dict], sweeps: dict[str, dict], kind: str) -> None:
    from npuweave import report
    from npuweave.experiments import averages, headline
    from npuweave.experiments.layerweaver import THESIS

    console = _console()
    for scenario, sw in sweeps.items():
        edge = f", on the grid's {'/'.join(sw['edge'])} edge" if sw["edge"] else ", inside the grid"
        console.print(f"AI-MT thresholds for {scenario}: mem={sw['mem']:g}, dist={sw['dist']:g} "
                      f"(best geomean STP {sw['stp_geomean']:.3f} of {len(sw['grid'])} "
                      f"settings{edge})")
    console.print(report.rich_table(_per_pair(rows), title="Layerweaver per pair"))
    console.print(report.rich_table(averages(rows), title="Averages over pairs"))
    console.print(report.rich_table(_versus(headline(rows), THESIS), title="Ours vs thesis" + kind))


def _per_pair(rows: list[dict]) -> list[dict]:
    keep = ("scenario", "pair", "stp", "fluid_bound", "bound_share", "pe_utilization",
            "dram_utilization", "antt", "max_slowdown")
    return [{k: r.get(k) for k in keep} for r in rows if r["scheduler"] == "layerweaver"]


def _seq_len_sweep(config: dict[str, Any], names: list[str], lens: list[int], png_path: str,
                   csv_path: str | None, json_path: str | None) -> tuple[int, list[dict]]:
    from npuweave import report
    from npuweave.experiments.layerweaver import THESIS, parse_pairs
    from npuweave.experiments.lw_sweeps import plot_seq_len_sweep, sweep_seq_len

    total = len(lens) * len(config["scenarios"]) * len(parse_pairs(config["pairs"])) * len(names)
    rows = _with_progress(total, lambda step: sweep_seq_len(
        lens, config["pairs"], config["scenarios"], names, config["requests"],
        {"aimt": dict(config["aimt"])}, on_step=step, **_common(config)))
    keys = ("seq_len", "scenario", "stp_gain_vs_baselines", "stp_gain_vs_aimt",
            "pe_utilization", "dram_utilization", "antt", "max_slowdown", "bound_share")
    _console().print(report.rich_table([{k: r.get(k) for k in keys} for r in rows],
                                       title="Headline per sequence length"))
    refs = [{"seq_len": "thesis", "scenario": s, **{k: v.get(k) for k in keys[2:]}}
            for s, v in THESIS.items()]
    _console().print(report.rich_table(refs, title="Thesis"))
    _console().print(f"wrote png: {plot_seq_len_sweep(rows, png_path, config['aimt'])}")
    if csv_path:
        report.write_csv(csv_path, rows)
        _wrote("csv", csv_path)
    if json_path:
        report.write_rows_json(json_path, {"config": config, "rows": rows, "thesis": THESIS})
        _wrote("json", json_path)
    return total, rows


def _wrote(kind: str, path: str) -> None:
    if path != "-":
        _console().print(f"wrote {kind}: {path}")


def _with_progress(total: int, work: Any) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description:<32}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    from rich.console import Console

    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task("reproducing", total=total)

        def step(row: dict[str, Any]) -> None:
            desc = f"{row['scenario']} {row['pair']} {row['scheduler']}"
            bar.update(task, advance=1, description=desc)

        return work(step)


def _versus(ours: dict[str, dict[str, float]], thesis: dict[str, dict[str, float]]) -> list[dict]:
    rows = []
    for scenario, values in ours.items():
        for key in dict.fromkeys([*thesis.get(scenario, {}), *values]):
            rows.append({"scenario": scenario, "metric": key, "ours": values.get(key),
                         "thesis": thesis.get(scenario, {}).get(key)})
    return rows
