"""Run the same closed-loop streams under several schedulers and measure each run alike.

This is the engine room of ``npuweave schedule`` and of the paper reproductions: it calls
``npuweave.sim.run_streams`` once per scheduler, takes standalone times from the same engine
(``npuweave.sim.standalone_time``), and turns each ``SimResult`` into a row of metrics, all
measured over the same kind of window (the closed loop's, ``ClosedLoop.common_window``: while
every stream still runs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from npuweave.errors import ConfigError, unknown_name
from npuweave.metrics import Window, summarize
from npuweave.report.tables import Rows
from npuweave.sim.arrival_processes import ClosedLoop

#: Columns of the comparison table, in order.
ROW_METRICS = (
    "stp", "antt", "fairness", "pe_utilization", "dram_utilization", "throughput",
    "makespan_ratio",
)


def scheduler_names() -> list[str]:
    """Registered scheduling policies, in registry order."""
    from npuweave.schedule import schedulers

    return list(schedulers())


def resolve_schedulers(spec: str | Sequence[str]) -> list[str]:
    """``"all"``, a comma list, or a sequence of names -> validated scheduler names."""
    valid = scheduler_names()
    if isinstance(spec, str):
        spec = valid if spec.strip() == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    names = list(dict.fromkeys(spec))
    for name in names:
        if name not in valid:
            raise unknown_name("scheduler", name, valid)
    if not names:
        raise ConfigError("no scheduler given; choose from: " + ", ".join(valid))
    return names


def _model_name(spec: Any) -> str:
    return spec if isinstance(spec, str) else spec[0]


def standalone_lookup(
    models: Sequence[Any], npu: Any, cost_model: str
) -> Callable[[Any], float]:
    """``record -> seconds`` of its model alone on ``npu`` at the record's batch (cached).

    ``models`` are the specs given to ``run_streams`` (zoo names, or ``(name, costs)``
    pairs), so a record's model name maps back to the exact spec that ran. Named specs are
    cached for the whole process (a reproduction asks for the same few thousands of times);
    ``(name, costs)`` pairs only for the life of this lookup.
    """
    from npuweave.sim import standalone_time

    specs = {_model_name(m): m for m in models}

    @cache
    def seconds(model: str, batch: int) -> float:
        spec = specs.get(model, model)
        if isinstance(spec, str):
            return _named_standalone(spec, npu, batch, cost_model)
        return float(standalone_time(spec, npu, batch, cost_model))

    return lambda record: seconds(record.model, record.batch)


@cache
def _named_standalone(spec: str, npu: Any, batch: int, cost_model: str) -> float:
    from npuweave.sim import standalone_time

    return float(standalone_time(spec, npu, batch, cost_model))


def evaluate(
    result: Any,
    standalone: Callable[[Any], float] | Mapping[str, float],
    metrics: Sequence[str] = ROW_METRICS,
    window: Window = "common",
) -> dict[str, Any]:
    """One row of metrics for one ``SimResult`` (scheduler name first).

    ``window="common"`` measures over the closed loop's window
    (``ClosedLoop.common_window``: until the first stream stops issuing requests).
    """
    row: dict[str, Any] = {"scheduler": getattr(result, "scheduler", "?")}
    if not result.requests:
        # The policy ran nothing (memory-only without a memory-intensive tenant): no work,
        # so no throughput and no utilization; slowdowns are undefined.
        row.update({m: _EMPTY.get(m) for m in metrics})
        return row
    if window == "common":
        window = ClosedLoop.common_window
    row.update(summarize(result, standalone, metrics, window))
    return row


_EMPTY: dict[str, Any] = {"stp": 0.0, "fairness": 0.0, "pe_utilization": 0.0,
                          "dram_utilization": 0.0, "throughput": {}}


def compare(
    models: Sequence[Any],
    npu: Any,
    batch: int | Sequence[int] = 1,
    schedulers: Iterable[str] = ("layerweaver",),
    requests: int = 10,
    window_s: float | None = None,
    seed: int = 0,
    cost_model: str = "systolic-ws",
    on_result: Callable[[str, Any], None] | None = None,
    **opts: Any,
) -> tuple[Rows, dict[str, Any]]:
    """Run ``models`` as closed-loop streams under each scheduler.

    Returns ``(rows, results)``: one metrics row per scheduler (``Rows``, a list with
    ``to_dataframe()``) and the raw ``SimResult``s by scheduler name. ``on_result(name, result)`` is called after each run (progress bars).

    Examples
    --------
    Under the Layerweaver thesis's setup (MAESTRO layer times, BERT with 32 tokens) ResNet-50
    is compute-bound and BERT memory-bound, and Layerweaver overlaps the two:

    >>> from npuweave.hardware import preset
    >>> rows, _ = compare(["resnet50", "bert-base:seq_len=32"], preset("memory-centric"),
    ...                   schedulers=["sequential", "layerweaver"], cost_model="maestro")
    >>> [round(r["stp"], 2) for r in rows]
    [1.07, 1.34]

    With SCALE-Sim cycles and 128 tokens both are compute-bound; Layerweaver's failsafe then
    runs the requests one at a time, as sequential does:

    >>> rows, _ = compare(["resnet50", "bert-base"], preset("memory-centric"),
    ...                   schedulers=["sequential", "layerweaver"])
    >>> [round(r["stp"], 2) for r in rows]
    [1.0, 1.0]
    """
    from npuweave.experiments.energy import result_energy
    from npuweave.sim.simulate import SimSpec, simulate

    if requests is not None and requests < 1:
        raise ConfigError(f"requests must be >= 1, got {requests}")
    standalone = standalone_lookup(models, npu, cost_model)
    rows: Rows = Rows()
    results: dict[str, Any] = {}
    for name in schedulers:
        result = simulate(SimSpec(list(models), npu, ClosedLoop(requests, window_s), name, opts,
                                  batch=batch, cost_model=cost_model, seed=seed))
        results[name] = result
        row = evaluate(result, standalone)
        row["scheduler"] = name
        row.update(result_energy(result, npu, cost_model))
        rows.append(row)
        if on_result is not None:
            on_result(name, result)
    return rows, results
