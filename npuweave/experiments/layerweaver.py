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
from functools import cache
from typing import Any

from npuweave.errors import ConfigError, unknown_name
from npuweave.experiments.compare import evaluate, resolve_schedulers
from npuweave.experiments.executor import check_jobs, run_map
from npuweave.experiments.lw_setup import (  # noqa: F401 (check_config, resolve_physics re-exported)
    check_config,
    check_ncf,
    fluid_bound,
    ncf_tables,
    resolve_physics,
)
from npuweave.experiments.lw_summary import (  # noqa: F401 (re-exported)
    BASELINES,
    METRICS,
    THESIS,
    _geomean,
    averages,
    headline,
)
from npuweave.report.tables import Rows

COMPUTE_MODELS = {"IC": "inceptionv3", "MN": "mobilenetv2", "RN": "resnet50", "RX": "resnext50"}
MEMORY_MODELS = {"BB": "bert-base", "BL": "bert-large", "NCF": "ncf", "XL": "xlnet"}
#: The models a ``seq_len`` applies to (tokens per request).
TRANSFORMERS = ("BB", "BL", "XL")
ABBREVIATIONS = {**COMPUTE_MODELS, **MEMORY_MODELS}
SCHEDULERS = ("sequential", *BASELINES, "aimt", "aimt-fetchahead", "random", "layerweaver")
#: Options of the rows that are not swept: the former controller where its sweep landed.
FIXED_OPTS = {"aimt-fetchahead": {"low": 0.0, "high": 0.2}}


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


def check_options(pairs: str | Iterable[str] | None, scenarios: Sequence[str],
                  schedulers: Sequence[str], requests: int, cost_model: str = "maestro",
                  seq_len: int | None = None, ncf: str = "tables",
                  jobs: int = 1) -> tuple[list[tuple[str, str]], list[str]]:
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
    check_ncf(ncf)
    check_jobs(jobs)
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
            return seq_len if seq_len is not None else int(default)  # type: ignore[arg-type]
    return None


@dataclass(frozen=True, slots=True)
class Physics:
    """What every run of one reproduction shares: cost model, tokens, NCF mode, seed."""

    cost_model: str
    seq_len: int | None
    ncf: str = "tables"
    seed: int = 0


@cache
def _spec(abbreviation: str, scenario: str, phys: Physics) -> Any:
    """The ``run_streams`` spec of a pair member (NCF with whole tables is pre-costed)."""
    if abbreviation == "NCF" and phys.ncf == "tables":
        sc = SCENARIOS[scenario]
        return ncf_tables(sc.npu, sc.batch, phys.cost_model)
    return model_spec(abbreviation, phys.seq_len)


@cache
def standalone(abbreviation: str, scenario: str, phys: Physics) -> float:
    """Steady-state seconds per request of the model alone (cached across runs).

    Examples
    --------
    >>> standalone("RN", "single-batch", Physics("maestro", 32)) > 1e-3  # doctest: +SKIP
    True
    """
    from npuweave.hardware import preset
    from npuweave.sim import standalone_time

    sc = SCENARIOS[scenario]
    return float(standalone_time(_spec(abbreviation, scenario, phys), preset(sc.npu), sc.batch,
                                 phys.cost_model))


@cache
def pair_tenants(pair: tuple[str, str], scenario: str, phys: Physics) -> list[Any]:
    """The pair's two streams as costed tenants (``sim.tenants_for``), costed once per
    process and shared by every run of the pair (cached; tenants are frozen)."""
    from npuweave.hardware import preset
    from npuweave.sim.tenants import tenants_for

    sc = SCENARIOS[scenario]
    specs = [_spec(a, scenario, phys) for a in pair]
    return tenants_for(specs, preset(sc.npu), sc.batch, phys.cost_model)


@cache
def pair_bound(pair: tuple[str, str], scenario: str, phys: Physics) -> float:
    """The fluid upper bound on the pair's STP (``lw_setup.fluid_bound``; cached).

    Examples
    --------
    >>> round(pair_bound(("RN", "BB"), "single-batch", Physics("maestro", 32)), 2)  # doctest: +SKIP
    1.53
    """
    from npuweave.hardware import preset

    npu = preset(SCENARIOS[scenario].npu)
    tenants = pair_tenants(pair, scenario, phys)
    comp = tuple(t.total_compute_s for t in tenants)
    mem = tuple(t.total_weight_bytes / npu.dram_bw for t in tenants)
    alone = tuple(standalone(a, scenario, phys) for a in pair)
    return fluid_bound((comp[0], comp[1]), (mem[0], mem[1]), (alone[0], alone[1]))


def max_slowdown(run: Any, sa: Any, window: Any) -> float:
    """Largest NTT among the requests issued inside the window (thesis: "100% tail").

    A metric function for ``compare.evaluate``, keyed ``"max_slowdown"`` in the rows.

    Examples
    --------
    >>> evaluate(result, standalone_of, [max_slowdown])["max_slowdown"]  # doctest: +SKIP
    2.25
    """
    from npuweave.metrics import resolve_window
    from npuweave.metrics.multitask import ntt

    t0, t1 = resolve_window(window, run.requests)
    return max(ntt([r for r in run.requests if t0 <= r.arrival_s < t1], sa))


@dataclass(frozen=True, slots=True)
class Task:
    """One run: a pair under one scheduler in one scenario."""

    pair: tuple[str, str]
    scenario: str
    scheduler: str
    requests: int
    opts: tuple[tuple[str, Any], ...]
    phys: Physics
    stp_only: bool = False  # sweeps rank settings by STP alone: skip the other metrics
    grid: tuple[tuple[float, float], ...] = ()  # AI-MT (mem, dist) settings: ``run_grid``


def run_task(task: Task, policy: Any = None) -> dict[str, Any]:
    """Run one ``Task`` and measure it: one row (module-level so a process pool can call it).

    ``policy``: the scheduler object to run (built from ``task.scheduler`` and ``task.opts``
    when not given), for a caller that reads it afterwards (``run_grid``).

    Examples
    --------
    >>> task = Task(("RN", "BB"), "single-batch", "layerweaver", 2, (), Physics("maestro", 32))
    >>> run_task(task)["scheduler"]  # doctest: +SKIP
    'layerweaver'
    """
    from npuweave.hardware import preset
    from npuweave.sim import run_tenants

    sc, phys = SCENARIOS[task.scenario], task.phys
    specs = [_spec(a, task.scenario, phys) for a in task.pair]
    opts = dict(task.opts)
    npu = preset(sc.npu)
    # ``run_streams`` on the pair's tenants, costed once (``pair_tenants``)
    tenants = pair_tenants(task.pair, task.scenario, phys)
    if policy is None:
        result = run_tenants(tenants, npu.weight_buffer, npu.dram_bw, task.scheduler,
                             task.requests, seed=phys.seed, **opts)
    else:
        result = run_tenants(tenants, npu.weight_buffer, npu.dram_bw, policy, task.requests)
    alone = {(s if isinstance(s, str) else s[0]): standalone(a, task.scenario, phys)
             for a, s in zip(task.pair, specs, strict=True)}
    row: dict[str, Any] = {"scenario": sc.name, "npu": sc.npu, "batch": sc.batch,
           "cost_model": phys.cost_model, "seq_len": _effective_seq_len(task.pair, phys.seq_len),
           "ncf": phys.ncf if "NCF" in task.pair else None,
           "pair": "+".join(task.pair), "scheduler": task.scheduler}
    wanted: tuple[Any, ...] = ("stp",) if task.stp_only else (*METRICS, max_slowdown)
    metrics = evaluate(result, lambda rec: alone[rec.model], wanted)
    # a run that did nothing keys its (undefined) metrics by what was asked, callables too
    row.update({getattr(k, "__name__", k): v for k, v in metrics.items() if k != "scheduler"})
    bound = pair_bound(task.pair, task.scenario, phys)
    row["fluid_bound"] = bound
    row["bound_share"] = row["stp"] / bound if row.get("stp") else 0.0
    row["notes"] = "; ".join(result.notes)
    row["options"] = options_text(opts)
    return row


def options_text(opts: Mapping[str, Any]) -> str:
    """A run's options as its row shows them: ``"dist=0.01, mem=0.5"``."""
    return ", ".join(f"{k}={v}" for k, v in opts.items())


def run_grid(task: Task) -> list[dict[str, Any]]:
    """AI-MT on one pair at every ``(mem, dist)`` of ``task.grid``: one row each, in order.

    A setting whose thresholds lie in an earlier run's box (``AIMT.same_run``: every
    threshold test of that run comes out the same) makes the identical schedule, so it takes
    that run's row (with its own options) instead of running again.
    """
    from npuweave.hardware import preset
    from npuweave.schedule.registry import get_scheduler

    npu = preset(SCENARIOS[task.scenario].npu)
    done: list[tuple[Any, dict[str, Any]]] = []
    rows = []
    for mem, dist in task.grid:
        opts = dict(sorted({**dict(task.opts), "mem": mem, "dist": dist}.items()))
        policy = get_scheduler("aimt", seed=task.phys.seed, **opts)
        same = next((row for p, row in done if p.same_run(policy, npu.weight_buffer,
                                                          npu.dram_bw)), None)
        if same is None:
            one = Task(task.pair, task.scenario, "aimt", task.requests,
                       tuple(opts.items()), task.phys, task.stp_only)
            same = run_task(one, policy)
            done.append((policy, same))
        rows.append({**same, "options": options_text(opts)})
    return rows


def make_tasks(pairs: Sequence[tuple[str, str]], scenarios: Sequence[str],
               names: Sequence[str], requests: int, phys: Physics,
               scheduler_opts: Mapping[str, Mapping[str, Any]] | None = None,
               stp_only: bool = False) -> list[Task]:
    """Every (scenario, pair, scheduler) task, in the order rows are reported.

    Examples
    --------
    >>> ts = make_tasks([("RN", "BB")], ["single-batch"], ["fair", "aimt"], 2,
    ...                 Physics("maestro", 32), {"aimt": {"low": 0.1, "high": 0.5}})
    >>> [(t.scheduler, t.opts) for t in ts]
    [('fair', ()), ('aimt', (('high', 0.5), ('low', 0.1)))]
    """
    def opts(name: str) -> tuple[tuple[str, Any], ...]:
        given = (scheduler_opts or {}).get(name, {})
        return tuple(sorted({**FIXED_OPTS.get(name, {}), **given}.items()))

    return [Task(pair, s, name, requests, opts(name), phys, stp_only)
            for s in scenarios for pair in pairs for name in names]


def run_tasks(tasks: Sequence[Task], jobs: int = 1,
              on_step: Callable[[dict[str, Any]], None] | None = None,
              dask: str | None = None) -> list[dict[str, Any]]:
    """Rows of ``tasks`` in order; standalone times and bounds are computed once, up front.

    Examples
    --------
    >>> rows = run_tasks(make_tasks([("RN", "BB")], ["single-batch"], ["fair"], 2,
    ...                             Physics("maestro", 32)), jobs=2)  # doctest: +SKIP
    """
    prime(tasks)
    return run_map(run_task, tasks, jobs,
                   None if on_step is None else (lambda _t, row: on_step(row)), dask=dask)


def prime(tasks: Sequence[Task]) -> None:
    """Before a pool forks: the standalone times and bounds of every pair (cached here, so
    workers inherit them), and the compiled loops when the runs repay them
    (``load_kernels``)."""
    for t in dict.fromkeys((t.pair, t.scenario, t.phys) for t in tasks):
        pair_bound(*t)
    load_kernels(tasks)


def decisions(task: Task) -> int:
    """The scheduling decisions ``task``'s run takes: requests times units (AI-MT's blocks),
    times the settings of its grid (at most)."""
    from npuweave.hardware import preset
    from npuweave.schedule.plan import policy_tenants
    from npuweave.schedule.registry import get_scheduler

    npu = preset(SCENARIOS[task.scenario].npu)
    policy = get_scheduler(task.scheduler, **dict(task.opts))
    tenants = policy_tenants(policy, pair_tenants(task.pair, task.scenario, task.phys),
                             npu.weight_buffer, npu.dram_bw)
    return task.requests * sum(len(t.units) for t in tenants) * max(1, len(task.grid))


def load_kernels(tasks: Sequence[Task]) -> bool:
    """Bring the compiled AI-MT loop and the DMA-part replay into this process when the AI-MT
    runs of ``tasks`` together repay it (``plan.kernels_pay`` of their decisions), before a
    pool forks: its workers inherit them, and every later AI-MT run takes the compiled path
    (one run alone is too short to repay numba's load). Each is run once on a toy board so
    that it is compiled or read from numba's cache here, once, not in every worker. The other
    rows' policies have no compiled loop here (Layerweaver's kernel serves its ``npuweave``
    reading and its failsafe, which no pair of the reproduction engages), so they are not
    loaded. False (nothing loaded) otherwise."""
    from npuweave.schedule import jit
    from npuweave.schedule.plan import kernels_pay, plan_using
    from npuweave.schedule.tiling import make_tenant
    from npuweave.sim.streams import run_tenants

    compiled = [t for t in tasks if t.scheduler == "aimt"]
    if jit.loaded() or not kernels_pay(sum(decisions(t) for t in compiled)):
        return jit.loaded()
    if not jit.compile():  # numba failed to import: plain Python everywhere
        return False
    toy = [make_tenant(n, [1.0, 2.0], [10, 20], 100) for n in "ab"]
    plan_using("kernel", "aimt", toy, 100, 10.0, 2)
    run_tenants(toy, 100, 10.0, "aimt", 2, fast=True)  # the DMA parts' replay
    return True


def reproduce_layerweaver(
    pairs: str | Iterable[str] | None = None,
    scenarios: Sequence[str] = tuple(SCENARIOS),
    schedulers: Sequence[str] = SCHEDULERS,
    requests: int = 10,
    scheduler_opts: Mapping[str, Mapping[str, Any]] | None = None,
    seed: int = 0,
    cost_model: str | None = None,
    on_step: Callable[[dict[str, Any]], None] | None = None,
    seq_len: int | None = None,
    config: str = "thesis",
    ncf: str = "tables",
    jobs: int = 1,
    dask: str | None = None,
) -> Rows:
    """Run every (scenario, pair, scheduler); one row of metrics each (``Rows``: a list with
    ``to_dataframe()``).

    ``config`` names the physics (``lw_setup.CONFIGS``: ``"thesis"``, the reproduction, is
    ``maestro`` with the derived sequence length; ``"systolic"`` is SCALE-Sim-exact cycles with
    the zoo's 128 tokens); ``cost_model`` and ``seq_len`` override it. ``ncf`` is ``"tables"``
    (whole embedding tables per request, the default) or ``"gather"`` (the zoo's row gather,
    a sensitivity study). ``scheduler_opts`` maps a scheduler
    name to its options (e.g. AI-MT's thresholds); ``on_step(row)`` is called after each run;
    ``jobs`` runs on that many processes (``dask``: on a Dask cluster, ``local:N`` or an
    address) with the same rows as serially. Nothing is tuned here.

    Examples
    --------
    >>> rows = reproduce_layerweaver(pairs="RN+BB", scenarios=["single-batch"])  # doctest: +SKIP
    >>> headline(rows)["single-batch"]["stp_gain_vs_baselines"]                  # doctest: +SKIP
    0.25
    """
    model, seq = resolve_physics(config, cost_model, seq_len)
    chosen, names = check_options(pairs, scenarios, schedulers, requests, model, seq, ncf, jobs)
    tasks = make_tasks(chosen, scenarios, names, requests, Physics(model, seq, ncf, seed),
                       scheduler_opts)
    return Rows(run_tasks(tasks, jobs, on_step, dask))
