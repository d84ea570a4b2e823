"""What one sweep point can run: its settings (with defaults and checks) and its run function.

A *kind* is one command's worth of work: ``schedule`` (closed-loop streams under one
scheduler, the row of ``npuweave schedule``) and ``profile`` (one model's per-layer cost
totals). Settings named ``npu.<field>`` override one field of the NPU (``npu.dram_bw:
[100 GB/s, 300 GB/s]`` sweeps bandwidth), so design-space sweeps need no YAML per point.
Running a point is a pure function of its settings and the shared standalone-time table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from npuweave.errors import NpuweaveError
from npuweave.experiments.sweep import checks
from npuweave.experiments.sweep.checks import Checker
from npuweave.experiments.sweep.npus import npu_of

#: (model, npu key, batch, cost model) -> seconds of one request alone (steady state).
StandaloneKey = tuple[str, str, int, str]


































_BOOL_METRICS = {"monotone"}
_INT_METRICS = {"requests_done", "layers", "dram_bytes", "macs", "memory_bound_layers",
                "requests", "served", "killed", "preemptions", "trials"}












@dataclass(frozen=True)
class Kind:
    """A point kind: settings with defaults and checks, the metric columns, the runner."""

    name: str
    defaults: Mapping[str, Any]
    checks: Mapping[str, Checker]
    required: tuple[str, ...]
    metrics: tuple[str, ...]
    run: Callable[[Mapping[str, Any], Mapping[StandaloneKey, float]], dict[str, Any]]
    standalone_keys: Callable[[Mapping[str, Any]], list[StandaloneKey]] = field(
        default=lambda p: [])
    combo: Callable[[Mapping[str, Any]], str | None] = field(default=lambda p: None)

    def metric_types(self) -> list[tuple[str, str]]:
        """``(column, type)`` of each metric: JSON columns are strings, counts integers."""
        return [(m, "string" if m.endswith("_json") else "bool" if m in _BOOL_METRICS else
                 "int64" if m in _INT_METRICS else "float64") for m in self.metrics]

    def normalize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults filled in; model lists as tuples of names."""
        out = {**self.defaults, **params}
        if "models" in out:
            out["models"] = tuple(checks.split_models(out["models"]))
        return out


def _npu_key(params: Mapping[str, Any]) -> str:
    over = sorted((k, v) for k, v in params.items() if k.startswith("npu."))
    return params["npu"] + ("" if not over else repr(over))


def _batches(params: Mapping[str, Any]) -> list[int]:
    b, n = params["batch"], len(params["models"])
    return list(b) if isinstance(b, tuple) else [b] * n


def _schedule_keys(params: Mapping[str, Any]) -> list[StandaloneKey]:
    return [(m, _npu_key(params), b, params["cost_model"])
            for m, b in zip(params["models"], _batches(params))]


def standalone_seconds(key: StandaloneKey, params: Mapping[str, Any]) -> float:
    """Seconds of one request of the key's model alone (computed, not looked up)."""
    from npuweave.sim import standalone_time

    return float(standalone_time(key[0], npu_of(params), key[2], key[3]))


def _run_schedule(params: Mapping[str, Any],
                  standalone: Mapping[StandaloneKey, float]) -> dict[str, Any]:
    from npuweave.experiments.compare import evaluate
    from npuweave.sim import run_streams

    npu = npu_of(params)
    keys = dict(zip(params["models"], _schedule_keys(params)))
    opts = dict(params.get("options") or ())
    result = run_streams(list(params["models"]), npu, batch=_batches(params),
                         scheduler=params["scheduler"], requests=params["requests"],
                         window_s=params["window_s"], seed=params["seed"],
                         cost_model=params["cost_model"], **opts)

    def alone(record: Any) -> float:
        key = keys[record.model]
        return standalone[key] if key in standalone else standalone_seconds(key, params)

    row = evaluate(result, alone)
    tput = row.pop("throughput", {}) or {}
    row.pop("scheduler", None)
    row["throughput_total"] = float(sum(tput.values()))
    row["throughput_json"] = _json({k: float(v) for k, v in tput.items()})
    row["makespan_s"] = float(result.makespan_s)
    row["requests_done"] = len(result.requests)
    from npuweave.experiments.energy import result_energy

    energy = result_energy(result, npu, params["cost_model"])
    row.update({k: energy[k] for k in _ENERGY_METRICS})
    return row


def _json(obj: Any) -> str:
    """A compact strict-JSON cell (keys sorted)."""
    from npuweave.fileio import json_text

    return json_text(obj, indent=None, sort_keys=True).rstrip("\n")


def _run_profile(params: Mapping[str, Any],
                 standalone: Mapping[StandaloneKey, float]) -> dict[str, Any]:
    from npuweave.workload import load_layers

    if len(params["models"]) != 1:
        raise NpuweaveError("a 'profile' point takes one model in 'models'")
    from npuweave.cost import profile_model

    prof = profile_model(load_layers(params["models"][0]), npu_of(params), batch=params["batch"],
                         cost_model=params["cost_model"])
    costs = prof.costs
    total = sum(costs[1:], costs[0])
    return {"layers": len(costs), "compute_s": total.compute_s, "memory_s": total.memory_s,
            "dram_bytes": int(total.dram_bytes), "macs": int(total.macs),
            "memory_bound_layers": sum(1 for c in costs if c.memory_s > c.compute_s),
            "energy_j": prof.energy_summary()["total_j"]}


def _serve_arrivals_of(params: Mapping[str, Any]) -> Any:
    from npuweave.fileio.flags import parse_arrival_flags
    from npuweave.sim.arrival_processes import build_arrivals

    def text(key: str) -> str | None:
        return None if params[key] is None else checks.text_list(params[key])

    models = list(params["models"])
    flags = parse_arrival_flags(params["arrivals"], len(models), text("qps"),
                                str(params["duration"]), text("deadline"), text("priority"))
    return build_arrivals(flags, models, params["seed"])


def _run_serve(params: Mapping[str, Any],
               standalone: Mapping[StandaloneKey, float]) -> dict[str, Any]:
    from npuweave.cost.energy import energy_spec
    from npuweave.fileio import flags as o
    from npuweave.sim.serving import serve

    npu = npu_of(params)
    result = serve(list(params["models"]), npu, _serve_arrivals_of(params),
                   params["scheduler"], batching=o.parse_batching(str(params["batching"])),
                   cost_model=params["cost_model"], seed=params["seed"],
                   log=energy_spec(npu)[0].gated_power_w > 0,  # gating needs the timeline
                   **dict(params.get("options") or ()))
    rows = {r["name"]: r for r in result.rows if r.get("scope") in ("all", "model")}
    top = rows.get("all", {})
    out = {m: top.get(m) for m in _SERVE_FROM_SUMMARY}
    out["per_model_json"] = _json(
        {name: {k: r.get(k) for k in ("served", "throughput_rps", "antt", "latency_p99_s",
                                      "deadline_violation")}
         for name, r in rows.items() if name != "all"})
    out["span_s"] = result.span_s
    from npuweave.experiments.energy import serve_energy

    energy = serve_energy(list(params["models"]), result.table, result.span_s, npu,
                          params["cost_model"], result.intervals)[0]
    out.update({k: energy[k] for k in _ENERGY_METRICS})
    return out


#: energy columns of schedule and serve points (``npuweave.metrics.energy``)
_ENERGY_METRICS = ("energy_j", "energy_per_inference_j", "avg_power_w", "edp_js")
_SERVE_FROM_SUMMARY = ("requests", "served", "killed", "throughput_rps", "stp_open_loop",
                       "stp_task_set", "antt", "fairness", "sla_violation_x2",
                       "sla_violation_x5", "sla_violation_x10", "deadline_violation",
                       "latency_p50_s", "latency_p99_s", "latency_max_s", "pe_util",
                       "dram_util", "preemptions", "preempt_overhead_s", "wasted_s")


def _serve_combo(params: Mapping[str, Any]) -> str | None:
    """Per-model lists must have one entry per model; the policy and its options must exist;
    the point's load must fit the event and memory limits (all checked before any point)."""
    n = len(checks.split_models(params.get("models", "")))
    for key in ("qps", "deadline", "priority"):
        v = params.get(key)
        if v is not None and n and len(checks.text_list(v).split(",")) != n:
            return (f"setting {key!r}: {len(checks.text_list(v).split(','))} values for {n} models; "
                    "give one per model")
    try:
        checks.serve_point(KINDS["serve"].normalize(params), n)
    except NpuweaveError as exc:
        return str(exc)
    return None


def _schedule_combo(params: Mapping[str, Any]) -> str | None:
    try:
        checks.policy(KINDS["schedule"].normalize(params))
    except NpuweaveError as exc:
        return str(exc)
    return None


def _run_capacity(params: Mapping[str, Any],
                  standalone: Mapping[StandaloneKey, float]) -> dict[str, Any]:
    from npuweave.experiments.lwplus import ServeSetup, capacity_row, parse_ratio
    from npuweave.fileio.flags import parse_deadlines

    models = tuple(params["models"])
    if len(models) != 2:
        raise NpuweaveError("a 'capacity' point takes two models (vision, NLP) in 'models'")
    setup = ServeSetup(npu=params["npu"], max_batch=params["max_batch"],
                       requests=params["requests"], seeds=(params["seed"],),
                       budget=params["violations"], cost_model=params["cost_model"])
    row = capacity_row((models[0], models[1]), parse_ratio(str(params["ratio"]), "ratio"),
                       parse_deadlines(checks.text_list(params["deadline"]), 2),  # type: ignore[arg-type]
                       params["scheduler"], setup)
    return {k: row.get(k) for k in _CAPACITY_METRICS}


_CAPACITY_METRICS = ("qps", "qps_a", "qps_b", "stp", "miss_rate", "miss_ci_low", "miss_ci_high",
                     "first_crossing_qps", "monotone", "trials", "window_s", "time_s")








_COMMON_CHECKS: dict[str, Checker] = {
    "models": checks.models, "npu": checks.npu, "batch": checks.int_at_least(1, 1 << 16),
    "cost_model": checks.one_of(checks.cost_models, "cost model"),
}

KINDS: dict[str, Kind] = {
    "schedule": Kind(
        "schedule",
        defaults={"npu": "memory-centric", "batch": 1, "scheduler": "layerweaver",
                  "requests": 10, "window_s": None, "seed": 0, "cost_model": "systolic-ws",
                  "options": ()},
        checks={**_COMMON_CHECKS, "scheduler": checks.one_of(checks.schedulers, "scheduler"),
                "requests": checks.int_at_least(1, 1_000_000), "window_s": checks.optional_seconds,
                "seed": checks.int_at_least(0, 2**63 - 1), "options": checks.mapping},
        required=("models",),
        metrics=("stp", "antt", "fairness", "pe_utilization", "dram_utilization",
                 "makespan_ratio", "throughput_total", "throughput_json", "makespan_s",
                 "requests_done", *_ENERGY_METRICS),
        run=_run_schedule, standalone_keys=_schedule_keys, combo=_schedule_combo),
    "profile": Kind(
        "profile",
        defaults={"npu": "memory-centric", "batch": 1, "cost_model": "systolic-ws"},
        checks=_COMMON_CHECKS, required=("models",),
        metrics=("layers", "compute_s", "memory_s", "dram_bytes", "macs",
                 "memory_bound_layers", "energy_j"),
        run=_run_profile),
    "serve": Kind(
        "serve",
        defaults={"npu": "memory-centric", "scheduler": "layerweaver", "arrivals": "poisson",
                  "duration": "1s", "deadline": None, "priority": None, "batching": "none",
                  "seed": 0, "cost_model": "systolic-ws", "options": ()},
        checks={**{k: v for k, v in _COMMON_CHECKS.items() if k != "batch"},
                "scheduler": checks.one_of(checks.all_schedulers, "scheduler"),
                "arrivals": checks.serve_arrivals, "qps": checks.parsed(checks.qps_item),
                "duration": checks.option(checks.duration), "deadline": checks.parsed(checks.deadline_item),
                "priority": checks.parsed(checks.priority_item), "batching": checks.option(checks.batching),
                "seed": checks.int_at_least(0, 2**63 - 1), "options": checks.mapping},
        required=("models", "qps"),
        metrics=(*_SERVE_FROM_SUMMARY, "per_model_json", "span_s", *_ENERGY_METRICS),
        run=_run_serve, combo=_serve_combo),
    "capacity": Kind(
        "capacity",
        defaults={"npu": "lwplus", "scheduler": "lwplus-approx", "ratio": "1:1",
                  "deadline": "15ms,130ms", "violations": 0.01, "max_batch": 16,
                  "requests": 4000, "seed": 0, "cost_model": "systolic-ws"},
        checks={**{k: v for k, v in _COMMON_CHECKS.items() if k != "batch"},
                "scheduler": checks.one_of(checks.capacity_schedulers, "capacity scheduler"),
                "ratio": checks.ratio, "deadline": checks.parsed(checks.deadline_item), "violations": checks.fraction,
                "max_batch": checks.int_at_least(1, 256), "requests": checks.int_at_least(100, 10**7),
                "seed": checks.int_at_least(0, 2**63 - 1)},
        required=("models",),
        metrics=_CAPACITY_METRICS,
        run=_run_capacity),
}


# LLM serving's kind lives in its own module
from npuweave.experiments.sweep import llm_kind as _llm  # noqa: E402

KINDS["llm-serve"] = Kind("llm-serve", defaults=_llm.DEFAULTS, checks=_llm.CHECKS,
                          required=("model", "qps"), metrics=_llm.METRICS, run=_llm.run_llm_serve)
_INT_METRICS |= _llm.INT_METRICS


@cache
def _check_value(kind: str, key: str, value: Any) -> str | None:
    rules = KINDS[kind].checks
    if key.startswith("npu."):
        from npuweave.hardware.npu import NPU

        fields = NPU.__dataclass_fields__
        if key[4:].split(".")[0] not in fields or key[4:] == "name":  # npu.energy.<field> too
            return f"unknown NPU field {key[4:]!r}{checks.close(key[4:], list(fields))}"
        if key.startswith("npu.energy") and "energy_j" not in KINDS[kind].metrics:
            return (f"kind {kind!r} reports no energy, so {key} would change nothing; drop it "
                    "(energy is in kinds profile, serve and schedule)")
        return checks.npu_field_problem(key[4:], value)
    if key not in rules:
        valid = sorted(rules)
        return f"unknown setting {key!r}{checks.close(key, valid)} for kind {kind!r} (valid: " \
               f"{', '.join(valid)}, npu.<field>)"
    if key == "batch" and isinstance(value, list | tuple):
        bad = [m for v in value if (m := rules[key](v))]
        return bad[0] if bad else None
    return rules[key](value)


def check_params(kind: str, params: Mapping[str, Any], where: str, problems: list[str],
                 required: bool = True) -> None:
    """Append one message per bad setting (and, with ``required``, per missing one)."""
    for key in KINDS[kind].required if required else ():
        if key not in params:
            problems.append(f"{where}: missing setting {key!r}")
    for key, value in params.items():
        try:
            msg = _check_value(kind, str(key), checks.hashable(value))
        except TypeError:
            msg = f"cannot use {value!r}"
        if msg:
            problems.append(f"{where}: setting {key!r}: {msg}")
    b, models = params.get("batch"), checks.split_models(params.get("models", ""))
    if isinstance(b, list) and len(b) != len(models):
        problems.append(f"{where}: 'batch' lists {len(b)} sizes for {len(models)} models")


