"""``npuweave serve``: requests arriving on their own clock, served by one policy on one NPU.

Every option is parsed and validated before any work starts (one ``error:`` line, exit 2).
Prints one row for the whole run, one per model and one per priority level; ``--json`` /
``--csv`` write the same rows, ``--timeline`` / ``--trace`` the busy intervals.
"""

from __future__ import annotations

import time
from typing import Any

import click

from npuweave.cli._console import cost_model_help
from npuweave.cli._runconfig import run_config
from npuweave.cli.llm import llm_branch, llm_options
from npuweave.errors import ConfigError

TABLES = (("requests", "served", "killed", "throughput_rps", "stp", "antt", "fairness",
           "sla_violation_x2", "sla_violation_x5", "sla_violation_x10", "deadline_violation",
           "pe_util", "dram_util", "preemptions", "preempt_overhead_s"),
          ("latency_p50_s", "latency_p90_s", "latency_p95_s", "latency_p99_s",
           "latency_p99.9_s", "latency_max_s"))


SHORT = {"requests": "reqs", "throughput_rps": "req/s", "fairness": "fair",
         "sla_violation_x2": "sla x2", "sla_violation_x5": "sla x5", "sla_violation_x10": "sla x10",
         "deadline_violation": "dl miss", "pe_util": "PE", "dram_util": "DRAM",
         "preemptions": "preempt", "preempt_overhead_s": "overhead_s"}


#: Most per-model rows printed (a task set may give every request its own label); every row
#: stays in ``--json`` / ``--csv``.
SCREEN_MODELS = 30


def _on_screen(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows to print: all but the per-model rows past the first ``SCREEN_MODELS``."""
    models = [r for r in rows if r["scope"] == "model"]
    hidden = {id(r) for r in models[SCREEN_MODELS:]}
    return [r for r in rows if id(r) not in hidden]


def _names(models: list[str]) -> str:
    """The models for a title: all of them, or the first few and how many in all."""
    if len(models) <= 6:
        return " + ".join(models)
    return f"{' + '.join(models[:3])} + ... ({len(models)} models)"


def _shown(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows for the screen: ``row`` names the scope, then the chosen columns."""
    out = []
    for r in _on_screen(rows):
        label = "all" if r["scope"] == "all" else f"{r['scope']} {r['name']}"
        out.append({"row": label, **{SHORT.get(k, k.replace("latency_", "")): r.get(k)
                                     for k in keys}})
    return out

EXAMPLE = """
\b
Example:
  npuweave serve --models resnet50,bert-base --npu memory-centric --arrivals poisson \\
      --qps 300,80 --duration 200ms --seed 7 --scheduler hpf-p --priority 1,9
"""


def _with_energy(res: Any, models: list[str], npu: Any, cost_model: str
                 ) -> list[dict[str, Any]]:
    """The run's rows with energy columns on the whole-run row and on each model's row."""
    from npuweave.experiments.energy import serve_energy

    energy = serve_energy(models, res.table, res.span_s, npu, cost_model, res.intervals)
    by_model = dict(zip(models, energy[1:], strict=True))
    rows = []
    for r in res.rows:
        extra = (energy[0] if r["scope"] == "all"
                 else by_model.get(r["name"], {}) if r["scope"] == "model" else {})
        rows.append({**r, **extra})
    return rows


def _rows_of(records: Any) -> Any:
    """Records as the JSON writer takes them: a row source (streamed) as it is, else a list."""
    return records if hasattr(records, "row_chunks") else list(records)


def _energy_notes(npu: Any, batching: bool) -> list[str]:
    from npuweave.cost.energy import energy_spec

    notes = [n for n in (energy_spec(npu)[1],) if n]
    if batching:
        notes.append("energy: each served request is costed at batch 1, an upper bound under "
                      "batching (a batch fetches its weights once)")
    return notes


class _Bar:
    """A rich progress bar on simulated time, shown only once a run passes one second."""

    def __init__(self, total_s: float) -> None:
        self.total, self.t0 = total_s, time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, now: float) -> None:
        if self.bar is None:
            if time.monotonic() - self.t0 < 1.0:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("simulated {task.completed:.4g} s"), BarColumn(),
                                TimeElapsedColumn(), console=Console(stderr=True),
                                transient=True)
            self.bar.start()
            self.task = self.bar.add_task("serve", total=self.total)
        self.bar.update(self.task, completed=min(now, self.total))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@click.command("serve", epilog=EXAMPLE)
@click.option("--models", default=None,
              help="Comma list of zoo names or ONNX paths (not with a task set: a trace whose "
                   "rows carry layer_latencies_s).")
@click.option("--npu", "npu_spec", default="memory-centric", show_default=True,
              help="NPU preset name or YAML file.")
@click.option("--arrivals", "arrival_spec", default="poisson", show_default=True,
              help="poisson | loadgen-server | trace:FILE (CSV/JSON: time, model, priority, "
                   "deadline).")
@click.option("--qps", default=None, help="Requests per second per model (e.g. 300,80).")
@click.option("--duration", default=None,
              help="Arrivals are generated on [0, duration); a time with its unit (e.g. 2s, "
                   "500ms).  [default: 1s]")
@click.option("--seed", default="0", show_default=True, help="Arrival (and policy) seed.")
@click.option("--scheduler", default="layerweaver", show_default=True,
              help="Policy, layer-wise or task-level (see 'npuweave schedulers').")
@click.option("--scheduler-opt", "scheduler_opt", multiple=True,
              help="Policy option key=value (repeatable), e.g. quantum_s=0.002.")
@click.option("--preempt", default=None,
              help="PREMA policies: none | checkpoint | kill | drain | dynamic | dynamic-kill.")
@click.option("--standalone", default=None, type=click.Choice(["approx", "precise"]),
              help="layerweaver-plus: how it estimates a request's remaining standalone time "
                   "(approx: suffix sums; precise: replay alone).  [default: approx]")
@click.option("--deadline", default=None, help="Latency budget per model (e.g. 15ms,130ms).")
@click.option("--priority", default=None, help="Priority per model, integers >= 1 (e.g. 1,9).")
@click.option("--batching", default="none", show_default=True,
              help="none | window:<time>:max<N> (Triton-style dynamic batching).")
@click.option("--traffic/--no-traffic", default=True, show_default=True,
              help="Move activation spills and pay DRAM latency per transfer.")
@click.option("--cost-model", default="systolic-ws", show_default=True, help=cost_model_help())
@click.option("--max-events", default=50_000_000, show_default=True, type=int,
              help="Stop a run that fires more simulated events than this.")
@click.option("--timeline", type=click.Path(dir_okay=False), help="Write a PE/DRAM timeline PNG.")
@click.option("--trace", type=click.Path(dir_okay=False), help="Write a Perfetto/Chrome trace JSON.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write results as JSON.")
@click.option("--preempt-at", "preempt_at", default="layer", show_default=True,
              help="Preemption points: layer (the engine's units: layers, or weight tiles of "
                   "layers larger than the weight buffer).")
@click.option("--per-request", "per_request", type=click.Path(dir_okay=False),
              help="Write one row per request (.csv or .parquet).")
@click.option("--csv", "csv_path", is_flag=False, flag_value="-", default=None,
              type=click.Path(dir_okay=False, allow_dash=True),
              help="Print the table as CSV, or with a path write it there.")
@llm_options
def serve(models: str | None, npu_spec: str, arrival_spec: str, qps: str | None,
          duration: str | None, seed: str, scheduler: str, scheduler_opt: tuple[str, ...],
          preempt: str | None,
          standalone: str | None, deadline: str | None,
          priority: str | None, batching: str, traffic: bool, cost_model: str,
          max_events: int, timeline: str | None, trace: str | None, json_path: str | None,
          csv_path: str | None, preempt_at: str = "layer", per_request: str | None = None,
          **llm: Any) -> None:
    """Serve requests that arrive over time (Poisson, LoadGen Server, or a trace).

    An LLM config in --models (see 'npuweave models --family llm') serves it token by token
    with --llm-scheduler (default sarathi:chunk=512); --duration defaults to 60s then.
    """
    from npuweave.fileio import check_outputs
    from npuweave.fileio.values import parse_int, parse_seed

    check_outputs(("--timeline", timeline, "figure"), ("--trace", trace, None),
                  ("--json", json_path, "json"), ("--csv", csv_path, "csv"),
                  ("--per-request", per_request, None))
    seed_n = parse_seed(seed)
    if llm_branch(models, llm, arrival_spec):
        from npuweave.cli.llm import build_spec, is_given, serve_llm_cli
        from npuweave.fileio.flags import parse_duration

        # options of layer-wise/task-level serving mean nothing to the LLM loop: refuse them
        # rather than ignore them (a file asked for with --per-request was never written)
        unused = {"--scheduler": scheduler != "layerweaver", "--scheduler-opt": scheduler_opt,
                  "--preempt": preempt, "--standalone": standalone, "--deadline": deadline,
                  "--priority": priority, "--batching": batching != "none",
                  "--no-traffic": not traffic, "--preempt-at": preempt_at != "layer",
                  "--per-request": per_request,
                  "--qps/--duration with a trace": arrival_spec.startswith("trace:")
                  and (qps is not None or duration is not None)}
        given = [k for k, v in unused.items() if v]
        if given:
            raise ConfigError(f"{', '.join(given)}: not used by LLM serving (it takes "
                              "--llm-scheduler, --prompt-len, --output-len, --slo, --qps, "
                              "--duration and the outputs --json/--csv/--timeline/--trace)")

        src = click.get_current_context().get_parameter_source("duration")
        span = 60.0 if src == click.core.ParameterSource.DEFAULT else parse_duration(duration)
        if arrival_spec.startswith("trace:"):
            llm["trace_file"] = arrival_spec.split(":", 1)[1]
        serve_llm_cli(build_spec(models or "", npu_spec, qps, span, seed_n, llm,
                                 cost_model if is_given("cost_model") else None),
                      json_path, csv_path, timeline, trace)
        return
    from npuweave import report
    from npuweave.cli import _checks
    from npuweave.cli.serve_tasks import check_task_options, task_set
    from npuweave.fileio.flags import parse_arrival_flags, parse_batching
    from npuweave.hardware import get_npu
    from npuweave.metrics.serving import jsonable
    from npuweave.schedule import get_scheduler
    from npuweave.sim.arrival_processes import build_arrivals
    from npuweave.sim.serving import check_work, least_units
    from npuweave.sim.simulate import SimSpec, simulate

    check_task_options(preempt_at, per_request)
    tasks = task_set(arrival_spec, models, qps, deadline, priority, batching)
    model_list = [m.strip() for m in (models or "").split(",") if m.strip()] or (
        list(dict.fromkeys(tasks.labels)) if tasks is not None else [])
    if not model_list:
        raise ConfigError("--models is empty; give e.g. --models resnet50,bert-base")
    parse_int(max_events, "--max-events", low=1, high=10**12)
    opts = _checks.scheduler_options(scheduler_opt)
    if standalone is not None:
        if scheduler != "layerweaver-plus":
            raise ConfigError(f"--standalone applies to --scheduler layerweaver-plus only, "
                              f"not {scheduler!r}; drop it or change the scheduler")
        _checks.owned_option(opts, "standalone", standalone)
        opts["standalone"] = standalone
    from npuweave.schedule.prema.registry import check_priorities, with_preempt
    scheduler, preempt_opts = with_preempt(scheduler, preempt, opts)
    opts = dict(preempt_opts)
    check_priorities(scheduler, priority)
    get_scheduler(scheduler, seed=seed_n, **opts)  # validates the name and options early
    batch = parse_batching(batching)
    flags = parse_arrival_flags(arrival_spec, len(model_list), qps, duration, deadline, priority)
    npu = get_npu(npu_spec)
    notes: list[str] = []
    note = _checks.priority_note(scheduler, priority)
    if note:
        notes.append(note)
    if flags.qps is not None and flags.duration_s is not None:  # before generating them
        check_work(least_units(model_list), sum(flags.qps) * flags.duration_s,
                   batch.max_batch if batch else 1, max_events, bool(timeline or trace))
    if tasks is not None:
        from npuweave.sim.tasksets import serve_tasks

        res = serve_tasks(tasks, scheduler, seed=seed_n, max_events=max_events,
                          log=bool(timeline or trace), **opts)
        arrivals: Any = tasks.arrival_s
        rows = jsonable(res.rows)  # given layer times: no cost model, so no energy
        notes = notes + list(res.notes)
    else:
        arrivals = build_arrivals(flags, model_list, seed_n, notes)
        if len(arrivals) == 0:
            raise ConfigError("no request arrives in this run; raise --qps or --duration")
        from npuweave.cost.energy import energy_spec

        gated = energy_spec(npu)[0].gated_power_w > 0  # gating needs the busy intervals
        bar = _Bar(float(arrivals.time_s[-1]))
        try:
            res = simulate(SimSpec(model_list, npu, arrivals, scheduler, opts, batching=batch,
                                   traffic=traffic, cost_model=cost_model, seed=seed_n,
                                   log=bool(timeline or trace or gated), max_events=max_events,
                                   records=bool(json_path or per_request), progress=bar))
        finally:
            bar.close()
        rows = jsonable(_with_energy(res, model_list, npu, cost_model))
        notes = notes + list(res.notes) + _energy_notes(npu, batch is not None)
    info = {"models": model_list, "npu": npu.name, "arrivals": arrival_spec, "seed": seed_n,
            "scheduler": res.scheduler, "batching": batching, "traffic": traffic,
            "cost_model": cost_model, "span_s": res.span_s, "events": res.events,
            "notes": notes}
    if csv_path == "-":
        click.echo(report.to_csv(rows), nl=False)
    else:
        title = (f"{_names(model_list)} on {npu.name}, {res.scheduler}, "
                 f"{len(arrivals)} requests over {res.span_s:.4g} s")
        from npuweave.cli._console import console

        console().print(report.rich_table(_shown(rows, TABLES[0]), title=title))
        console().print(report.rich_table(_shown(rows, TABLES[1]), title="latency"))
        from npuweave.cli._energy import energy_rows

        with_energy = [r for r in _on_screen(rows) if "energy_j" in r]
        shown = _shown(with_energy, ("energy_j",))
        console().print(report.rich_table(
            energy_rows([{**r, "row": s["row"]} for r, s in zip(
                with_energy, shown, strict=True)], "row"),
            title="energy"))
        hidden = sum(r["scope"] == "model" for r in rows) - SCREEN_MODELS
        for line in notes + ([f"{hidden} more per-model rows are in --json / --csv"]
                             if hidden > 0 else []):
            console().print(f"[yellow]note[/]: {line}")
    written = []
    title = f"{_names(model_list)} on {npu.name}, {res.scheduler}"
    if timeline:
        from npuweave.report.timeline import serve_marks

        report.plot_timeline({res.scheduler: res.intervals}, timeline, title=title,
                             marks={res.scheduler: serve_marks(res.table, res.intervals)})
        written.append(f"timeline: {timeline}")
    if trace:
        from npuweave.experiments.energy import power_track

        extra = (power_track({res.scheduler: res.intervals}, npu, 1, cost_model)
                 if tasks is None else ())
        report.write_trace(trace, {res.scheduler: res.intervals}, extra=extra)
        written.append(f"trace: {trace} (open in ui.perfetto.dev)")
    if json_path:
        report.write_rows_json(json_path, {**info, "rows": rows,
                                           "requests": _rows_of(res.requests),
                                           "segments": _rows_of(res.segments)})
        written.append(f"json: {json_path}")
    if csv_path and csv_path != "-":
        report.write_csv(csv_path, rows)
        written.append(f"csv: {csv_path}")
    if per_request:
        from npuweave.cli.serve_tasks import write_per_request

        write_per_request(per_request, res.requests)
        written.append(f"per-request: {per_request}")
    for line in written:
        click.echo(f"wrote {line}", err=csv_path == "-")


serve = run_config(serve, derived_defaults=("duration", "cost_model"))  # --config run.yaml, --save-config
