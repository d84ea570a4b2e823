"""Running a PREMA workload on the serving engine: tasks as tenants, cold isolated times.

Each task of a workload (``prema_workload.PremaTask``) becomes its own tenant: its layers
under the ``prema`` cost model at the task's batch, weight-tiled for the weight buffer
(``schedule.tiling``). Preemption points (the reading's ``preempt_at``):

* ``layer``: the engine's unit boundaries (layers, or weight tiles of layers too large for the
  weight buffer);
* ``tile``: each unit is further cut into equal chunks of at most ``CHUNK_S`` of compute, a
  stand-in for Algorithm 1's GEMM_OP boundaries (one GEMM_OP is ~3.5 us on ``prema``; cutting
  every op would multiply the engine's work by ~100 for a preemption delay shorter by at most
  ``CHUNK_S``).

The live state a CHECKPOINT stores after a chunk is the part of the layer's output computed so
far (section IV-B: the output activations in UBUF and ACCQ), capped at the activation buffer;
after a whole layer it is the layer's output. ``ckpt_cost="zero"`` stores nothing;
``"paper"`` stores a fixed size whose store plus restore take the paper's mean 12 us.
The cold isolated time of a task is the engine's time for that task alone on an idle NPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from npuweave.cost import profile
from npuweave.experiments.prema_workload import PremaTask
from npuweave.hardware.npu import NPU
from npuweave.schedule.base import Tenant
from npuweave.schedule.prema.readings import PAPER_CKPT_S
from npuweave.schedule.registry import get_scheduler
from npuweave.schedule.tiling import tile
from npuweave.sim.serve import Simulator
from npuweave.sim.units import Footprint

CHUNK_S = 100e-6
"""Longest compute between two preemption points with ``preempt_at="tile"``."""


def task_key(t: PremaTask) -> tuple[str, int, int | None, int | None]:
    return (t.name, t.batch, t.in_len, t.out_len)


@cache
def task_tenant(key: tuple[str, int, int | None, int | None], npu: NPU, preempt_at: str,
                ckpt: str) -> tuple[Tenant, Footprint]:
    """The tenant and activation footprint of a task (cached by task type and lengths)."""
    from npuweave.cost.predictor import task_layers

    name, batch, in_len, out_len = key
    layers = task_layers(name, in_len, None if name == "rnn-sa" else out_len)
    costs = profile(list(layers), npu, batch=batch, model="prema")
    min_tile = npu.pe_rows * npu.pe_cols * npu.element_bytes
    names: list[str] = []
    comp: list[float] = []
    wbytes: list[int] = []
    live: list[int] = []
    spill: list[int] = []
    for layer, cost in zip(layers, costs):
        out_bytes = layer.out_elems * batch * npu.element_bytes
        pieces = tile(layer.name, cost.compute_s, cost.weight_bytes, npu.weight_buffer,
                      min_tile)
        # per chunk: (piece name, its compute, its weight bytes, chunk index, chunk count)
        chunks = [(n, c, b, k, cuts) for n, c, b in pieces
                  for cuts in (_cuts(c, preempt_at),) for k in range(cuts)]
        total = sum(c / cuts for _, c, _, _, cuts in chunks) or 1.0
        done = 0.0
        for j, (n, c, b, k, cuts) in enumerate(chunks):
            names.append(f"{n}#c{k + 1}" if cuts > 1 else n)
            comp.append(c / cuts)
            wbytes.append(b if k == 0 else 0)
            done += c / cuts
            last = j == len(chunks) - 1
            frac = 1.0 if last else done / total
            live.append(_live(ckpt, frac, out_bytes, npu))
            spill.append(cost.spill_bytes if last else 0)
    tenant = Tenant(name, tuple(names), tuple(comp), tuple(wbytes), name, batch)
    return tenant, Footprint(tuple(live), tuple(spill))


def _live(ckpt: str, frac: float, out_bytes: int, npu: NPU) -> int:
    """Checkpoint bytes after a fraction ``frac`` of a layer (see the module docstring)."""
    if ckpt == "zero":
        return 0
    if ckpt == "paper":  # a flat 12 us: 6 us each way, DRAM latency included
        return max(0, int((PAPER_CKPT_S / 2 - npu.dram_latency_s) * npu.dram_bw))
    return min(math.ceil(frac * out_bytes), npu.act_buffer)


def _cuts(compute_s: float, preempt_at: str) -> int:
    return max(1, math.ceil(compute_s / CHUNK_S - 1e-9)) if preempt_at == "tile" else 1


@dataclass(frozen=True, slots=True)
class TaskRun:
    """Per-task outcome of one simulated workload (arrays indexed by task id)."""

    dispatch: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    isolated: np.ndarray
    priority: np.ndarray
    names: tuple[str, ...]
    preemptions: int
    kills: int
    drains: int
    overhead_s: float
    wasted_s: float
    effect_s: tuple[float, ...] = ()  # per preemption: effective minus decided (seconds)


def _simulator(tenants: Sequence[Tenant], feet: Sequence[Footprint], npu: NPU, policy: object,
               arrivals: Sequence[tuple[float, int, int, float]],
               isolated: Sequence[float] = ()) -> Simulator:
    sim = Simulator(tenants, npu.weight_buffer, npu.dram_bw, policy, arrivals=arrivals,
                    footprints=feet, traffic=True, latency_s=npu.dram_latency_s,
                    isolated_s=isolated)
    # Work-around (core 95637c3): ``Engine`` takes ``loop or EventLoop()`` and an empty
    # EventLoop is falsy (``__len__``), so the engine runs a loop of its own and arrival and
    # wake-up events scheduled on the simulator's loop never fire. Share the engine's loop.
    if sim.engine.loop is not sim.loop:
        sim.engine.loop.max_events = sim.loop.max_events
        sim.engine.loop.budget_hint = sim.loop.budget_hint
        sim.loop = sim.engine.loop
    return sim


@cache
def cold_isolated(key: tuple[str, int, int | None, int | None], npu: NPU, preempt_at: str,
                  ckpt: str) -> float:
    """The engine's time for the task alone on an idle NPU, from dispatch to finish."""
    tenant, foot = task_tenant(key, npu, preempt_at, ckpt)
    sim = _simulator([tenant], [foot], npu, get_scheduler("np-fcfs"), [(0.0, 0, 1, math.inf)])
    sim.run()
    return float(sim.requests[0].finish_s)


def simulate(tasks: Sequence[PremaTask], npu: NPU, policy: str, mechanism: str = "checkpoint",
             reading: str = "paper", oracle: bool = False,
             options: dict[str, object] | None = None) -> TaskRun:
    """Run one workload under one policy; every task is its own tenant."""
    tenants, feet, iso = _built(tasks, npu, reading, options)
    est = iso if oracle else [t.est_s for t in tasks]
    groups = _groups(tasks)
    opts: dict[str, object] = {"estimates_s": tuple(est), "reading": reading,
                               "options": options, "groups": groups}
    if policy.startswith("p-"):
        opts["mechanism"] = mechanism
    pol = get_scheduler(policy, **opts)
    order = sorted(range(len(tasks)), key=lambda i: (tasks[i].dispatch_s, i))
    arrivals = [(tasks[i].dispatch_s, i, (1, 3, 9)[tasks[i].level], math.inf) for i in order]
    sim = _simulator(tenants, feet, npu, pol, arrivals, iso)
    sim.run()
    by_tenant = {r.model: r for r in sim.requests}
    reqs = [by_tenant[i] for i in range(len(tasks))]
    return TaskRun(np.array([r.arrival_s for r in reqs]), np.array([r.start_s for r in reqs]),
                   np.array([r.finish_s for r in reqs]),
                   np.array(iso), np.array([r.priority for r in reqs], dtype=float),
                   tuple(t.name for t in tasks), sum(r.preemptions for r in reqs),
                   sum(r.restarts for r in reqs), int(getattr(pol, "drains", 0)),
                   sum(r.overhead_s for r in reqs), sum(r.wasted_s for r in reqs),
                   tuple(e - d for _, d, e in sim.effects))


def _built(tasks: Sequence[PremaTask], npu: NPU, reading: str,
           options: dict[str, object] | None) -> tuple[list[Tenant], list[Footprint],
                                                       list[float]]:
    """Per task of a workload: its tenant, footprint and cold isolated time (cached)."""
    from npuweave.schedule.prema import reading as get_reading

    rd = get_reading(reading, **(options or {}))
    keys = [task_key(t) for t in tasks]
    built = [task_tenant(k, npu, rd.preempt_at, rd.ckpt_cost) for k in keys]
    iso = [cold_isolated(k, npu, rd.preempt_at, rd.ckpt_cost) for k in keys]
    return [b[0] for b in built], [b[1] for b in built], iso


def warm(sets: Sequence[Sequence[PremaTask]], npu: NPU, reading: str = "paper",
         options: dict[str, object] | None = None) -> None:
    """Fill the caches ``simulate`` reads for these workloads (tenants, cold isolated times,
    the engine's unit tables), so that pool workers forked afterwards share them instead of
    each building its own."""
    fcfs = get_scheduler("np-fcfs")
    for tasks in sets:
        tenants, feet, iso = _built(tasks, npu, reading, options)
        _simulator(tenants, feet, npu, fcfs, (), iso)


def _groups(tasks: Sequence[PremaTask]) -> tuple[int, ...]:
    """RRB's model type of each tenant: the index of its task type in the mix."""
    from npuweave.workload.seqlen import MIX

    names = list(MIX)
    return tuple(names.index(t.name) for t in tasks)
