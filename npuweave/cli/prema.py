"""``npuweave predict`` and ``npuweave reproduce prema``.

``predict`` prints PREMA's estimate of one task (Algorithm 1 per layer plus the RNN
output-length table) beside the simulated isolated time for the actual output length.
"""

from __future__ import annotations

from typing import Any

import click

from npuweave.cli._checks import FACTOR, SEED, count
from npuweave.errors import ConfigError


def _task_name(model: str) -> str:
    """A PREMA task name from a task name (``rnn-asr``) or a zoo name/alias (``lstm-speech``)."""
    from npuweave.workload import seqlen, zoo

    key = model.lower()
    if key in seqlen.MIX:
        return key
    canon = zoo.canonical(model)
    for name, zoo_model in seqlen.MIX.items():
        if zoo_model == canon:
            return name
    raise ConfigError(f"model {model!r} is not in PREMA's mix; use one of "
                      f"{', '.join(seqlen.MIX)} (or their zoo names)")


def predict_row(task: str, npu_spec: str, batch: int, in_len: int | None,
                out_len: int | None, seed: int) -> dict[str, Any]:
    """One row: the estimate and the simulated isolated time (actual length drawn if not
    given: uniformly among the outputs profiled for ``in_len``)."""
    import numpy as np

    from npuweave.cost.predictor import estimate, expected_out_len, isolated_time
    from npuweave.hardware import get_npu
    from npuweave.workload import seqlen

    npu = get_npu(npu_spec)
    name = _task_name(task)
    rnn = name in seqlen.names()
    if not rnn and (in_len is not None or out_len is not None):
        raise ConfigError(f"{name} is a CNN: it has no --in-len/--out-len")
    if rnn and in_len is None:
        prof = seqlen.profile(name)
        raise ConfigError(f"{name} is an RNN: give --in-len (profiled: {prof.inputs[0]}.."
                          f"{prof.inputs[-1]})")
    expected = expected_out_len(name, in_len)
    if rnn and out_len is None:
        seen = seqlen.profile(name).observed(in_len)  # type: ignore[arg-type]
        out_len = int(seen[int(np.random.default_rng(seed).integers(len(seen)))])
    if rnn and out_len is not None and out_len < 1:
        raise ConfigError(f"--out-len must be >= 1, got {out_len}")
    est = estimate(name, npu, batch, in_len)
    sim = isolated_time(name, npu, batch, in_len, None if name == "rnn-sa" else out_len)
    return {"task": name, "model": seqlen.MIX[name], "npu": npu.name, "batch": batch,
            "in_len": in_len, "expected_out_len": expected,
            "actual_out_len": in_len if name == "rnn-sa" else out_len,
            "estimate_ms": est * 1e3, "simulated_ms": sim * 1e3,
            "error_pct": 100.0 * (est - sim) / sim}


@click.command("predict")
@click.argument("model")
@click.option("--npu", "npu_spec", default="prema", show_default=True,
              help="NPU preset or YAML file.")
@click.option("--batch", default=1, show_default=True, type=click.IntRange(1, 4096))
@click.option("--in-len", type=count(1, 1_000_000), default=None,
              help="RNN input length (tokens, words, or 80 ms speech segments).")
@click.option("--out-len", type=count(1, 1_000_000), default=None,
              help="Actual output length (default: drawn from the profile with --seed).")
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the row as JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the row as CSV.")
def predict(model: str, npu_spec: str, batch: int, in_len: int | None, out_len: int | None,
            seed: int, json_path: str | None, csv_path: str | None) -> None:
    """PREMA's estimate of one task vs its simulated isolated time.

    MODEL is a PREMA task (cnn-an cnn-gn cnn-vn cnn-mn rnn-sa rnn-mt1 rnn-mt2 rnn-asr) or its
    zoo name (lstm-translation means rnn-mt1, English to German).

    \b
    Example:
      npuweave predict lstm-speech --npu prema --in-len 20
      npuweave predict rnn-mt2 --in-len 12 --out-len 9 --json p.json
    """
    from npuweave import report
    from npuweave.cli._console import console
    from npuweave.fileio import check_outputs

    check_outputs(("--json", json_path, "json"), ("--csv", csv_path, "csv"))
    row = predict_row(model, npu_spec, batch, in_len, out_len, seed)
    console().print(report.rich_table([row], title="PREMA prediction"))
    if json_path:
        report.write_rows_json(json_path, {"rows": [row]})
    if csv_path:
        report.write_csv(csv_path, [row])


def _progress(total: int, work: Any) -> Any:
    """Run ``work(step)`` under a rich progress bar on stderr."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description:<34}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task("reproducing PREMA", total=total)

        def step(label: str) -> None:
            bar.update(task, advance=1, description=label)

        return work(step)


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per configuration (what --csv writes)."""
    rows = []
    for label, imp in result["improvements"].items():
        means = result["means"][label]
        sla = result["sla"][label]
        rows.append({"config": label, **{k: round(v, 4) for k, v in imp.items()},
                     "antt": means["antt"], "stp": means["stp"], "fairness": means["fairness"],
                     "sla_beyond_4": sla["beyond_4"], "preemptions": means["preemptions"],
                     "drains": means["drains"]})
    return rows


@click.command("prema")
@click.option("--runs", default=25, show_default=True, type=count(1, 10_000),
              help="Workloads per policy.")
@click.option("--tasks", default=8, show_default=True, type=count(1, 1000),
              help="Tasks per workload.")
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option("--reading", default="paper", show_default=True,
              help="Reading preset of the garbled places: paper, dysta or canplane.")
@click.option("--npu", "npu_spec", default="prema", show_default=True)
@click.option("--pairs", default=40, show_default=True, type=click.IntRange(1, 100_000),
              help="Two-task runs of the Figs 5-6 study.")
@click.option("--span", default=1.0, show_default=True, type=FACTOR,
              help="Dispatch window = span x the tasks' summed isolated times.")
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Processes to spread the simulations over.")
@click.option("--dask", "dask_addr", default=None, metavar="ADDR",
              help="Run on Dask instead of --jobs: local:N workers or tcp://scheduler:8786.")
@click.option("--no-kill", is_flag=True, help="Skip the Fig. 15 KILL configurations.")
@click.option("--no-readings", is_flag=True, help="Skip the other reading presets.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Per-config rows as CSV.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Everything as JSON.")
@click.option("--plots", "plot_dir", type=click.Path(file_okay=False),
              help="Write Figs 11-15 analogs as PNG into this folder.")
def reproduce_prema(runs: int, tasks: int, seed: int, reading: str, npu_spec: str, pairs: int,
                    span: float, jobs: int, dask_addr: str | None, no_kill: bool,
                    no_readings: bool, csv_path: str | None, json_path: str | None,
                    plot_dir: str | None) -> None:
    """Re-run PREMA's evaluation (Figs 5-6, 11-15, predictor, oracle, readings).

    \b
    Example:
      npuweave reproduce prema --runs 5 --plots plots --json prema.json
    """
    from npuweave import report
    from npuweave.cli._console import console
    from npuweave.experiments.executor import check_dask
    from npuweave.experiments.prema_workload import check_run, check_workload
    from npuweave.fileio import check_output_dir, check_outputs
    from npuweave.hardware import get_npu
    from npuweave.schedule.prema import reading as get_reading

    check_outputs(("--csv", csv_path, "csv"), ("--json", json_path, "json"))
    check_output_dir(plot_dir, "--plots")
    check_dask(dask_addr)
    check_run(runs, tasks)
    check_workload(tasks, (1,), span)
    get_reading(reading)
    npu = get_npu(npu_spec)
    from npuweave.experiments.prema_repro import reproduce_prema as run
    from npuweave.experiments.prema_repro import total_steps

    total = total_steps(runs, pairs, not no_kill, not no_readings)
    result = _progress(total, lambda step: run(npu, runs, tasks, seed, reading, pairs,
                                               not no_kill, not no_readings, step, jobs,
                                               span, dask_addr))
    out = console()
    out.print(f"PREMA reproduction on {npu.name}: {runs} runs of {tasks} tasks, seed {seed}, "
              f"reading {reading}, dispatch span {span:g}")
    out.print(report.rich_table(_rows(result), title="Improvement over NP-FCFS (x)"))
    out.print(report.rich_table(result["versus"], title="Ours beside the paper"))
    rows = [{"mechanism": k, **v} for k, v in result["two_task"].items()]
    out.print(report.rich_table(rows, title="Two-task P-HPF vs NP-FCFS (Figs 5-6)"))
    if "readings" in result:
        rows = [{"reading": k, **v} for k, v in result["readings"].items()]
        out.print(report.rich_table(rows, title="P-PREMA (dynamic) under each reading"))
    if csv_path:
        report.write_csv(csv_path, _rows(result))
    if json_path:
        report.write_rows_json(json_path, result)
    if plot_dir:
        from npuweave.report.prema import plot_prema

        for path in plot_prema(result, plot_dir):
            out.print(f"plot: {path}")
