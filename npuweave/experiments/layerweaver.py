"""Reproduction of the Layerweaver evaluation (thesis chapter IV.5, Figures IV.10-IV.12).

Sixteen pairs, one compute-intensive model {IC, MN, RN, RX} with one memory-intensive model
{BB, BL, NCF, XL}, run as two closed-loop streams in two scenarios: single-batch streams on
the memory-centric NPU and batch-16 streams on the compute-centric NPU. Every scheduler runs
every pair; each run yields STP, ANTT, fairness, PE/DRAM utilization (``compare.evaluate``).
``headline`` condenses the rows into the averages the thesis quotes, beside ``THESIS``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from npuweave.cost import LayerCost
from npuweave.errors import ConfigError, unknown_name
from npuweave.experiments.compare import evaluate, resolve_schedulers, standalone_lookup
from npuweave.report.tables import Rows

COMPUTE_MODELS = {"IC": "inceptionv3", "MN": "mobilenetv2", "RN": "resnet50", "RX": "resnext50"}
MEMORY_MODELS = {"BB": "bert-base", "BL": "bert-large", "NCF": "ncf", "XL": "xlnet"}
#: The models a ``seq_len`` applies to (tokens per request).
TRANSFORMERS = ("BB", "BL", "XL")
ABBREVIATIONS = {**COMPUTE_MODELS, **MEMORY_MODELS}
#: The thesis's three baselines (IV.5.B); they all score STP 1 on a pair of streams.
BASELINES = ("compute-only", "memory-only", "fair")
SCHEDULERS = ("sequential", *BASELINES, "aimt", "layerweaver")
METRICS = ("stp", "antt", "fairness", "pe_utilization", "dram_utilization", "makespan_ratio")


@dataclass(frozen=True, slots=True)
class Scenario:
    """One evaluation setting: an NPU preset and the batch size of every stream."""

    name: str
    npu: str
    batch: int


SCENARIOS = {
    "single-batch": Scenario("single-batch", "memory-centric", 1),
    "multi-batch": Scenario("multi-batch", "compute-centric", 16),
}

#: What the thesis reports (IV.5.C), by scenario.
THESIS = {
    "single-batch": {"stp_gain_vs_baselines": 0.601, "stp_gain_vs_aimt": 0.216,
                     "pe_utilization": 0.997, "dram_utilization": 0.913, "antt": 1.27,
                     "antt_aimt": 1.55},
    "multi-batch": {"stp_gain_vs_baselines": 0.539, "stp_gain_vs_aimt": 0.163,
                    "pe_utilization": 0.999, "dram_utilization": 0.707, "antt": 1.36,
                    "antt_aimt": 1.58},
}


def all_pairs() -> list[tuple[str, str]]:
    """The 16 (compute, memory) abbreviation pairs, IC+BB first."""
    return [(c, m) for c in COMPUTE_MODELS for m in MEMORY_MODELS]


def parse_pairs(spec: str | Iterable[str] | None) -> list[tuple[str, str]]:
    """``None``/``"all"``, or pairs like ``"RN+BB,IC+XL"`` -> ``[("RN", "BB"), ...]``."""
    if spec is None or spec == "all":
        return all_pairs()
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    pairs = []
    for item in (i.strip() for i in items if i.strip()):
        parts = [p.strip().upper() for p in item.split("+")]
        if len(parts) != 2:
            raise ConfigError(f"pair {item!r} must look like RN+BB (two models joined by '+')")
        for p in parts:
            if p not in ABBREVIATIONS:
                raise unknown_name("model abbreviation", p, list(ABBREVIATIONS))
        pairs.append((parts[0], parts[1]))
    if not pairs:
        raise ConfigError("no pair given; use e.g. --pairs RN+BB,IC+XL")
    return pairs


def check_config(cost_model: str, seq_len: int | None) -> None:
    """Reject an unknown cost model (the registry's error) or a ``seq_len`` below 1."""
    from npuweave.cost import get_cost_model

    get_cost_model(cost_model)
    if seq_len is not None and (isinstance(seq_len, bool) or not isinstance(seq_len, int)
                                or seq_len < 1):
        raise ConfigError(f"seq_len (--seq-len) must be an integer >= 1, got {seq_len!r}; "
                          "use e.g. 32, or leave it out for the zoo's default")


def check_options(pairs: str | Iterable[str] | None, scenarios: Sequence[str],
                  schedulers: Sequence[str], requests: int, cost_model: str = "systolic-ws",
                  seq_len: int | None = None) -> tuple[list[tuple[str, str]], list[str]]:
    """Validate a reproduction's options before any run; return ``(pairs, scheduler names)``.

    The CLI calls this first so that a bad option fails with one line and nothing else printed.

    Examples
    --------
    >>> check_options("RN+BB", ["single-batch"], ["layerweaver"], 2)
    ([('RN', 'BB')], ['layerweaver'])
    """
    if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
        raise ConfigError(f"requests (--requests) must be an integer >= 1, got {requests!r}")
    check_config(cost_model, seq_len)
    chosen = parse_pairs(pairs)
    names = resolve_schedulers(list(schedulers))
    if not scenarios:
        raise ConfigError("no scenario given; choose from: " + ", ".join(SCENARIOS))
    for s in scenarios:
        if s not in SCENARIOS:
            raise unknown_name("scenario", s, list(SCENARIOS))
    return chosen, names


def model_spec(abbreviation: str, seq_len: int | None = None) -> str:
    """Zoo spec of a pair member: ``"bert-base:seq_len=32"`` for a transformer, else its name.

    Examples
    --------
    >>> model_spec("BB", 32), model_spec("RN", 32), model_spec("XL")
    ('bert-base:seq_len=32', 'resnet50', 'xlnet')
    """
    name = ABBREVIATIONS[abbreviation]
    if seq_len is None or abbreviation not in TRANSFORMERS:
        return name
    return f"{name}:seq_len={seq_len}"


def _effective_seq_len(pair: tuple[str, str], seq_len: int | None) -> int | None:
    """The tokens per request of the pair's transformer (``None`` when it has none)."""
    from npuweave.workload import zoo

    for abbreviation in pair:
        if abbreviation in TRANSFORMERS:
            default = zoo.defaults(ABBREVIATIONS[abbreviation])["seq_len"]
            return seq_len if seq_len is not None else (
                default if isinstance(default, int) else None)
    return None


def _run_one(pair: tuple[str, str], scenario: Scenario, scheduler: str, requests: int,
             opts: Mapping[str, Any], seed: int, cost_model: str,
             seq_len: int | None = None) -> dict[str, Any]:
    from npuweave.hardware import preset
    from npuweave.sim import run_streams

    models: list[str | tuple[str, list[LayerCost]]] = [model_spec(pair[0], seq_len),
                                                       model_spec(pair[1], seq_len)]
    npu = preset(scenario.npu)
    result = run_streams(models, npu, batch=scenario.batch, scheduler=scheduler,
                         requests=requests, seed=seed, cost_model=cost_model, **opts)
    row = {"scenario": scenario.name, "npu": scenario.npu, "batch": scenario.batch,
           "cost_model": cost_model, "seq_len": _effective_seq_len(pair, seq_len),
           "pair": "+".join(pair), "scheduler": scheduler}
    metrics = evaluate(result, standalone_lookup(models, npu, cost_model), METRICS)
    row.update({k: v for k, v in metrics.items() if k != "scheduler"})
    row["notes"] = "; ".join(result.notes)
    return row


def sweep_aimt_thresholds(
    pairs: str | Iterable[str] | None,
    scenario: str,
    requests: int = 10,
    lows: Sequence[float] | None = None,
    highs: Sequence[float] | None = None,
    seed: int = 0,
    cost_model: str = "systolic-ws",
    on_step: Callable[[dict[str, Any]], None] | None = None,
    seq_len: int | None = None,
) -> dict[str, Any]:
    """One AI-MT setting for a whole scenario: the ``(low, high)`` with the best geomean STP.

    As in the thesis (IV.5.B), the thresholds are swept in 2D and the single setting with the
    best overall throughput over all pairs is kept (not a different setting per pair).
    Returns ``{"low", "high", "stp_geomean", "grid": [(low, high, stp_geomean), ...]}``.
    """
    from npuweave.sim.sweep import HIGHS, LOWS

    grid = []
    for lo in lows or LOWS:
        for hi in highs or HIGHS:
            if not lo < hi:
                continue
            opts = {"aimt": {"low": lo, "high": hi}}
            rows = reproduce_layerweaver(pairs, [scenario], ["aimt"], requests, opts, seed,
                                         cost_model, on_step, seq_len)
            grid.append((lo, hi, _geomean(r["stp"] for r in rows)))
    lo, hi, best = max(grid, key=lambda g: g[2] or 0.0)
    return {"low": lo, "high": hi, "stp_geomean": best, "grid": grid}


def reproduce_layerweaver(
    pairs: str | Iterable[str] | None = None,
    scenarios: Sequence[str] = tuple(SCENARIOS),
    schedulers: Sequence[str] = SCHEDULERS,
    requests: int = 10,
    scheduler_opts: Mapping[str, Mapping[str, Any]] | None = None,
    seed: int = 0,
    cost_model: str = "systolic-ws",
    on_step: Callable[[dict[str, Any]], None] | None = None,
    seq_len: int | None = None,
) -> Rows:
    """Run every (scenario, pair, scheduler); one row of metrics each (``Rows``: a list with
    ``to_dataframe()``).

    ``scheduler_opts`` maps a scheduler name to its options (e.g. the AI-MT thresholds, see
    ``sweep_aimt_thresholds``); ``on_step(row)`` is called after each run. Nothing is tuned
    here: every scheduler runs with its registered defaults unless options are passed in.
    ``cost_model`` names a registered cost model (``npuweave.cost.cost_models()``);
    ``seq_len`` sets the tokens per request of the transformers (BB, BL, XL) only, ``None``
    keeping the zoo's default. Both are recorded in every row (``seq_len`` as the value the
    pair's transformer ran with, ``None`` for pairs without one).

    Examples
    --------
    >>> rows = reproduce_layerweaver(pairs="RN+BB", scenarios=["single-batch"])  # doctest: +SKIP
    >>> headline(rows)["single-batch"]["stp_gain_vs_baselines"]                  # doctest: +SKIP
    0.0
    """
    chosen, names = check_options(pairs, scenarios, schedulers, requests, cost_model, seq_len)
    rows = Rows()
    for s in scenarios:
        for pair in chosen:
            for name in names:
                opts = (scheduler_opts or {}).get(name, {})
                row = _run_one(pair, SCENARIOS[s], name, requests, opts, seed, cost_model,
                               seq_len)
                row["options"] = ", ".join(f"{k}={v}" for k, v in opts.items())
                rows.append(row)
                if on_step is not None:
                    on_step(row)
    return rows


def _mean(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values (a run that did nothing has no ANTT)."""
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def _geomean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    if not vals or min(vals) <= 0:
        return 0.0 if vals else None
    return float(np.exp(np.mean(np.log(vals))))


def _by(rows: Sequence[Mapping[str, Any]], scenario: str, scheduler: str) -> dict[str, Any]:
    return {r["pair"]: r for r in rows if r["scenario"] == scenario and r["scheduler"] == scheduler}


def averages(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per scenario and scheduler: arithmetic means over pairs (STP also as a geomean)."""
    out = []
    for scenario in dict.fromkeys(r["scenario"] for r in rows):
        for name in dict.fromkeys(r["scheduler"] for r in rows):
            group = list(_by(rows, scenario, name).values())
            if not group:
                continue
            row: dict[str, Any] = {"scenario": scenario, "scheduler": name, "pairs": len(group)}
            for m in METRICS:
                row[m] = _mean(g[m] for g in group)
            row["stp_geomean"] = _geomean(g["stp"] for g in group)
            out.append(row)
    return out


def _ratios(rows: Sequence[Mapping[str, Any]], scenario: str, base: Sequence[str]) -> list[float]:
    """Per pair: STP of Layerweaver over the mean STP of the ``base`` runs that did work."""
    lw = _by(rows, scenario, "layerweaver")
    refs = [_by(rows, scenario, b) for b in base]
    out = []
    for pair, row in lw.items():
        # A baseline that ran nothing (memory-only when the cost model finds no memory-bound
        # model in the pair) is not a baseline for that pair.
        stps = [ref[pair]["stp"] for ref in refs if pair in ref and ref[pair]["stp"]]
        if stps:
            out.append(row["stp"] / float(np.mean(stps)))
    return out


def headline(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """The thesis's summary numbers from our rows, by scenario (keys as in ``THESIS``).

    STP gain over the baselines is the mean over pairs of ``STP_LW / mean(STP_baselines) - 1``
    (the thesis: "by 60.1% on average"), leaving out baselines that ran nothing; over AI-MT it is the geomean ratio minus 1 ("21.6%
    higher geomean throughput"). Utilizations and ANTT are arithmetic means over pairs.
    """
    out: dict[str, dict[str, float]] = {}
    for scenario in dict.fromkeys(r["scenario"] for r in rows):
        lw = list(_by(rows, scenario, "layerweaver").values())
        if not lw:
            continue
        res: dict[str, float] = {}
        base = _ratios(rows, scenario, BASELINES)
        if base:
            res["stp_gain_vs_baselines"] = float(np.mean(base)) - 1
            res["stp_gain_vs_baselines_max"] = float(np.max(base)) - 1
        vs_aimt = _ratios(rows, scenario, ("aimt",))
        if vs_aimt:
            res["stp_gain_vs_aimt"] = float(np.exp(np.mean(np.log(vs_aimt)))) - 1
            res["antt_aimt"] = float(np.mean([r["antt"] for r in _by(rows, scenario, "aimt").values()]))
        for m in ("pe_utilization", "dram_utilization", "antt"):
            res[m] = float(np.mean([r[m] for r in lw]))
        out[scenario] = res
    return out
