"""``npuweave sweep``: run a declarative experiment over axes of settings, in parallel."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import click

from npuweave.errors import ConfigError

_PLOT = re.compile(r"^(?P<metric>.+?)_vs_(?P<axis>.+)$")


def _kinds() -> str:
    from npuweave.experiments.sweep.kinds import KINDS  # the registry: never a stale list

    return " | ".join(KINDS)


EXAMPLE = """\b
Example experiment.yaml:
  kind: schedule   # """ + _kinds() + """
  fixed: {npu: memory-centric, requests: 10}
  axes:
    models: ["RN,BB", "RN,ncf"]
    scheduler: [sequential, layerweaver, aimt]
    batch: [1, 4]
    npu.dram_bw: ["100 GB/s", "300 GB/s"]   # any NPU field, swept
\b
  npuweave sweep experiment.yaml --jobs 2 --out results.csv --plot stp_vs_batch.png
"""


def _plot_target(path: str | None) -> tuple[str, str] | None:
    if path is None:
        return None
    m = _PLOT.match(Path(path).stem)
    if not m:
        raise ConfigError(f"--plot {path}: name the file METRIC_vs_SETTING.png "
                          "(e.g. stp_vs_batch.png) so npuweave knows what to draw")
    return m["metric"], m["axis"]


@click.command("sweep", epilog=EXAMPLE)
@click.argument("spec_path", metavar="EXPERIMENT.yaml", type=click.Path(dir_okay=False))
@click.option("--jobs", type=click.IntRange(1, 1024), default=None,
              help="Local worker processes (default: the number of cores; 1 = this process).")
@click.option("--dask", "dask_addr", default=None, metavar="ADDR",
              help="Run on Dask: tcp://host:8786 (a running scheduler) or local:N workers.")
@click.option("--out", type=click.Path(dir_okay=True, allow_dash=False), default=None,
              help="Stream rows to results.csv or results.parquet (a Parquet dataset folder).")
@click.option("--resume", is_flag=True, help="Skip the points already in --out.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Draw METRIC against SETTING into METRIC_vs_SETTING.png.")
def sweep(spec_path: str, jobs: int | None, dask_addr: str | None, out: str | None,
          resume: bool, overwrite: bool, plot_path: str | None) -> None:
    """Run every point of EXPERIMENT.yaml and write one row per point.

    The spec names a kind of run, the settings every point shares ('fixed') and the settings
    that vary ('axes', crossed as a product, or 'mode: zip'), or a list of 'points'. Failed
    points are recorded with their error and do not stop the sweep (exit status 1 if any
    failed). Ctrl-C keeps every finished row; rerun with --resume to continue.
    """
    from npuweave.experiments.sweep import load_sweep

    target = _plot_target(plot_path)
    if resume and out is None:
        raise ConfigError("--resume needs --out (the results file to continue)")
    if dask_addr is not None and jobs is not None:
        raise ConfigError("give --jobs or --dask, not both")
    spec = load_sweep(spec_path)
    if target is not None:
        _check_plot(spec, target, plot_path or "")
    from npuweave.experiments.sweep.run import check_output

    check_output(spec, out, resume, overwrite)
    from npuweave.experiments.executor import check_dask

    check_dask(dask_addr)
    n_jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    console = _console()
    console.print(f"[bold]{spec.name}[/]: {len(spec.points)} points of kind {spec.kind!r} on "
                  + (f"Dask {dask_addr}" if dask_addr else f"{n_jobs} process(es)"))
    report = _run(spec, out, n_jobs, dask_addr, resume, overwrite)
    _summary(report, out)
    if target is not None and plot_path is not None:
        from npuweave.experiments.sweep import read_results
        from npuweave.report.sweep_plot import plot_sweep

        rows = read_results(out) if out else list(report.rows)
        plot_sweep(rows, target[0], target[1], path=plot_path, settings=spec.param_names)
        console.print(f"plot: {plot_path}")
    if report.failed:
        raise SystemExit(1)


def _check_plot(spec: Any, target: tuple[str, str], path: str) -> None:
    from npuweave.experiments.sweep import KINDS

    metrics = KINDS[spec.kind].metrics
    if target[0] not in metrics:
        raise ConfigError(f"--plot {path}: {target[0]!r} is not a metric of kind {spec.kind!r} "
                          f"(metrics: {', '.join(metrics)})")
    if target[1] not in spec.param_names:
        raise ConfigError(f"--plot {path}: {target[1]!r} is not a setting of this sweep "
                          f"(settings: {', '.join(spec.param_names)})")


def _run(spec: Any, out: str | None, jobs: int, dask_addr: str | None, resume: bool,
         overwrite: bool) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from npuweave.experiments.sweep import run_sweep

    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
    progress = Progress(*cols, console=_console(stderr=True), transient=False)
    task = progress.add_task("points", total=None)

    def on_row(done: int, todo: int, row: dict[str, Any]) -> None:
        progress.update(task, completed=done, total=todo,
                        description="points" + (" (some failed)" if row["status"] != "ok"
                                                else ""))
    try:
        with progress:
            return run_sweep(spec, out, jobs=jobs, dask=dask_addr, resume=resume,
                             overwrite=overwrite, on_row=on_row)
    except KeyboardInterrupt:
        _console().print("interrupted: finished rows are saved"
                         + (f" in {out}; rerun with --resume to continue" if out else ""))
        raise SystemExit(130) from None


def _summary(report: Any, out: str | None) -> None:
    console = _console()
    console.print(f"{report.ran} points run, {report.skipped} already in {out} (resumed), "
                  f"{report.failed} failed, in {report.wall_s:.1f} s"
                  if report.skipped else
                  f"{report.ran} points run, {report.failed} failed, in {report.wall_s:.1f} s")
    errors = [r for r in report.rows if r["status"] != "ok"]
    for r in errors[:3]:
        console.print(f"  failed {r['point_id']}: {r['error']}", markup=False)
    if out:
        console.print(f"results: {out}")


def _console(stderr: bool = False) -> Any:
    if stderr:
        from rich.console import Console

        return Console(stderr=True)
    from npuweave.cli._console import console

    return console()
