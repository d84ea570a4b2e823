"""``serve``: an open-loop serving run, from arrivals to the per-request table and its summary.

Steps: cost every model at every batch size the run needs (``tenants_for``) with its
activation footprint (checkpoints, spills); run the ``Simulator``, or with Triton-style
batching (``--batching window:<w>:max<N>``) or a policy that wants several batches of one
model in service (``grouping="per-request"``) or sees the queue behind a batch
(``inherit=True``) the ``BatchingSimulator``, whose ``Batcher`` forms batches when the model
can take one; turn its requests into a ``RequestTable`` (one row
per *arrived* request, batched ones sharing their batch's times) and summarize it
(``npuweave.metrics.serving.summarize``).

NTT and SLA use the *cold* isolated time of one request of the model alone on the same engine
(empty buffer, same traffic switch), as PREMA does for open-loop runs; with batching it is
the batch-1 request's, the time a user would see alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from npuweave.errors import ConfigError
from npuweave.fileio.flags import Batching
from npuweave.hardware.npu import NPU
from npuweave.metrics.records import RequestRecords, SegmentRecords, segment_columns, switches
from npuweave.metrics.requests import Outcome, RequestTable, request_table
from npuweave.metrics.serving import SLA_MULTS, summarize
from npuweave.schedule.base import Tenant
from npuweave.schedule.plan import policy_tenants
from npuweave.schedule.registry import get_scheduler
from npuweave.sim.arrivals import Arrivals
from npuweave.sim.batch_serve import BatchingSimulator
from npuweave.sim.batcher import Batcher, inflight_slots
from npuweave.sim.records import Interval
from npuweave.sim.requests import State
from npuweave.sim.serve import MAX_EVENTS, Simulator
from npuweave.sim.taskqueue import DONE
from npuweave.sim.taskrun import ArrivalRows, RequestColumns
from npuweave.sim.tenants import ModelSpec, costed_tenants
from npuweave.sim.units import Footprint

Group = tuple[float, int, int, list[int]]  # ready time, model, batch size, member rows


@dataclass(frozen=True, slots=True, eq=False)
class ServeResult:
    """What a serving run leaves: per-request table, summary rows, busy totals, intervals."""

    table: RequestTable
    rows: list[dict[str, Any]]
    span_s: float
    pe_busy_s: float
    dram_busy_s: float
    events: int
    scheduler: str
    notes: tuple[str, ...] = ()
    intervals: tuple[Interval, ...] = ()
    peak_buffer_bytes: int = 0
    requests: Sequence[dict[str, Any]] = ()
    segments: Sequence[dict[str, Any]] = ()


def serve(models: Sequence[ModelSpec], npu: NPU, arrivals: Arrivals,
          scheduler: str = "layerweaver", *, batching: Batching | None = None,
          traffic: bool = True, cost_model: str = "systolic-ws", seed: int = 0,
          log: bool = False, max_events: int = MAX_EVENTS,
          sla_mults: Sequence[float] = SLA_MULTS, stp_form: str = "open-loop",
          progress: Callable[[float], None] | None = None, records: bool = False,
          **scheduler_opts: object) -> ServeResult:
    """Serve ``arrivals`` (indices into ``models``) on ``npu`` under ``scheduler``.

    Examples
    --------
    >>> from npuweave.cost import LayerCost
    >>> from npuweave.hardware import NPU
    >>> from npuweave.sim.arrivals import make_arrivals
    >>> npu = NPU(name="toy", pe_rows=1, pe_cols=1, clock_hz=1.0, dram_bw=10.0,
    ...           weight_buffer=100, act_buffer=100)
    >>> m = ("m", [LayerCost(compute_s=2.0, weight_bytes=10)])
    >>> r = serve([m], npu, make_arrivals([0.0, 1.0], [0, 0], ("m",)), "fcfs")
    >>> r.table.finish_s.tolist()  # fetch 0-1, compute 1-3; then 3-5 (fetched 1-2)
    [3.0, 5.0]
    """
    if len(models) != len(arrivals.models):
        raise ConfigError(f"serve: {len(models)} models but the arrivals name "
                          f"{len(arrivals.models)} ({', '.join(arrivals.models)}); give one "
                          "model per arrival model")
    policy = get_scheduler(scheduler, seed=seed, **scheduler_opts)
    slots = inflight_slots(policy)
    kw: dict[str, Any] = dict(traffic=traffic, latency_s=npu.dram_latency_s, log=log,
                              max_events=max_events, progress=progress, segments=records)
    period = getattr(policy, "period_s", None)
    span = float(arrivals.time_s[-1]) if len(arrivals) else 0.0
    kw["wakes"] = span / period if period else 0.0
    if batching is None and slots == 1 and not getattr(policy, "inherit", False):
        sim, groups, iso = _singles(models, npu, arrivals, policy, cost_model, kw)
    else:
        sim, groups, iso = _batched(models, npu, arrivals, policy, cost_model,
                                    batching or Batching(0.0, 1), slots, kw)
    sim.run()
    table = _table(sim, groups, arrivals, np.array(iso))
    return finish(sim, groups, arrivals, table, policy.name, sla_mults, stp_form, log)


def finish(sim: Simulator, groups: list[Group] | None, arrivals: Arrivals, table: RequestTable,
           name: str, sla_mults: Sequence[float] = SLA_MULTS, stp_form: str = "open-loop",
           log: bool = False, ids: Sequence[Any] | None = None) -> ServeResult:
    """Summarize a finished run (and its per-request records when it kept segments)."""
    eng = sim.engine
    span = max(eng.last_end, float(arrivals.time_s[-1]) if len(arrivals) else 0.0)
    summary = summarize(table, span_s=span if span > 0 else 1.0, pe_busy_s=eng.pe_busy_s,
                        dram_busy_s=eng.dram_busy_s, sla_mults=sla_mults, stp_form=stp_form)
    recs, segs = _records(sim, groups, table, ids) if sim.segments is not None else ((), ())
    return ServeResult(table, summary, span, eng.pe_busy_s, eng.dram_busy_s, sim.loop.fired,
                       name, tuple(sim.notes), _intervals(sim, sim.tenants) if log else (),
                       eng.peak_claimed, recs, segs)


def _records(sim: Simulator, groups: list[Group] | None, table: RequestTable,
             ids: Sequence[Any] | None) -> tuple[RequestRecords, SegmentRecords]:
    """Per-request and per-segment records, kept as columns (``npuweave.metrics.records``);
    a batch's segments carry its first member's id. ``groups`` None: one request per table
    row, in row order (no list of one-member groups needed)."""
    n = len(table)
    ran = min(n if groups is None else len(groups), len(sim.requests))  # became requests
    if groups is None:  # request i is row i, alone
        size, members, bsize = np.ones(n, np.int64), np.arange(n), np.ones(ran, np.int64)
    else:
        size = np.fromiter((len(g[3]) for g in groups), np.int64, len(groups))
        members = np.fromiter(chain.from_iterable(g[3] for g in groups), np.int64,
                              int(size.sum()))
        bsize = np.fromiter((g[2] for g in groups[:ran]), np.int64, ran)
    first = members[np.cumsum(size) - size]
    rid, start, end = segment_columns(sim.segments or [])
    batch, pre = np.ones(n, np.int64), np.zeros(n, np.int64)
    rows, size = members[:int(size[:ran].sum())], size[:ran]
    batch[rows] = np.repeat(bsize, size)
    pre[rows] = np.repeat(switches((rid, start, end), len(sim.requests))[:ran], size)
    return RequestRecords(table, ids, batch, pre), SegmentRecords(first[rid], start, end, ids)


#: Events a served unit fires at the least (its load's end and its computation's end).
EVENTS_PER_UNIT = 2
#: Largest run whose busy intervals are kept for a timeline or trace (estimated events): the
#: intervals are held in memory and drawn at the end (a 38k-request trace grew to 5.6 GB).
MAX_LOGGED_EVENTS = 2_000_000


def check_work(units: int, requests: float, max_batch: int, max_events: int,
               log: bool, wakes: float = 0.0) -> None:
    """Refuse, before running, a run whose least event count (requests / max batch x
    ``units``, the smallest model's unit count, x 2, plus ``wakes``, the policy's timer events over the arrival
    span) passes ``max_events``, or, with intervals kept, the log limit.

    Examples
    --------
    >>> check_work(1, 10, 1, 100, False)
    """
    events = requests / max(1, max_batch) * units * EVENTS_PER_UNIT + wakes
    if events > max_events:
        timer = f" + {wakes:.3g} policy timer events" if wakes else ""
        raise ConfigError(f"this run needs at least {events:.3g} simulated events ({requests:.3g} "
                          f"requests x {units}+ units x {EVENTS_PER_UNIT}{timer}), over "
                          f"--max-events {max_events}; shorten --duration, lower --qps, "
                          "lengthen the policy's period (quantum_s) or raise --max-events")
    if log and events > MAX_LOGGED_EVENTS:
        raise ConfigError(f"--timeline/--trace keep every busy interval: this run has at least "
                          f"{events:.3g} events, over the {MAX_LOGGED_EVENTS:,} a timeline or "
                          "trace is drawn from; shorten --duration (or drop --timeline/--trace)")


def least_units(models: Sequence[ModelSpec]) -> int:
    """A lower bound on the units a request of any of ``models`` runs: its layer count (a
    layer that does not fit the buffer becomes several units, never fewer)."""
    from npuweave.workload import load_layers

    counts = [len(load_layers(m)) if isinstance(m, str) else len(m[1]) for m in models]
    return max(1, min(counts, default=1))


def _units(tenants: Sequence[Tenant], policy: Any, npu: NPU) -> int:
    """The fewest units a request of ``tenants`` runs under ``policy``: its own units where
    it defines them (AI-MT's sub-layer blocks, as the ``Simulator`` runs them)."""
    if getattr(policy, "level", "layer") == "layer":
        tenants = policy_tenants(policy, tenants, npu.weight_buffer, npu.dram_bw)
    return min((len(t.compute_s) for t in tenants), default=0)


def _singles(models: Sequence[ModelSpec], npu: NPU, arrivals: Arrivals, policy: Any,
             cost_model: str, kw: dict[str, Any]) -> tuple[Simulator, None, list[float]]:
    """Every request on its own, one tenant per model, queued first come first served
    (groups None: request i is arrival row i, no list of one-member groups)."""
    t, m = arrivals.time_s, arrivals.model
    tenants, feet = costed_tenants(models, npu, [(k, 1) for k in range(len(models))],
                                   cost_model)
    check_work(_units(tenants, policy, npu), len(t), 1, kw["max_events"], kw["log"],
               kw.pop("wakes"))
    iso = [_isolated(tenants[k], feet[k], npu, kw["traffic"]) for k in range(len(models))]
    rows = ArrivalRows(t, m, arrivals.priority, arrivals.deadline_abs_s)
    sim = Simulator(tenants, npu.weight_buffer, npu.dram_bw, policy, arrivals=rows,
                    footprints=feet, isolated_s=iso, **kw)
    return sim, None, iso


def _batched(models: Sequence[ModelSpec], npu: NPU, arrivals: Arrivals, policy: Any,
             cost_model: str, batching: Batching, slots: int,
             kw: dict[str, Any]) -> tuple[Simulator, list[Group], list[float]]:
    """Triton-style dynamic batching (``npuweave.sim.batcher``) over ``slots`` per model:
    every batch size up to the max is costed, and laid out as ``slot_tenants`` says."""
    n, cap = len(models), batching.max_batch
    sizes = [(k, b) for k in range(n) for b in range(1, cap + 1)]
    tenants, feet = costed_tenants(models, npu, sizes, cost_model)
    check_work(_units(tenants, policy, npu), len(arrivals), cap, kw["max_events"], kw["log"],
               kw.pop("wakes"))
    iso = [_isolated(tenants[k * cap], feet[k * cap], npu, kw["traffic"]) for k in range(n)]
    order = [k * cap + b for k in range(n) for _ in range(slots) for b in range(cap)]
    batcher = Batcher(arrivals.time_s, arrivals.model, n, batching.window_s, cap, slots,
                      arrivals.deadline_abs_s)
    sim = BatchingSimulator([tenants[j] for j in order], npu.weight_buffer, npu.dram_bw,
                            policy, batcher, arrivals.time_s, arrivals.model,
                            arrivals.priority, arrivals.deadline_abs_s,
                            footprints=[feet[j] for j in order],
                            isolated_s=[iso[j // cap] for j in order], **kw)
    return sim, sim.groups, iso


def _isolated(tenant: Tenant, foot: Footprint, npu: NPU, traffic: bool) -> float:
    """Cold isolated seconds of one request alone (same engine, same traffic switch)."""
    sim = Simulator([tenant], npu.weight_buffer, npu.dram_bw, get_scheduler("fcfs"),
                    arrivals=[(0.0, 0, 1, math.inf)], footprints=[foot], traffic=traffic,
                    latency_s=npu.dram_latency_s)
    sim.run()
    return sim.requests[0].finish_s


#: Public name of the cold isolated time (LoadGen's online device uses it too).
isolated_time = _isolated


def _table(sim: Simulator, groups: list[Group] | None, arr: Arrivals,
           iso: np.ndarray) -> RequestTable:
    if sim.columns is not None:  # the task loop's arrays: request i is arrival row i
        return _column_table(sim.columns, arr, iso)
    n = len(arr)
    start, finish = np.full(n, np.nan), np.full(n, np.nan)
    # an arrival no batch took (a model the policy does not serve, e.g. memory-only's
    # compute-intensive ones, never frees its queue) was never run: killed, as unbatched
    state = np.full(n, int(Outcome.KILLED), np.int8)
    pre, over, waste = np.zeros(n, np.int64), np.zeros(n), np.zeros(n)
    members = ([i] for i in range(n)) if groups is None else (g[3] for g in groups)
    for rows, req in zip(members, sim.requests):
        start[rows], finish[rows] = req.start_s, req.finish_s
        state[rows] = Outcome.DONE if req.state is State.DONE else Outcome.KILLED
        pre[rows], over[rows], waste[rows] = req.preemptions, req.overhead_s, req.wasted_s
    return request_table(arr.models, arr.model, arr.time_s, finish, iso, start_s=start,
                         priority=arr.priority, deadline_s=arr.deadline_abs_s, state=state,
                         preemptions=pre, preempt_overhead_s=over, wasted_s=waste)


def _column_table(cols: RequestColumns, arr: Arrivals, iso: np.ndarray) -> RequestTable:
    """``_table`` from a task-loop run's per-request arrays (one request per arrival)."""
    state = np.where(cols.state == DONE, int(Outcome.DONE), int(Outcome.KILLED)).astype(np.int8)
    return request_table(arr.models, arr.model, arr.time_s, cols.finish_s.copy(), iso,
                         start_s=cols.start_s.copy(), priority=arr.priority,
                         deadline_s=arr.deadline_abs_s, state=state,
                         preemptions=cols.preemptions.astype(np.int64),
                         preempt_overhead_s=cols.overhead_s.copy(), wasted_s=cols.wasted_s.copy())


def _intervals(sim: Simulator, tenants: Sequence[Tenant]) -> tuple[Interval, ...]:
    eng = sim.engine
    labels = [t.label for t in tenants]

    def name(u: Any) -> str:
        return tenants[u.tenant].units[u.index] if u.index >= 0 else "checkpoint"

    iv = [Interval("PE", labels[u.tenant], r, name(u), s, e) for u, r, s, e in eng.pe_log]
    iv += [Interval("DRAM", labels[u.tenant], r, name(u), s, e)
           for u, r, s, e, _ in eng.dram_log]
    iv.sort(key=lambda x: (x.start_s, x.resource != "DRAM", x.end_s))
    return tuple(iv)
