"""``npuweave loadgen``: MLPerf LoadGen drives the simulated NPU in (scaled) real time."""

from __future__ import annotations

from typing import Any

import click

from npuweave.cli._console import cost_model_help
from npuweave.errors import ConfigError

EXAMPLE = """\b
Examples (pip install 'npuweave[loadgen]'):
  npuweave loadgen --scenario SingleStream --models resnet50 --npu memory-centric \\
      --min-duration 0.2s --min-queries 64 --out lg-ss
  npuweave loadgen --scenario Server --models resnet50 --qps 300 --target-latency 15ms \\
      --min-duration 0.5s --compare-replay --out lg-server
"""


@click.command("loadgen", epilog=EXAMPLE)
@click.option("--scenario", required=True,
              type=click.Choice(["Server", "SingleStream", "MultiStream", "Offline"]),
              help="LoadGen scenario.")
@click.option("--models", required=True, help="Comma list of zoo names or ONNX paths.")
@click.option("--npu", "npu_spec", default="memory-centric", show_default=True,
              help="NPU preset name or YAML file.")
@click.option("--scheduler", default="layerweaver", show_default=True,
              help="Scheduling policy (see 'npuweave schedulers').")
@click.option("--qps", default=None, help="Server/Offline: queries per second of NPU time.")
@click.option("--target-latency", default=None,
              help="Server: latency bound (NPU time, e.g. 15ms); SingleStream/MultiStream: "
                   "the expected latency LoadGen plans with (default: one query's "
                   "standalone time on the NPU).")
@click.option("--time-scale", type=float, default=10.0, show_default=True,
              help="Real seconds per simulated second.")
@click.option("--mode", default="PerformanceOnly", show_default=True,
              type=click.Choice(["PerformanceOnly", "FindPeakPerformance"]), help="LoadGen mode.")
@click.option("--min-duration", default="1s", show_default=True,
              help="LoadGen's minimum duration, in NPU time.")
@click.option("--min-queries", type=click.IntRange(1, 10_000_000), default=100,
              show_default=True, help="LoadGen's minimum query count.")
@click.option("--mix", default=None, help="Share of samples per model, e.g. 4:1 (default even).")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=0, show_default=True,
              help="LoadGen's schedule, sample-index and QSL seeds.")
@click.option("--cost-model", default="systolic-ws", show_default=True, help=cost_model_help())
@click.option("--compare-replay", is_flag=True,
              help="Server, one model: also replay LoadGen's schedule in virtual time "
                   "(serve --arrivals loadgen-server) and print both.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for LoadGen's logs and npuweave_summary.json.")
def loadgen(scenario: str, models: str, npu_spec: str, scheduler: str, qps: str | None,
            target_latency: str | None, time_scale: float, mode: str, min_duration: str,
            min_queries: int, mix: str | None, seed: int, cost_model: str,
            compare_replay: bool, out_dir: str) -> None:
    """Run MLPerf LoadGen against the simulated NPU.

    LoadGen issues queries in real time; each query's samples are served by npuweave's
    serving engine and completed when real time reaches their simulated finish, scaled by
    --time-scale. Several models share the NPU through LoadGen's query samples (--mix).
    LoadGen writes mlperf_log_summary.txt and mlperf_log_detail.txt to --out; npuweave adds
    npuweave_summary.json (its own metrics of the same run).
    """
    from npuweave.errors import optional_module
    from npuweave.experiments.loadgen import check_spec, compare_with_replay, run_loadgen

    optional_module("mlperf_loadgen", "loadgen")  # before any output: one line on a plain install
    spec = _spec(scenario, models, npu_spec, scheduler, qps, target_latency, time_scale, mode,
                 min_duration, min_queries, mix, seed, cost_model)

    check_spec(spec)
    from npuweave.fileio import check_output_dir

    check_output_dir(out_dir, "--out")
    if compare_replay and (scenario != "Server" or len(spec.models) != 1):
        raise ConfigError("--compare-replay needs --scenario Server and one model")
    console = _console()
    real = spec.min_duration_s * spec.time_scale
    console.print(f"LoadGen {scenario} on {spec.npu.name} under {scheduler}: at least "
                  f"{real:.1f} s of real time ({spec.min_duration_s:g} s of NPU time x "
                  f"{spec.time_scale:g})")
    result = run_loadgen(spec, out_dir)
    data: dict[str, Any] = {"loadgen": {"valid": result.valid, "summary": result.summary,
                                        "latency_npu_s": result.latency_s,
                                        "host_stall_real_s": result.host_stall_s},
                            "npuweave": result.npu_rows, "samples": result.samples}
    _print(result, scenario, spec.time_scale)
    if compare_replay:
        cmp = compare_with_replay(spec, result)
        data["replay"] = {"rows": cmp.rows, "replay_latency_ok": cmp.replay_valid,
                          "loadgen_latency_ok": cmp.loadgen_latency_ok,
                          "queries": cmp.queries_replay}
        from npuweave.report import rich_table

        console.print(rich_table(cmp.rows, title="LoadGen vs virtual-time replay (NPU time)"))
        yes = {True: "met", False: "missed"}
        console.print(f"latency bound (p99 <= {target_latency}): LoadGen "
                      f"{yes[cmp.loadgen_latency_ok]}, replay {yes[cmp.replay_valid]}; "
                      f"LoadGen's result: {'VALID' if cmp.loadgen_valid else 'INVALID'}"
                      + ("" if cmp.loadgen_valid or not cmp.loadgen_latency_ok else
                         " (early stopping: run more queries, --min-queries)"))
    from npuweave.fileio import write_json

    write_json(f"{out_dir}/npuweave_summary.json", _finite(data))
    console.print(f"logs: {out_dir}/mlperf_log_summary.txt, {out_dir}/npuweave_summary.json")


def _spec(scenario: str, models: str, npu_spec: str, scheduler: str, qps: str | None,
          target_latency: str | None, time_scale: float, mode: str, min_duration: str,
          min_queries: int, mix: str | None, seed: int, cost_model: str) -> Any:
    from npuweave.experiments.loadgen import LoadgenSpec
    from npuweave.fileio.values import parse_rate, parse_ratio, parse_time
    from npuweave.hardware import get_npu
    from npuweave.schedule import schedulers

    names = tuple(m.strip() for m in models.split(",") if m.strip())
    if not names:
        raise ConfigError("--models: name at least one model")
    if scheduler not in schedulers("all"):
        raise ConfigError(f"--scheduler {scheduler!r}: unknown; see 'npuweave schedulers'")
    rate = None if qps is None else parse_rate(qps, "--qps", high=1e12)
    lat = parse_time(target_latency, "--target-latency", high=3600.0) if target_latency else None
    weights = parse_ratio(mix, "--mix", len(names)) if mix else ()
    duration = parse_time(min_duration, "--min-duration", high=3600.0)
    return LoadgenSpec(scenario, names, get_npu(npu_spec), scheduler, rate, lat, time_scale,
                       mode, duration, min_queries, seed, weights, cost_model=cost_model)


# LoadGen's headline latency per scenario (its summary's first latency line)
HEADLINE = {"SingleStream": "p90", "MultiStream": "p99", "Server": "p99"}


def _print(result: Any, scenario: str, time_scale: float) -> None:
    from npuweave.report import rich_table

    console = _console()
    verdict = result.summary.get("Result is", "?")
    head = HEADLINE.get(scenario)
    line = f"LoadGen's result: {verdict}, {result.samples} samples"
    if head and head in result.latency_s:
        line += (f"; its {scenario} metric, the {head} latency: "
                 f"{result.latency_s[head] * 1e3:.3f} ms (NPU time)")
    console.print(line)
    for why in result.reasons:
        console.print(f"  why {verdict}: {why}")
    if result.host_stall_s >= 0.01:  # 10 ms of real time: worth a line next to the latencies
        console.print(f"  the host stalled the simulated device for up to "
                      f"{result.host_stall_s * 1e3:.0f} ms of real time (another process, a "
                      "collector pause); LoadGen's latencies include it, the NPU's do not")
    lat = [{"latency": k, "measured_s": v} for k, v in result.latency_s.items()]
    console.print(f"LoadGen's measured latencies: real time / {time_scale:g} = NPU time "
                  "(they include the host's thread wake-up delays)")
    console.print(rich_table(lat))
    if result.npu_rows:
        keep = ("served", "throughput_rps", "antt", "latency_p50_s", "latency_p99_s",
                "pe_util", "dram_util")
        short = {"throughput_rps": "req/s", "latency_p50_s": "sim p50_s",
                 "latency_p99_s": "sim p99_s"}
        rows = [{"row": "all" if r.get("scope") == "all" else f"{r.get('scope')} {r.get('name')}",
                 **{short.get(k, k): r.get(k) for k in keep}} for r in result.npu_rows]
        console.print("npuweave's simulated latencies of the same requests (NPU time, no host "
                      "delays)")
        console.print(rich_table(rows))


def _finite(obj: Any) -> Any:
    import math

    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def _console() -> Any:
    from npuweave.cli._console import console

    return console()
