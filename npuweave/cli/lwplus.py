"""``npuweave capacity`` and ``npuweave reproduce layerweaver-plus`` (thesis chapter V).

``capacity`` finds the largest total QPS (at a fixed ratio between two models) that each
scheduler sustains with fewer than ``--violations`` of the requests past their deadline, and
the STP at that load. ``reproduce layerweaver-plus`` runs Figures V.5-V.7. Options are all
checked before any work starts; user errors print one line and exit 2.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from npuweave.cli.llm import llm_branch, llm_capacity_options
from npuweave.errors import ConfigError

CAP_SCHEDULERS = ("baseline", "layerweaver", "layerweaver-plus")
#: Most requests one capacity run may simulate (each load tried runs them all again).
MAX_RUN_REQUESTS = 1_000_000


#: Most seeds or batching windows one run takes (each multiplies the whole search).
MAX_LIST = 64


def _few(text: str, flag: str) -> list[str]:
    items = str(text).split(",")
    if len(items) > MAX_LIST:
        raise ConfigError(f"{flag}: {len(items)} values; give at most {MAX_LIST} (each one "
                          "repeats the whole search)")
    return items


def _percent(text: str) -> float:
    from npuweave.fileio.values import parse_share

    v = parse_share(text, "--violations")
    if not 0 < v < 1:
        raise ConfigError(f"--violations: {text!r}; it must be between 0 and 100%")
    return v


def _progress(total: int, label: str) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from npuweave.cli._console import console

    err = console().__class__(stderr=True, width=console().width)
    return Progress("[progress.description]{task.description}", BarColumn(),
                    MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True)


def _write(rows: list[dict[str, Any]], csv_path: str | None, json_path: str | None,
           extra: dict[str, Any] | None = None) -> None:
    from npuweave.fileio import write_csv, write_json
    from npuweave.metrics.serving import jsonable

    flat = [{k: v for k, v in r.items() if not k.startswith("latency_")} for r in rows]
    if csv_path:
        write_csv(csv_path, flat)  # the union of the keys, in first-seen order
    if json_path:
        write_json(json_path, {"rows": jsonable(flat), **(extra or {})}, indent=1)


def _table(rows: list[dict[str, Any]], cols: list[str], title: str) -> None:
    from rich.table import Table

    from npuweave.cli._console import console

    t = Table(title=title)
    for c in cols:
        t.add_column(c, justify="left" if c in ("pair", "models", "scheduler", "ratio",
                                                "figure", "deadlines") else "right")
    for r in rows:
        t.add_row(*[_fmt(r.get(c)) for c in cols])
    console().print(t)


def _by_column(rows: list[dict[str, Any]], cols: list[str], title: str) -> None:
    """One line per column and one column per row (scheduler): names never truncate."""
    from rich.table import Table

    from npuweave.cli._console import console

    t = Table(title=title)
    t.add_column(cols[0], justify="left")
    for r in rows:
        t.add_column(_fmt(r.get(cols[0])), justify="right")
    for c in cols[1:]:
        t.add_row(c, *[_fmt(r.get(c)) for r in rows])
    console().print(t)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def grouping_options(fn: Any) -> Any:
    """``--grouping``, ``--max-inflight`` and ``--inherit`` (how Layerweaver+ groups its
    candidates): the same three options on ``capacity`` and ``reproduce layerweaver-plus``."""
    fn = click.option("--inherit/--no-inherit", default=False, show_default=True,
                      help="Layerweaver+: a batch in service inherits the deadline of the "
                           "requests queued behind it (not in the thesis).")(fn)
    fn = click.option("--max-inflight", default=4, show_default=True, type=int,
                      help="With --grouping per-request: batches of one model in service at "
                           "once.")(fn)
    return click.option("--grouping", default="per-model-fifo", show_default=True,
                        help="Layerweaver+ candidate group: per-model-fifo (one batch of a "
                             "model in service) | per-request (up to --max-inflight, each a "
                             "candidate); both, and --inherit, run on the compiled serving "
                             "loop when numba is installed.")(fn)


@click.command("capacity", epilog="""\b
Example:
  npuweave capacity --models resnet50,bert-base --npu lwplus --ratio 4:1 \\
      --deadline 15ms,130ms --scheduler layerweaver-plus --violations 1%
  npuweave capacity --models resnet50,bert-base --ratio 1:1 --deadline 15ms,130ms \\
      --scheduler layerweaver-plus --grouping per-request --max-inflight 4
  npuweave capacity --models resnet50,bert-base --ratio 1:1 --deadline 15ms,130ms \\
      --scheduler layerweaver-plus --inherit""")
@click.option("--models", required=True, help="Two comma-separated zoo names or ONNX paths.")
@click.option("--npu", "npu_spec", default="lwplus", show_default=True,
              help="NPU preset name or YAML file.")
@click.option("--ratio", default=None,
              help="Arrival ratio A:B in --models order: resnet50,bert-base at 4:1 is four "
                   "ResNet-50 requests per BERT request (the same convention as "
                   "`reproduce layerweaver-plus --vision-nlp-ratios`); required unless "
                   "--models is an LLM.")
@click.option("--deadline", default=None, help="Latency budget per model (e.g. 15ms,130ms); "
              "required unless --models is an LLM.")
@click.option("--scheduler", default="all", show_default=True,
              help="baseline | layerweaver | layerweaver-plus | all (the three).")
@click.option("--standalone", default="approx", show_default=True,
              help="Layerweaver+ standalone-time estimate: approx | precise.")
@click.option("--cost-model", default="maestro", show_default=True,
              help="Layer times: maestro (the thesis's) or another registered model "
                   "(systolic-ws: the former default, a sensitivity study).")
@click.option("--failsafe/--no-failsafe", default=True, show_default=True,
              help="Layerweaver: chapter IV's failsafe (FCFS when both models sit on one side "
                   "of the compute/memory balance at batch 1).")
@click.option("--violations", default="1%", show_default=True,
              help="Allowed share of requests past their deadline.")
@click.option("--requests", default=4000, show_default=True, type=int,
              help="Requests per run (per seed).")
@click.option("--seeds", default="0", show_default=True, help="Comma list of arrival seeds.")
@click.option("--max-batch", default=16, show_default=True, type=int,
              help="Dynamic batching: largest batch per model.")
@click.option("--windows", default="0,1ms,2ms,5ms", show_default=True,
              help="Baseline batching windows to sweep (the best is kept).")
@grouping_options
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write JSON.")
@click.option("--csv", "csv_path", is_flag=False, flag_value="-", default=None,
              help="Print the table as CSV, or with a path write it there.")
@llm_capacity_options
def capacity(models: str, npu_spec: str, ratio: str | None, deadline: str | None,
             scheduler: str, standalone: str, cost_model: str, failsafe: bool, violations: str,
             requests: int, seeds: str, max_batch: int, windows: str, grouping: str,
             max_inflight: int, inherit: bool, json_path: str | None, csv_path: str | None,
             **llm: Any) -> None:
    """Largest load (QPS at a fixed ratio) sustained with few deadline misses, per scheduler.

    For an LLM in --models: the largest Poisson load whose run meets --slo at its percentiles
    (e.g. --slo ttft=1s,tbt=100ms:p99), under --llm-scheduler.

    \b
    Columns:
      qps            the capacity: the largest total load whose pooled miss rate < the budget
      qps_a, qps_b   its split between the two models (--ratio, in --models order)
      stp            standalone seconds of work served per second at that load
      miss_rate      share of requests past their deadline at the capacity, with its 95%
                     Wilson interval [miss_ci_low, miss_ci_high]
      significant    "no" when that interval straddles the budget (the pass is not sure)
      qps_sure       highest evaluated load that passes surely (interval wholly below)
      failed_qps     the failing load just above the capacity (the search's bracket)
      qps_fail_sure  lowest evaluated load above the capacity that fails surely
      first_failed_qps  the first failing load met going up from low loads; below qps
                     when the miss rate dips again at higher load (a valley: batches fill)
      window_s       the baseline's best batching window; trials: loads evaluated
    """
    if llm_branch(models, llm):
        from npuweave.cli.llm import llm_capacity

        llm_capacity(models, npu_spec, llm, json_path, cost_model)  # refuses --ratio, --csv...
        return
    if ratio is None or deadline is None:
        raise ConfigError("capacity needs --ratio and --deadline (e.g. --ratio 4:1 --deadline "
                          "15ms,130ms)")
    from npuweave.experiments.lwplus import ServeSetup, capacity_row, parse_ratio
    from npuweave.fileio import check_outputs
    from npuweave.fileio.flags import parse_deadlines
    from npuweave.fileio.values import parse_seed, parse_time
    from npuweave.hardware import get_npu
    from npuweave.schedule.standalone import standalone_mode

    names = [m.strip() for m in models.split(",") if m.strip()]
    if len(names) != 2:
        raise ConfigError(f"--models: {models!r}; give exactly two models")
    a, b = parse_ratio(ratio)
    dls = parse_deadlines(deadline, 2)
    mode = standalone_mode(standalone).value
    share = _percent(violations)
    if scheduler not in (*CAP_SCHEDULERS, "all"):
        raise ConfigError(f"--scheduler: {scheduler!r}; choose one of: "
                          f"{', '.join(CAP_SCHEDULERS)}, all")
    check_outputs(("--json", json_path, "json"), ("--csv", csv_path, "csv"))
    if not 100 <= requests <= MAX_RUN_REQUESTS:
        raise ConfigError(f"--requests: {requests}; give 100 to {MAX_RUN_REQUESTS:,} requests "
                          "per run")
    from npuweave.sim.batcher import check_max_batch

    check_max_batch(max_batch)
    seed_list = tuple(parse_seed(s.strip(), "--seeds") for s in _few(seeds, "--seeds"))
    wins = tuple(parse_time(w, "--windows", low=0.0, low_open=False, high=0.999999)
                 for w in _few(windows, "--windows"))
    from npuweave.schedule.layerweaver_plus import LayerweaverPlus

    LayerweaverPlus(grouping=grouping, max_inflight=max_inflight)  # checks both options
    get_npu(npu_spec)
    from npuweave.cost.registry import get_cost_model
    from npuweave.workload import load_layers

    get_cost_model(cost_model)
    for m in names:
        load_layers(m)  # unknown model: one-line error before any work
    setup = ServeSetup(npu=npu_spec, max_batch=max_batch, baseline_windows_s=wins,
                       requests=requests, seeds=seed_list, budget=share, grouping=grouping,
                       max_inflight=max_inflight, inherit=inherit, cost_model=cost_model,
                       failsafe=failsafe)
    chosen = list(CAP_SCHEDULERS) if scheduler == "all" else [scheduler]
    keys = ["lwplus-" + mode if s == "layerweaver-plus" else s for s in chosen]
    rows = []
    with _progress(len(keys), "capacity") as bar:
        task = bar.add_task("capacity search", total=len(keys))
        for k in keys:
            rows.append(capacity_row((names[0], names[1]), (a, b), (dls[0], dls[1]), k, setup))
            bar.advance(task)
    for r in rows:
        r["significant"] = "no" if r["straddles"] else "yes"
    cols = ["scheduler", "qps", "qps_a", "qps_b", "stp", "miss_rate", "miss_ci_low",
            "miss_ci_high", "significant", "qps_sure", "failed_qps", "qps_fail_sure",
            "first_failed_qps", "window_s", "trials"]
    _by_column(rows, cols, f"capacity: {names[0]}:{names[1]} = {ratio} on {npu_spec} "
           f"({cost_model}), deadlines {deadline}, < {100 * share:g}% missed, {requests} "
           f"requests x {len(seed_list)} seed(s)")
    _legend(share)
    _write(rows, csv_path, json_path)


def _legend(share: float) -> None:
    from npuweave.cli._console import console

    console().print(
        f"qps: largest load with < {100 * share:g}% missed; miss_ci: 95% Wilson interval of "
        "its miss rate (significant=no: it contains the budget); qps_sure / qps_fail_sure: "
        "loads that surely pass / fail; failed_qps: the failing load just above qps; "
        "first_failed_qps: the first failing load going up (below qps after a valley). "
        "`npuweave capacity --help` explains every column.")


@click.command("layerweaver-plus", epilog="""\b
Example (a subset, under a minute):
  npuweave reproduce layerweaver-plus --pairs RN+BB --vision-nlp-ratios 1:4,1:1,4:1 \\
      --figures 5 --plots figs --csv lwplus.csv
  npuweave reproduce layerweaver-plus --figures 6 --json v6.json
Sensitivity study (the former default setup):
  npuweave reproduce layerweaver-plus --cost-model systolic-ws --seq-len 128 \\
      --no-failsafe --pairs RN+BB --vision-nlp-ratios 1:1 --figures 5""")
@click.option("--pairs", default="all", show_default=True,
              help="Pairs vision+NLP from {IC,MN,RN}x{BB,BL,XL}, e.g. RN+BB,MN+BL.")
@click.option("--vision-nlp-ratios", "vn_ratios", default=None,
              help="vision:NLP arrival ratios, in the pairs' order (RN+BB at 1:4: one RN per "
                   "four BB): a 2x range A..B or a comma list.  [default: 1:64..64:1]")
@click.option("--ratios", "old_ratios", default=None,
              help="Deprecated: NLP:vision ratios (the reverse order); use "
                   "--vision-nlp-ratios.")
@click.option("--figures", default="5,6,7", show_default=True, help="Which of V.5, V.6, V.7.")
@click.option("--schedulers", "sched", default="baseline,layerweaver,lwplus-approx,"
              "lwplus-precise", show_default=True, help="Schedulers to run.")
@click.option("--cost-model", default="maestro", show_default=True,
              help="Layer times: maestro (the thesis's); systolic-ws is a sensitivity study.")
@click.option("--seq-len", default=384, show_default=True, type=int,
              help="Tokens per BB/BL/XL request (MLPerf BERT's server query: 384).")
@click.option("--failsafe/--no-failsafe", default=True, show_default=True,
              help="Chapter IV's failsafe for the deadline-blind Layerweaver.")
@click.option("--deadlines", default="15ms,130ms", show_default=True,
              help="Vision and NLP deadlines for V.5 and V.6 (V.7 varies them).")
@click.option("--requests", default=4000, show_default=True, type=int,
              help="Requests per capacity run and seed (V.6 runs 60 s of arrivals).")
@click.option("--seeds", default="0,1,2", show_default=True,
              help="Arrival seeds pooled at every capacity load.")
@click.option("--windows", default="0,2ms", show_default=True,
              help="Baseline batching windows (the best is kept per point).")
@click.option("--max-batch", default=16, show_default=True, type=int)
@click.option("--jobs", default=1, show_default=True, type=int, help="Worker processes.")
@grouping_options
@click.option("--dask", "dask_addr", default=None, metavar="ADDR",
              help="Run on Dask instead of --jobs: local:N workers or tcp://scheduler:8786.")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False),
              help="Write fig5.png, fig6.png, fig7.png here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write every row.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write JSON.")
def reproduce_lwplus(pairs: str, vn_ratios: str | None, old_ratios: str | None, figures: str,
                     sched: str, cost_model: str, seq_len: int, failsafe: bool, deadlines: str,
                     requests: int, seeds: str, windows: str, max_batch: int, jobs: int,
                     grouping: str, max_inflight: int, inherit: bool, dask_addr: str | None,
                     plots_dir: str | None, csv_path: str | None,
                     json_path: str | None) -> None:
    """Re-run the Layerweaver+ evaluation (thesis V.3, Figures V.5-V.7) on lwplus, on the
    thesis's setup by default (maestro costs, 384-token NLP requests; docs/REPRODUCTION.md)."""
    from npuweave.experiments import lwplus_repro as rp

    figs = {f.strip() for f in figures.split(",") if f.strip()}
    if not figs or not figs <= {"5", "6", "7"}:
        raise ConfigError(f"--figures: {figures!r}; choose among 5, 6, 7")
    pair_list = rp.parse_pairs(pairs)
    ratio_list = _ratios(vn_ratios, old_ratios)
    setup, dls = _repro_setup(cost_model, seq_len, failsafe, deadlines, requests, seeds,
                              windows, max_batch, jobs, grouping, max_inflight, inherit)
    names = rp.check_schedulers(s.strip() for s in sched.split(",") if s.strip())
    from npuweave.experiments.executor import check_dask
    from npuweave.fileio import check_output_dir, check_outputs

    check_dask(dask_addr)
    check_outputs(("--csv", csv_path, "csv"), ("--json", json_path, "json"))
    check_output_dir(plots_dir, "--plots")
    if plots_dir:
        Path(plots_dir).mkdir(parents=True, exist_ok=True)
    tasks = []
    if "5" in figs:
        tasks += rp.fig5_tasks(pair_list, ratio_list, names, setup, seq_len, dls)
    if "6" in figs:
        tasks += rp.fig6_tasks(names, setup, seq_len, dls)
    if "7" in figs:
        cases = rp.FIG7_CASES if pairs == "all" else tuple(
            c for c in rp.FIG7_CASES if (c[0], c[1]) in pair_list)
        if not cases:
            raise ConfigError(f"--figures 7: none of Figure V.7's pairs (RN+BB, MN+BL) is in "
                              f"--pairs {pairs!r}")
        tasks += rp.fig7_tasks([n for n in names if n != "lwplus-precise"], setup, cases,
                               seq_len)
    t0 = time.perf_counter()
    with _progress(len(tasks), "reproduce") as bar:
        task = bar.add_task("layerweaver-plus points", total=len(tasks))
        rows = rp.run_tasks(tasks, jobs, lambda _: bar.advance(task), dask_addr)
    rows = rp.normalize(rows)
    elapsed = time.perf_counter() - t0
    click.echo(f"setup: {cost_model} costs, NLP at {seq_len} tokens, Layerweaver failsafe "
               f"{'on' if failsafe else 'off'}, {requests} requests x {len(setup.seeds)} "
               f"seed(s) per capacity load, V.6 {rp.FIG6_DURATION_S:g} s of arrivals")
    _show(rows)
    click.echo(f"{len(tasks)} points in {elapsed:.1f} s with --jobs {jobs}")
    if plots_dir:
        from npuweave.report.lwplus_plots import plot_fig5, plot_fig6, plot_fig7

        for f, fn in (("5", plot_fig5), ("6", plot_fig6), ("7", plot_fig7)):
            if f in figs:
                fn(rows, Path(plots_dir) / f"fig{f}.png")
    _write(rows, csv_path, json_path, {
        "thesis": rp.THESIS, "elapsed_s": elapsed, "jobs": jobs,
        "setup": {"cost_model": cost_model, "seq_len": seq_len, "failsafe": failsafe,
                  "requests": requests, "seeds": list(setup.seeds),
                  "fig6_duration_s": rp.FIG6_DURATION_S, "ratio_order": "pair order"}})


def _ratios(vn: str | None, old: str | None) -> list[tuple[float, float]]:
    """``--vision-nlp-ratios`` or the deprecated NLP:vision ``--ratios`` (with a note)."""
    from npuweave.experiments import lwplus_repro as rp

    if vn is not None and old is not None:
        raise ConfigError("give --vision-nlp-ratios or the deprecated --ratios, not both")
    if old is None:
        return rp.parse_ratios(vn)
    out = rp.nlp_first(rp.parse_ratios(old, "--ratios", "NLP:vision"))
    click.echo(f"note: --ratios is NLP:vision and deprecated; the same points are "
               f"--vision-nlp-ratios {','.join(f'{a:g}:{b:g}' for a, b in out)}", err=True)
    return out


def _repro_setup(cost_model: str, seq_len: int, failsafe: bool, deadlines: str, requests: int,
                 seeds: str, windows: str, max_batch: int, jobs: int, grouping: str,
                 max_inflight: int, inherit: bool) -> tuple[Any, tuple[float, float]]:
    """The checked ``ServeSetup`` and (vision, NLP) deadlines of ``reproduce layerweaver-plus``."""
    from npuweave.cost.registry import get_cost_model
    from npuweave.experiments.lwplus import ServeSetup
    from npuweave.fileio.flags import parse_deadlines
    from npuweave.fileio.values import parse_seed, parse_time
    from npuweave.schedule.layerweaver_plus import check_grouping
    from npuweave.sim.batcher import check_max_batch

    get_cost_model(cost_model)
    if not 1 <= seq_len <= 4096:
        raise ConfigError(f"--seq-len: {seq_len}; give 1 to 4096 tokens (the thesis's: 384)")
    dv, dn = parse_deadlines(deadlines, 2)
    if not (dv < float("inf") and dn < float("inf")):
        raise ConfigError(f"--deadlines: {deadlines!r}; both deadlines must be finite")
    wins = tuple(parse_time(w, "--windows", low=0.0, low_open=False, high=0.999999)
                 for w in _few(windows, "--windows"))
    if not 100 <= requests <= MAX_RUN_REQUESTS or not 1 <= jobs <= 1024:
        raise ConfigError(f"--requests from 100 to {MAX_RUN_REQUESTS:,} and --jobs from 1 to "
                          "1024 please")
    seed_list = tuple(parse_seed(s.strip(), "--seeds") for s in _few(seeds, "--seeds"))
    check_max_batch(max_batch)
    check_grouping(grouping, max_inflight)
    setup = ServeSetup(max_batch=max_batch, baseline_windows_s=wins, requests=requests,
                       seeds=seed_list, grouping=grouping, max_inflight=max_inflight,
                       inherit=inherit, cost_model=cost_model, failsafe=failsafe)
    return setup, (dv, dn)


def _show(rows: list[dict[str, Any]]) -> None:
    f5 = [r for r in rows if r["figure"] == "V.5"]
    if f5:
        _table(f5, ["pair", "ratio", "scheduler", "qps", "qps_sure", "qps_fail_sure",
                    "first_failed_qps", "stp", "stp_norm", "miss_rate", "urgent_share"],
               "Figure V.5: maximum sustainable STP (< 1% missed; ratio vision:NLP)")
    f6 = [r for r in rows if r["figure"] in ("V.6", "V.6-ours")]
    if f6:
        cols = ["figure", "pair", "qps", "load_ratio", "scheduler", "window_s"] + sorted(
            {k for r in f6 for k in r if k.startswith("miss_")})
        _table(f6, cols, "Figure V.6: share of requests past the deadline at fixed QPS "
                         "(V.6-ours: at Layerweaver+'s capacity, load_ratio = ours / thesis)")
    f7 = [r for r in rows if r["figure"] == "V.7"]
    if f7:
        _table(f7, ["pair", "ratio", "deadlines", "scheduler", "qps", "stp_norm"],
               "Figure V.7: STP vs deadlines (normalized to the baseline at 15/130 ms)")
