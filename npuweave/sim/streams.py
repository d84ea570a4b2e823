"""Closed-loop streams (thesis IV.5.B): k streams, each re-issues a request when the last ends.

One tenant per stream. Every stream issues its first request at time 0; request ``r + 1`` is
issued the moment request ``r`` finishes. The run stops after ``requests`` requests per stream,
or, with ``window_s``, issues no request at or after ``window_s`` (requests already issued
finish, so the makespan may pass the window).

The next request's units join the candidate group as soon as the previous request's last unit
is dispatched, as in the thesis's scheduler, which appends queued requests when it resumes just
before the running ones complete: the DMA engine may prefetch weights (the model's, not the
request's) before the request is issued, but no computation of a request starts before its
issue time, because the PE runs units in dispatch order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from npuweave.cost.types import LayerCost
from npuweave.errors import ConfigError
from npuweave.hardware.npu import NPU
from npuweave.schedule.base import Tenant
from npuweave.schedule.plan import policy_tenants
from npuweave.schedule.protocol import Policy
from npuweave.schedule.registry import get_scheduler
from npuweave.sim.arrival_processes import ClosedLoop
from npuweave.sim.fastloop import closed_loop_mode, fast_path_refusal, run_fast
from npuweave.sim.intervals import interval_columns
from npuweave.sim.records import RequestRecord
from npuweave.sim.result import SimResult
from npuweave.sim.serve import MAX_EVENTS, Simulator
from npuweave.sim.tenants import ModelSpec, tenants_for


def run_tenants(tenants: Sequence[Tenant], buffer_bytes: int, dram_bw: float,
                scheduler: str | Policy = "layerweaver", requests: int = 10,
                window_s: float | None = None, seed: int = 0, max_events: int = MAX_EVENTS,
                fast: bool | None = None, **scheduler_opts: object) -> SimResult:
    """Closed-loop streams of already-costed tenants on the engine (the core of
    ``run_streams``; no zoo, no cost model).

    Where the closed-loop fast path is valid (``npuweave.sim.fastloop``: a layer-wise policy
    that only selects) the result is built from the planned schedule instead, equal field for
    field. ``fast=None`` chooses by itself (or as the environment variable
    ``NPUWEAVE_CLOSED_LOOP`` says: ``auto``, ``fast``, ``engine``); ``fast=True`` insists
    (a ``ConfigError`` where it is not valid); ``fast=False`` always runs the engine.

    Examples
    --------
    >>> from npuweave.schedule import make_tenant
    >>> a = make_tenant("a", [2.0], [10], buffer_bytes=10)
    >>> run_tenants([a], 10, 10.0, "sequential", requests=2).makespan_s
    6.0
    """
    _check_run(tenants, requests, window_s)
    policy = (get_scheduler(scheduler, seed=seed, **scheduler_opts)
              if isinstance(scheduler, str) else scheduler)
    tenants = policy_tenants(policy, tenants, buffer_bytes, dram_bw)  # AI-MT's sub-layers
    mode = closed_loop_mode(fast)
    why: str | None = "fast=False or NPUWEAVE_CLOSED_LOOP=engine"
    if mode != "engine":
        loop = ClosedLoop(requests, window_s)
        why = fast_path_refusal(tenants, dram_bw, policy, loop, max_events)
        if why is not None and mode == "fast":
            raise ConfigError(f"the closed-loop fast path cannot run this: {why}; "
                              "use fast=False (or NPUWEAVE_CLOSED_LOOP=engine)")
        if why is None:
            result = run_fast(tenants, buffer_bytes, dram_bw, policy, loop)
            if result is not None:
                return result
            why = "a replayed fetch missed its predicted end (a fast-path bug; please report)"
    sim = Simulator(tenants, buffer_bytes, dram_bw, policy,
                    closed=ClosedLoop(requests, window_s), log=True, max_events=max_events)
    sim.run()
    return replace(_result(tenants, sim), path=f"engine: {why}")


def _check_run(tenants: Sequence[Tenant], requests: int, window_s: float | None) -> None:
    if not tenants:
        raise ConfigError("no models to run; give at least one model")
    for t in tenants:
        if not t.units:
            raise ConfigError(f"model {t.label!r} has no layers to schedule")
    if window_s is None:
        if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
            raise ConfigError(f'"requests" must be an integer >= 1, got {requests!r}; '
                              "or give a time window with window_s")
    elif not 0 < window_s < float("inf"):
        raise ConfigError(f'"window_s" must be a finite number of seconds > 0, got '
                          f"{window_s!r}; an endless window never stops issuing requests")


def _result(tenants: Sequence[Tenant], sim: Simulator) -> SimResult:
    labels = tuple(t.label for t in tenants)
    eng = sim.engine
    count, tix = [len(t.units) for t in tenants], sim.tindex
    # a checkpoint's unit index is -1: named after the tenant's last unit, as Python indexes
    pe = _columns([(u.tenant, tix[r], u.index % count[u.tenant], s, e)
                   for u, r, s, e in eng.pe_log])
    dram = _columns([(u.tenant, tix[r], u.index % count[u.tenant], s, e)
                     for u, r, s, e, _ in eng.dram_log])
    iv = interval_columns(labels, [t.units for t in tenants], pe, dram)
    done = sorted((r.model, sim.tindex[r.id], r) for r in sim.requests if r.done)
    recs = [RequestRecord(labels[t], tenants[t].model, k, r.arrival_s, r.start_s, r.finish_s,
                          tenants[t].batch) for t, k, r in done]
    return SimResult(iv, tuple(recs), eng.last_end, eng.pe_busy_s, eng.dram_busy_s,
                     tuple(sim.notes), sim.policy.name, labels)


def _columns(rows: list[tuple[int, int, int, float, float]]) -> tuple[np.ndarray, ...]:
    """``(tenant, request, unit, start, end)`` rows as five arrays."""
    if not rows:
        return (*(np.zeros(0, np.int64) for _ in range(3)), np.zeros(0), np.zeros(0))
    t, r, u, s, e = zip(*rows)
    return (np.array(t, np.int64), np.array(r, np.int64), np.array(u, np.int64),
            np.array(s, np.float64), np.array(e, np.float64))


def run_streams(models: list[str | tuple[str, list[LayerCost]]], npu: NPU,
                batch: int | list[int] = 1, scheduler: str = "layerweaver", requests: int = 10,
                window_s: float | None = None, seed: int = 0, cost_model: str = "systolic-ws",
                **scheduler_opts: object) -> SimResult:
    """Run one closed-loop stream per model on ``npu``, ordered by ``scheduler``.

    Parameters
    ----------
    models : zoo names or ONNX paths (costed with ``cost_model`` at the stream's batch), or
        ``(label, [LayerCost, ...])`` pairs used as given (their batch is only recorded).
    npu : the NPU; its ``weight_buffer`` and ``dram_bw`` drive the engine.
    batch : one batch size for all streams, or one per stream.
    scheduler : a name from ``npuweave.schedule.schedulers()``; ``scheduler_opts`` go to it.
    requests : requests per stream (ignored when ``window_s`` is given).
    window_s : issue requests only before this time instead of counting them.
    seed : seed of randomized policies (``aimt``, ``random``).

    Examples
    --------
    >>> from npuweave.cost import toy_models
    >>> from npuweave.hardware import toy_npu
    >>> npu = toy_npu()  # 1 PE at 1 Hz, 10 B/s of DRAM, a 100-byte weight buffer
    >>> r = run_streams(toy_models(), npu, requests=1)  # a compute- and a memory-bound model
    >>> r.makespan_s < run_streams(toy_models(), npu, scheduler="sequential", requests=1).makespan_s
    True
    """
    tenants = costed_tenants(models, npu, batch, cost_model)
    return run_tenants(tenants, npu.weight_buffer, npu.dram_bw, scheduler, requests, window_s,
                       seed, **scheduler_opts)  # type: ignore[arg-type]


def costed_tenants(models: Sequence[ModelSpec], npu: NPU, batch: int | Sequence[int],
                   cost_model: str = "systolic-ws") -> list[Tenant]:
    """``tenants_for``, kept per (models, NPU, batch, cost model) when every model is named
    (a zoo name or an ONNX path, whose layers ``load_layers`` keeps per name already): a
    sweep or a comparison runs the same streams many times, and costing them takes longer
    than a compiled closed loop. Tenants are frozen, so the runs share them."""
    if not all(isinstance(m, str) for m in models):
        return tenants_for(models, npu, batch, cost_model)
    from npuweave.cost.registry import get_cost_model

    sizes = batch if isinstance(batch, int) else tuple(batch)
    return list(_named_tenants(tuple(models), npu, sizes, cost_model,
                               get_cost_model(cost_model)))


@lru_cache(maxsize=256)
def _named_tenants(models: tuple[str, ...], npu: NPU, batch: int | tuple[int, ...],
                   cost_model: str, fn: object) -> tuple[Tenant, ...]:
    # ``fn``: the cost model's function, so a model registered anew under the same name
    # is costed anew
    sizes = batch if isinstance(batch, int) else list(batch)
    return tuple(tenants_for(list(models), npu, sizes, cost_model))


def standalone_time(model: ModelSpec, npu: NPU, batch: int = 1,
                    cost_model: str = "systolic-ws", steady: bool = True) -> float:
    """Seconds one request of ``model`` takes alone on the same engine.

    ``steady=True`` (the default, what closed-loop metrics need) gives the steady-state time
    per request of the model running alone back to back: weights are static, so the engine
    prefetches the next request's weights while the current one computes, and a request in a
    stream alone finishes that much sooner than a cold one. Normalizing by it makes a model
    alone score NTT = 1 and STP = 1. ``steady=False`` gives one cold request (empty buffer).

    Examples
    --------
    >>> from npuweave.cost import LayerCost
    >>> from npuweave.hardware import toy_npu
    >>> npu = toy_npu()  # 1 PE at 1 Hz, 10 B/s of DRAM, a 100-byte weight buffer
    >>> m = ("m", [LayerCost(compute_s=2.0, weight_bytes=10)] * 2)
    >>> standalone_time(m, npu, steady=False)  # fetch 1 s, then compute 2 + 2 s
    5.0
    >>> standalone_time(m, npu)  # later requests' fetches hide behind compute
    4.0
    """
    tenant = tenants_for([model], npu, batch, cost_model)[0]
    return alone_time(tenant, npu.weight_buffer, npu.dram_bw, steady)


def alone_time(tenant: Tenant, buffer_bytes: int, dram_bw: float, steady: bool = True) -> float:
    """``standalone_time`` of an already-costed tenant (see there for ``steady``)."""
    if not steady:
        return run_tenants([tenant], buffer_bytes, dram_bw, "sequential", 1).makespan_s
    # Three requests: the first is cold; the distance between the first and the third finish
    # spans two steady-state periods.
    result = run_tenants([tenant], buffer_bytes, dram_bw, "sequential", 3)
    finishes = sorted(r.finish_s for r in result.requests)
    return (finishes[2] - finishes[0]) / 2
