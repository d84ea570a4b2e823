"""The serving simulator with Triton-style dynamic batching (``npuweave.sim.batcher``).

``BatchingSimulator`` is a ``Simulator`` whose arrivals are single requests of a *model*; a
``Batcher`` turns them into batches, and each batch enters the simulator as one request of the
tenant that serves that model at that batch size in a free slot. Tenants are laid out by
``slot_tenants`` as ``(model, slot, batch size)``, batch sizes fastest.

When batches form: at the scheduler's decision points, so a batch takes every request that
arrived before the NPU can start on it, as Triton's batcher does when the model instance frees:

* whenever the DMA engine asks for work (the engine's ``next``), after freeing the slots of
  batches whose last unit went out (chapter IV's CheckEnd: the next batch of a model may fetch
  while the previous one computes);
* at an arrival or at the end of a batching window, if the DMA engine is idle (layer-wise
  policies) or always (task-level policies, which the simulator consults at every arrival);
* a killed request that is dropped frees its slot too.

With ``traffic=False`` and a layer-wise policy this serves exactly as the predictor-only path
``npuweave.sim.lwserve.serve_layerwise`` (a hypothesis test checks the finish times).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from npuweave.schedule.base import Tenant
from npuweave.sim.batcher import Batcher, Column
from npuweave.sim.requests import Request, State
from npuweave.sim.serve import WAKE, Simulator

Group = tuple[float, int, int, list[int]]  # formed at, model, batch size, member rows


def slot_tenants(n_models: int, slots: int, max_batch: int) -> list[list[list[int]]]:
    """``out[model][slot][batch - 1]``: the simulator tenant of that batch.

    Examples
    --------
    >>> slot_tenants(2, 2, 3)[1][0]
    [6, 7, 8]
    """
    return [[[(m * slots + s) * max_batch + b for b in range(max_batch)] for s in range(slots)]
            for m in range(n_models)]


class BatchingSimulator(Simulator):
    """A ``Simulator`` fed by a ``Batcher``: ``time_s``/``model``/``priority``/
    ``deadline_abs_s`` describe single requests; ``tenants`` follow ``slot_tenants``.

    After ``run``, ``groups[i]`` lists the arrivals served by ``requests[i]``.

    Examples
    --------
    Request 0 alone: fetches 0-1 and 1-2, computes 1-3 and 3-5. Its last unit went out at 1,
    so at the next decision (2) the model is free and requests 1 and 2 go as a batch of two:
    fetches 2-3 and 3-4, computes 5-8 and 8-11.

    >>> from npuweave.schedule.registry import get_scheduler
    >>> a = Tenant("a", ("x", "y"), (2.0, 2.0), (10, 10))
    >>> a2 = Tenant("a", ("x", "y"), (3.0, 3.0), (10, 10), batch=2)
    >>> sim = BatchingSimulator([a, a2], 100, 10.0, get_scheduler("layerweaver"),
    ...                         Batcher([0.0, 0.5, 1.5], [0, 0, 0], 1, 0.0, 2),
    ...                         [0.0, 0.5, 1.5], [0, 0, 0])
    >>> sim.run()
    >>> [g[3] for g in sim.groups], [r.finish_s for r in sim.requests]
    ([[0], [1, 2]], [5.0, 11.0])
    """

    def __init__(self, tenants: Sequence[Tenant], buffer_bytes: int, dram_bw: float,
                 policy: Any, batcher: Batcher, time_s: Column, model: Column,
                 priority: Column | None = None, deadline_abs_s: Column | None = None,
                 **kw: Any) -> None:
        n = len(time_s)
        self.batcher = batcher
        self.times = np.asarray(time_s, float)
        self.prio = np.ones(n, np.int64) if priority is None else np.asarray(priority)
        self.dl = np.full(n, np.inf) if deadline_abs_s is None else np.asarray(
            deadline_abs_s, float)
        n_models, slots = len(batcher.busy), len(batcher.busy[0]) if batcher.busy else 1
        self.slot = slot_tenants(n_models, slots, batcher.cap)
        if len(tenants) != n_models * slots * batcher.cap:
            raise ValueError(f"{len(tenants)} tenants; slot_tenants needs "
                             f"{n_models * slots * batcher.cap}")
        rows = [(float(t), int(m), 1, 0.0) for t, m in zip(time_s, model)]
        super().__init__(tenants, buffer_bytes, dram_bw, policy, arrivals=rows, **kw)
        self.groups: list[Group] = []
        self.inservice: dict[tuple[int, int], Request] = {}
        self.wakes: set[float] = set()
        self.inherit = bool(getattr(policy, "inherit", False))
        self.own: dict[int, float] = {}  # request id -> its own deadline (inheritance)
        # approx standalone time of a batch per model and size (its tenant's suffix sum)
        self.alone = [[self.view.remaining[t][0] for t in self.slot[m][0]]
                      for m in range(n_models)]
        # the engine asks the policy shape's method directly once ``pending`` is empty: every
        # such ask is a decision point where batches may form
        self._shape_next = self.engine.next_job
        self.engine.next_job = self._decision_point

    # the simulator's arrival events only tell the batcher that time has come
    def _arrival_event(self) -> None:
        self.next_arrival += 1
        if not self.layer or self.engine.dma_idle:
            self._free(self.loop.now)
            self._admit(self.loop.now)
        self._schedule_arrival()

    def next(self, now: float) -> Any:
        if self.pending:
            return self.pending.popleft()
        return self._decision_point(now)

    def _decision_point(self, now: float) -> Any:
        """The DMA engine asks for work with nothing pending: free the slots of batches whose
        last unit went out, form batches, then ask the policy."""
        self._free(now)
        self._admit(now)
        if self.inherit:
            self._inherit()
        return self._shape_next(now)

    def _inherit(self) -> None:
        """Each batch in service takes the deadline of its model's queue when earlier
        (``Batcher.due``)."""
        alone, due = self.alone, self.batcher.due
        for (m, _), req in self.inservice.items():
            d = due(m, alone[m])
            own = self.own[req.id]
            req.deadline_s = d if d < own else own

    def _free(self, now: float) -> None:
        done = [k for k, r in self.inservice.items() if r.dispatched == r.units
                or r.state in (State.DONE, State.KILLED)]
        for k in done:
            del self.inservice[k]
            self.batcher.free(*k)

    def _admit(self, now: float) -> None:
        for m, s, rows in self.batcher.admit(now):
            t = self.slot[m][s][len(rows) - 1]
            req = self._arrive(t, now, int(self.prio[rows].max()), float(self.dl[rows].min()),
                               arrival_s=float(self.times[rows[0]]))
            self.inservice[m, s] = req
            self.own[req.id] = req.deadline_s
            self.groups.append((now, m, len(rows), rows))
            self._start_wakeups(now)  # periodic policies: their ticks stop when idle
        wake = self.batcher.wake(now)
        if wake is not None and wake > now and wake not in self.wakes:
            self.wakes.add(wake)  # a window may end then (or an arrival comes)
            self.loop.schedule(wake, self._window_end, wake, prio=WAKE)

    def _window_end(self, at: float) -> None:
        self.wakes.discard(at)
        if not self.layer or self.engine.dma_idle:
            self._free(self.loop.now)
            self._admit(self.loop.now)
