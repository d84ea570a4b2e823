"""The ``llm-serve`` sweep kind: one LLM serving run per point (the row of ``npuweave serve``
for an LLM), so loads, schedulers, chunk sizes and NPU fields sweep like any other run.

Settings: ``model`` (required: an LLM config, ``:weights=``/``:kv=`` allowed), ``qps``
(required), ``npu`` (tpuv5e-like), ``scheduler`` (sarathi:chunk=512), ``duration`` (60s),
``prompt_len`` / ``output_len`` (``lognormal:mean=512,sigma=1`` / ``mean=256``), ``slo``
(none), ``kv_preempt`` (recompute), ``max_tokens`` (4096), ``seed``, ``cost_model``
(systolic-ws-db), ``npu.<field>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from npuweave.errors import NpuweaveError
from npuweave.experiments.sweep import checks

METRICS = ("requests", "ttft_p50_s", "ttft_p99_s", "tbt_p50_s", "tbt_p99_s", "e2e_p99_s",
           "tokens_per_s", "throughput_rps", "goodput_rps", "slo_attainment", "iterations",
           "preemptions", "kv_peak", "prefill_pe_util", "decode_dram_util", "mixed_pe_util")
INT_METRICS = {"iterations"}


def _checking(fn: Callable[[Any], Any]) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        try:
            fn(v)
        except NpuweaveError as exc:
            return str(exc)
        except (TypeError, ValueError):
            return f"cannot use {v!r}"
        return None
    return check


def _model(v: Any) -> None:
    from npuweave.workload import parse_model_spec
    from npuweave.workload.llm import get_llm

    get_llm(parse_model_spec(str(v))[0])


def _scheduler(v: Any) -> None:
    from npuweave.sim.llm.policies import parse_llm_scheduler

    parse_llm_scheduler(str(v))


def _lengths(v: Any) -> None:
    from npuweave.sim.llm.options import parse_lengths

    parse_lengths(str(v), "length")


def _slo(v: Any) -> None:
    from npuweave.sim.llm.options import parse_slo

    if v is not None:
        parse_slo(str(v))


def _qps(v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < 1e9:
        raise NpuweaveError(f"must be a number of requests/s > 0, got {v!r}")


def _preempt(v: Any) -> None:
    if v not in ("recompute", "swap"):
        raise NpuweaveError(f"must be recompute or swap, got {v!r}")


CHECKS: dict[str, Callable[[Any], str | None]] = {
    "model": _checking(_model), "qps": _checking(_qps), "npu": checks.npu,
    "scheduler": _checking(_scheduler), "duration": checks.option(checks.duration),
    "prompt_len": _checking(_lengths), "output_len": _checking(_lengths), "slo": _checking(_slo),
    "kv_preempt": _checking(_preempt), "max_tokens": checks.int_at_least(1, 1 << 20),
    "seed": checks.int_at_least(0, 2**63 - 1),
    "cost_model": checks.one_of(checks.cost_models, "cost model"),
}
DEFAULTS: dict[str, Any] = {
    "npu": "tpuv5e-like", "scheduler": "sarathi:chunk=512", "duration": "60s",
    "prompt_len": "lognormal:mean=512,sigma=1", "output_len": "lognormal:mean=256,sigma=1",
    "slo": None, "kv_preempt": "recompute", "max_tokens": 4096, "seed": 0,
    "cost_model": "systolic-ws-db"}


def run_llm_serve(params: Mapping[str, Any], standalone: Mapping[Any, float]) -> dict[str, Any]:
    """One point: ``serve_llm`` on the point's settings; the summary row's metrics."""
    from npuweave.experiments.sweep.npus import npu_of
    from npuweave.fileio.flags import parse_duration
    from npuweave.sim.llm.options import parse_lengths, parse_slo
    from npuweave.sim.llm.serve import LLMServeSpec, serve_llm
    from npuweave.workload import parse_model_spec

    name, extra = parse_model_spec(str(params["model"]))
    spec = LLMServeSpec(
        model=name, npu=npu_of(params), qps=float(params["qps"]),
        duration_s=parse_duration(str(params["duration"])),
        prompt=parse_lengths(str(params["prompt_len"]), "prompt_len"),
        output=parse_lengths(str(params["output_len"]), "output_len"),
        scheduler=str(params["scheduler"]), seed=int(params["seed"]),
        preempt=str(params["kv_preempt"]), max_tokens=int(params["max_tokens"]),
        cost_model=str(params["cost_model"]), weights=extra.get("weights"),  # type: ignore[arg-type]
        kv=extra.get("kv"), slo=parse_slo(params["slo"]))  # type: ignore[arg-type]
    row = serve_llm(spec).row
    return {m: row.get(m) for m in METRICS}
