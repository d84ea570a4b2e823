"""LLM serving on the command line: the option text parsers and the LLM branches of
``models --family llm``, ``profile <llm>:phase=...``, ``serve --llm-scheduler`` and
``capacity --llm-scheduler``. The existing commands call in here, so their own modules carry
only a few lines for LLMs."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from npuweave.errors import ConfigError

LLM_OPTIONS = (
    click.option("--llm-scheduler", default=None,
                 help="LLM batching: orca | vllm | sarathi:chunk=N | layerweaver | disagg:P+D "
                      "(LLM models only)."),
    click.option("--prompt-len", default="lognormal:mean=512,sigma=1", show_default=True,
                 help="LLM prompt tokens: fixed:N | uniform:lo=A,hi=B | lognormal:mean=M,sigma=S."),
    click.option("--output-len", default="lognormal:mean=256,sigma=1", show_default=True,
                 help="LLM output tokens (same forms as --prompt-len)."),
    click.option("--slo", default=None,
                 help="LLM SLOs, e.g. ttft=1s,tbt=100ms; add :pNN to check a percentile."),
    click.option("--kv-preempt", default="recompute", show_default=True,
                 type=click.Choice(["recompute", "swap"]), help="LLM KV preemption."),
    click.option("--max-tokens", default=4096, show_default=True, type=int,
                 help="LLM: most prompt tokens in one orca/vllm/layerweaver/disagg prefill "
                      "batch."),
)


def llm_options(fn: Any) -> Any:
    """Add the LLM options to a command (``serve``, ``capacity``)."""
    for opt in reversed(LLM_OPTIONS):
        fn = opt(fn)
    return fn


def llm_capacity_options(fn: Any) -> Any:
    """The LLM options plus each probe's length and the first load tried (``capacity``)."""
    fn = click.option("--probe-duration", default="60s", show_default=True,
                      help="LLM: simulated time of each capacity probe.")(fn)
    fn = click.option("--start-qps", default="1", show_default=True,
                      help="LLM: the first load tried (doubled or halved from there).")(fn)
    return llm_options(fn)


def is_given(name: str) -> bool:
    """Whether the running command's option ``name`` was given (command line, environment or
    run config), not left at its default."""
    source = click.get_current_context().get_parameter_source(name)
    return source not in (None, click.core.ParameterSource.DEFAULT)


def llm_capacity(models: str, npu_spec: str, opts: dict[str, Any], json_path: str | None,
                 cost_model: str) -> None:
    """``capacity`` for an LLM: refuse the layer-wise options it would ignore (``--csv`` was
    never written), validate everything, then search (see ``capacity_cli``)."""
    from npuweave.fileio.flags import parse_duration

    ctx = click.get_current_context()
    takes = {"models", "npu_spec", "json_path", "cost_model", *opts}
    unused = [p.opts[0] for p in ctx.command.params
              if isinstance(p, click.Option) and p.name not in takes and is_given(str(p.name))]
    if unused:
        raise ConfigError(f"{', '.join(unused)}: not used by an LLM capacity search (it takes "
                          "--npu, --cost-model, --llm-scheduler, --slo, --prompt-len, "
                          "--output-len, --kv-preempt, --max-tokens, --probe-duration, "
                          "--start-qps and --json)")
    span = parse_duration(opts["probe_duration"])
    spec = build_spec(models, npu_spec, opts["start_qps"], span, 0, opts,
                      cost_model if is_given("cost_model") else None, need_pct=True)
    capacity_cli(spec, json_path)


def check_phase_fits(model: str, npu: Any, title: str) -> str | None:
    """``profile`` of an LLM phase: a batch whose weights and KV cache cannot fit the NPU's
    DRAM is refused, as ``serve`` refuses a request that cannot fit; an NPU without a DRAM
    size gets a note instead (the profile itself does not need one)."""
    from npuweave.sim.llm.serve import check_kv_fits
    from npuweave.workload import parse_model_spec
    from npuweave.workload.llm import get_llm, llm_bits, phase_spec

    name, params = parse_model_spec(model)
    if npu.global_mem_bytes <= 0:
        return (f"NPU {npu.name!r} gives no DRAM size (global_mem_bytes), so whether {name}'s "
                "weights and KV cache fit was not checked")
    cfg = get_llm(name)
    wbits, kbits = llm_bits(params.get("weights"), params.get("kv"), npu.precision_bits)
    check_kv_fits(cfg, npu, wbits, kbits, [new + past for new, past in phase_spec(params, cfg)],
                  title)
    return None


def is_llm(models: str) -> bool:
    """Whether ``--models`` names a built-in LLM config (alone or in a list, which
    ``llm_branch`` then refuses)."""
    from npuweave.workload.llm import CONFIGS

    return any(m.split(":")[0].strip() in CONFIGS for m in models.split(","))


def llm_branch(models: str | None, opts: dict[str, Any], arrivals: str = "poisson") -> bool:
    """Whether a serve/capacity call is an LLM run; LLM options on other models are refused."""
    if models and is_llm(models):
        if "," in models:
            raise ConfigError(f"--models {models[:80]!r}: serve one LLM at a time, alone (LLMs "
                              "are not served beside other models)")
        if arrivals != "poisson" and not arrivals.startswith("trace:"):
            raise ConfigError(f"--arrivals {arrivals!r}: LLM serving takes poisson or "
                              f"trace:FILE (CSV: time_s,prompt,output)")
        return True
    if opts.get("llm_scheduler") or opts.get("slo"):
        raise ConfigError(f"--llm-scheduler/--slo need an LLM in --models, got {models!r}; "
                          f"see 'npuweave models --family llm'")
    # any other LLM option changed from its default would be silently ignored
    given = [f"--{p.name.replace('_', '-')}" for p in click.get_current_context().command.params
             if p.name in opts and p.name not in ("probe_duration", "start_qps")
             and opts[p.name] not in (None, p.default)]
    if given:
        raise ConfigError(f"{', '.join(given)}: LLM options; they need an LLM in --models, "
                          f"got {models!r} (see 'npuweave models --family llm')")
    return False


def read_llm_trace(path: str) -> tuple[tuple[float, int, int], ...]:
    """An LLM request trace: CSV with a header naming ``time_s``, ``prompt``, ``output``.

    Examples
    --------
    >>> read_llm_trace("requests.csv")  # doctest: +SKIP
    ((0.0, 512, 128), (0.25, 64, 32))
    """
    import csv
    import io

    from npuweave.fileio import read_user_text

    rows = list(csv.reader(io.StringIO(read_user_text(path, "LLM request trace"))))
    if not rows:
        raise ConfigError(f"{path}: empty trace; write a header time_s,prompt,output and rows")
    head = [h.strip() for h in rows[0]]
    try:
        cols = [head.index(k) for k in ("time_s", "prompt", "output")]
    except ValueError:
        raise ConfigError(f"{path}: header {head}; it must name time_s, prompt and "
                          f"output") from None
    out = []
    for n, row in enumerate(rows[1:], start=2):
        try:
            out.append((float(row[cols[0]]), int(row[cols[1]]), int(row[cols[2]])))
        except (ValueError, IndexError):
            raise ConfigError(f"{path}: line {n}: {row}; need a time in seconds and two "
                              f"integer lengths") from None
    if not out:
        raise ConfigError(f"{path}: no request rows after the header")
    return tuple(out)


def build_spec(models: str, npu_spec: str, qps: str | None, duration: float, seed: int | str,
               opts: dict[str, Any], cost_model: str | None, need_pct: bool = False) -> Any:
    """An ``LLMServeSpec`` from the shared serve/capacity options (validated, no work done)."""
    from npuweave.sim.llm.costs import DEFAULT_COST_MODEL
    from npuweave.sim.llm.options import parse_lengths, parse_slo
    from npuweave.sim.llm.serve import LLMServeSpec, check_spec
    from npuweave.workload import parse_model_spec

    name, params = parse_model_spec(models.strip())
    extra = set(params) - {"weights", "kv"}
    if extra:
        raise ConfigError(f"--models {models!r}: unknown parameter(s) {sorted(extra)}; an LLM "
                          f"takes :weights=FORMAT and :kv=FORMAT")
    try:
        rate = float(qps) if qps is not None else 1.0
    except ValueError:
        raise ConfigError(f"--qps: {qps!r} is not a number") from None
    try:
        seed = int(seed)
    except ValueError:
        raise ConfigError(f"--seed: {seed!r} is not an integer") from None
    spec = LLMServeSpec(
        model=name, npu=npu_spec, qps=rate, duration_s=duration,
        prompt=parse_lengths(opts["prompt_len"], "--prompt-len"),
        output=parse_lengths(opts["output_len"], "--output-len"),
        scheduler=opts.get("llm_scheduler") or "sarathi:chunk=512", seed=seed,
        preempt=opts["kv_preempt"], cost_model=cost_model or DEFAULT_COST_MODEL,
        max_tokens=opts["max_tokens"],
        weights=params.get("weights"), kv=params.get("kv"),  # type: ignore[arg-type]
        slo=parse_slo(opts.get("slo"), need_pct),
        requests=read_llm_trace(opts["trace_file"]) if opts.get("trace_file") else None)
    check_spec(spec)
    return spec


def serve_llm_cli(spec: Any, json_path: str | None, csv_path: str | None,
                  timeline: str | None = None, trace: str | None = None) -> None:
    """Run one LLM serving spec; print the summary, write ``--json``/``--csv`` rows and the
    ``--timeline``/``--trace`` of its iterations (phases as tenants)."""
    from npuweave import report
    from npuweave.cli._console import console
    from npuweave.sim.llm import serve_llm

    res = serve_llm(dataclasses.replace(spec, log=bool(timeline or trace)))
    row = res.row
    load = ("from a trace" if spec.requests is not None
            else f"at {spec.qps:g}/s over {spec.duration_s:g} s")
    title = f"{row['model']} on {spec.npu}, {row['scheduler']}, {row['requests']} requests {load}"
    if csv_path == "-":
        click.echo(report.to_csv([row]), nl=False)
    else:
        keys = ("ttft_p50_s", "ttft_p99_s", "tbt_p50_s", "tbt_p99_s", "e2e_p99_s",
                "tokens_per_s", "goodput_rps", "preemptions", "kv_peak")
        console().print(report.rich_table([{k: row[k] for k in ("scheduler", *keys)}],
                                          title=title, fmt=_fmt))
        util = [{"phase": p, "PE": row[f"{p}_pe_util"], "DRAM": row[f"{p}_dram_util"]}
                for p in ("prefill", "decode", "mixed")]
        console().print(report.rich_table(util, title="utilization per phase",
                                          fmt=_pct_fmt))
        for note in res.notes:
            console().print(f"[yellow]note[/]: {note}")
    if json_path:
        kv = {"t_s": res.trace.kv_t[::max(1, len(res.trace.kv_t) // 1000)],
              "blocks": res.trace.kv_blocks[::max(1, len(res.trace.kv_t) // 1000)],
              "total_blocks": res.kv_total_blocks}
        report.write_rows_json(json_path, {"rows": [row], "requests": res.request_rows(),
                                           "kv_occupancy": kv, "notes": res.notes})
        click.echo(f"wrote json: {json_path}", err=csv_path == "-")
    if csv_path and csv_path != "-":
        report.write_csv(csv_path, [row])
        click.echo(f"wrote csv: {csv_path}")
    if timeline:
        report.plot_timeline({row["scheduler"]: res.intervals()}, timeline, title=title)
        click.echo(f"wrote timeline: {timeline}", err=csv_path == "-")
    if trace:
        report.write_trace(trace, {row["scheduler"]: res.intervals()})
        click.echo(f"wrote trace: {trace} (open in ui.perfetto.dev)", err=csv_path == "-")


def _fmt(key: str, value: Any) -> str:
    if key.endswith("_s") and not key.endswith("per_s") and isinstance(value, float):
        return f"{1e3 * value:.1f} ms"
    if key == "kv_peak" and isinstance(value, float):
        return f"{100 * value:.1f}%"
    return "-" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def _pct_fmt(key: str, value: Any) -> str:
    return "-" if value is None else (f"{100 * value:.1f}%" if isinstance(value, float)
                                      else str(value))


def capacity_cli(spec: Any, json_path: str | None) -> None:
    """``capacity --llm-scheduler``: the search for the largest load whose percentiles meet
    ``--slo``, one row per probe (rates defined in ``npuweave.metrics.llm``)."""
    from npuweave import report
    from npuweave.cli._console import console
    from npuweave.experiments.llm_capacity import capacity_llm

    out = capacity_llm(spec)
    keys = ("qps", "offered_rps", "meets_slo", "ttft_p99_s", "tbt_p99_s", "slo_attainment",
            "goodput_rps", "span_s")
    rows = [{k: p[k] for k in keys} for p in out["probes"]]
    console().print(report.rich_table(rows, title=f"{spec.model}, {spec.scheduler}: probes"))
    console().print("qps: the Poisson rate tried; offered_rps: (N - 1) / last arrival; a probe "
                    "passes on its percentiles alone; goodput_rps: requests meeting --slo per "
                    "second of span_s (0 to the last token, the drain included)")
    console().print(f"capacity: {out['capacity_qps']:.4g} requests/s {out['note']}")
    if json_path:
        report.write_rows_json(json_path, out)
        click.echo(f"wrote json: {json_path}")


def models_table() -> Any:
    """``models --family llm``: the LLM configs with sizes and KV bytes per token."""
    from rich.table import Table

    from npuweave.workload.llm import CONFIGS

    table = Table(title="npuweave LLM configs (decoder-only)")
    for col in ("model", "layers", "hidden", "heads", "KV heads", "FFN", "vocab", "max ctx",
                "params (B)", "weights GiB@16b", "KV KiB/token@16b"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for c in CONFIGS.values():
        table.add_row(c.name, str(c.layers), str(c.hidden), str(c.heads), str(c.kv_heads),
                      str(c.ffn), str(c.vocab), str(c.max_context),
                      f"{c.weight_elems / 1e9:.2f}", f"{c.weight_bytes(16) / 2**30:.2f}",
                      f"{c.kv_bytes_per_token(16) / 2**10:g}")
    return table


@click.command("sarathi", epilog="""\b
Example:
  npuweave reproduce sarathi --duration 60s
""")
@click.option("--duration", default="60s", show_default=True,
              help="Simulated time of each capacity probe.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write JSON.")
def reproduce_sarathi_cmd(duration: str, seed: int, json_path: str | None) -> None:
    """Sarathi-Serve's capacity gain over vLLM (Mistral-7B, A100-like NPU), ours beside theirs.

    Assumptions: docs/LLM_SERVING.md, "Sarathi-Serve reproduction".
    """
    from npuweave import report
    from npuweave.cli._console import console
    from npuweave.experiments.llm_repro import START_QPS, reproduce_sarathi
    from npuweave.fileio import check_output_path
    from npuweave.fileio.flags import parse_duration
    from npuweave.fileio.values import parse_seed

    check_output_path(json_path, "--json")
    span, seed = parse_duration(duration), parse_seed(seed)
    if START_QPS * span < 1:
        raise ConfigError(f"--duration {duration}: a probe at the first load ({START_QPS:g}/s) "
                          f"would expect {START_QPS * span:.3g} requests; give at least "
                          f"{1 / START_QPS:g}s")
    rows = reproduce_sarathi(span, seed)
    console().print(report.rich_table(rows, title="Sarathi-Serve: capacity under P99 TBT "
                                                  "<= 100 ms, Mistral-7B, a100-like"))
    if json_path:
        report.write_rows_json(json_path, rows)
        click.echo(f"wrote json: {json_path}")
