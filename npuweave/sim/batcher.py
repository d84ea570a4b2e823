"""Triton-style dynamic batching, shared by the serving simulator and the capacity searches.

Triton's dynamic batcher keeps one queue per model and hands the model a batch when the model
can take one: it takes up to ``max_batch`` queued requests at once, and while fewer are queued
it waits for more, at most ``window_s`` after the oldest one arrived. ``Batcher`` implements
that rule over a fixed list of arrivals, with "the model can take one" read as "one of the
model's ``slots`` is free":

* ``slots=1`` (per-model FIFO): one batch of a model in service at a time, Triton with one
  model instance (the thesis's per-model request queue);
* ``slots=k``: up to ``k`` batches of one model in service at once, each its own candidate
  (Layerweaver+'s ``grouping="per-request"``).

A slot is freed by its driver once the batch's last unit has been *dispatched* (chapter IV's
CheckEnd: the next batch of the model may fetch its weights while the previous one computes
its last layers). Requests queued while every slot is busy are merged into the next batch,
which is what ``npuweave.sim.serving.batch_arrivals`` (batches closed on the arrival times
alone) did not do.

``Batcher`` is pure bookkeeping (no clock of its own): a driver calls ``admit(now)`` at every
decision and at the times ``wake(now)`` names, and ``free`` when a batch's last unit went out.
The drivers are ``npuweave.sim.lwserve`` (the predictor alone) and
``npuweave.sim.batch_serve.BatchingSimulator`` (the event-driven engine); a property test
checks that they serve identically.

Examples
--------
>>> b = Batcher([0.0, 0.001, 0.0015, 0.004], [0, 0, 0, 0], 1, window_s=0.002, max_batch=4)
>>> b.admit(0.0015), b.wake(0.0015)     # the oldest waits until 0.002 for company
([], 0.002)
>>> b.admit(0.002)                       # window over: the three that arrived go together
[(0, 0, [0, 1, 2])]
>>> b.admit(0.004), b.wake(0.004)        # slot busy: request 3 waits for it
([], None)
>>> b.free(0, 0)
>>> b.admit(0.005), b.wake(0.005)        # free, but request 3's window runs to 0.006
([], 0.006)
>>> b.admit(0.007)
[(0, 0, [3])]
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from npuweave.errors import ConfigError
from npuweave.fileio.values import MAX_BATCH as VALUE_MAX_BATCH
from npuweave.schedule.layerweaver_plus import check_grouping

#: Per-request values: a sequence or a 1-d array.
Column = Sequence[float] | Sequence[int] | np.ndarray
#: How requests of one model enter a policy's candidate group (``inflight_slots``).
#: A batch formed by ``Batcher.admit``: model, slot, arrival indices (oldest first).
Formed = tuple[int, int, list[int]]


#: The largest batch a run may form. Costs are built for every batch size up to the limit
#: (and ``serve`` makes one tenant per model, slot and size), so the limit bounds the work
#: before it starts; Triton's own batch limits are in the tens to hundreds.
MAX_BATCH = VALUE_MAX_BATCH


def check_max_batch(max_batch: object, option: str = "--max-batch") -> int:
    """``max_batch`` if it is an integer from 1 to ``MAX_BATCH``; a ConfigError naming
    ``option`` otherwise.

    Examples
    --------
    >>> check_max_batch(16)
    16
    """
    if isinstance(max_batch, bool) or not isinstance(max_batch, int | np.integer) \
            or not 1 <= max_batch <= MAX_BATCH:
        raise ConfigError(f"{option}: {max_batch!r}; give a batch limit from 1 to {MAX_BATCH}")
    return int(max_batch)


class Batcher:
    """Per-model request queues with Triton's batching rule over ``slots`` per model."""

    __slots__ = ("times", "models", "window", "cap", "next", "pending", "busy", "dirty",
                 "deadlines")

    def __init__(self, time_s: Column, model: Column, n_models: int,
                 window_s: float = 0.0, max_batch: int = 1, slots: int = 1,
                 deadline_abs_s: Column | None = None) -> None:
        check_max_batch(max_batch, "max batch")
        if not (math.isfinite(window_s) and window_s >= 0):
            raise ConfigError(f"batching window {window_s!r} s: give a finite value >= 0")
        if isinstance(slots, bool) or int(slots) != slots or slots < 1:
            raise ConfigError(f"max in flight {slots!r}: give an integer >= 1 (batches of one "
                              "model in service at once)")
        self.times = [float(x) for x in time_s]
        self.models = [int(x) for x in model]
        self.window, self.cap = float(window_s), int(max_batch)
        self.next = 0
        self.pending: list[deque[int]] = [deque() for _ in range(n_models)]
        self.busy = [[False] * int(slots) for _ in range(n_models)]
        self.dirty = False  # a queue may be able to form a batch without a new arrival
        self.deadlines = None if deadline_abs_s is None else [float(x) for x in deadline_abs_s]

    def admit(self, now: float) -> list[Formed]:
        """Take the arrivals up to ``now``; return the batches that form at ``now``."""
        times, nxt = self.times, self.next
        if not self.dirty and (nxt == len(times) or times[nxt] > now):
            return []  # nothing arrived, nothing freed, no queue waiting for its window
        models, n = self.models, len(times)
        while nxt < n and times[nxt] <= now:
            self.pending[models[nxt]].append(nxt)
            nxt += 1
        self.next = nxt
        self.dirty = False
        out: list[Formed] = []
        w, cap = self.window, self.cap
        for m, q in enumerate(self.pending):
            busy = self.busy[m]
            while q and not all(busy):
                if len(q) < cap and times[q[0]] + w > now:
                    self.dirty = True  # waits for its window or for its batch to fill
                    break
                s = busy.index(False)
                busy[s] = True
                out.append((m, s, [q.popleft() for _ in range(min(cap, len(q)))]))
        return out

    def free(self, m: int, s: int) -> None:
        """Slot ``s`` of model ``m`` can take a new batch (its last unit was dispatched)."""
        self.busy[m][s] = False
        self.dirty = True

    def wake(self, now: float) -> float | None:
        """The next time ``admit`` may form a batch if no slot frees before: the next
        arrival, or the end of a window of a model with a free slot (``None``: never)."""
        out = self.times[self.next] if self.next < len(self.times) else math.inf
        w, cap = self.window, self.cap
        for m, q in enumerate(self.pending):
            if q and not all(self.busy[m]):
                out = min(out, now if len(q) >= cap else max(now, self.times[q[0]] + w))
        return None if out == math.inf else out

    def due(self, m: int, alone_s: Sequence[float]) -> float:
        """When model ``m``'s batch in service must be done for its queue to make it: the
        earliest deadline among the requests that would form the next batch, less that
        batch's standalone time ``alone_s[size - 1]`` (``inf`` when nothing is queued).

        A layer-wise policy that sees only the batch in service would let it run late while
        requests queue behind it; ``LayerweaverPlus(inherit=True)`` gives the batch this
        deadline when it is earlier than its own (deadline inheritance).

        Examples
        --------
        >>> b = Batcher([0.0, 0.1, 0.2], [0, 0, 0], 1, 0.0, 4, deadline_abs_s=[5.0, 5.5, 6.0])
        >>> b.admit(0.0), b.admit(0.2), b.due(0, [1.0, 1.5, 2.0, 2.5])  # 5.5 - 1.5
        ([(0, 0, [0])], [], 4.0)
        """
        q = self.pending[m]
        if not q or self.deadlines is None:
            return math.inf
        n = min(len(q), self.cap)
        dl = self.deadlines
        first = min(dl[q[i]] for i in range(n)) if n > 1 else dl[q[0]]
        return first - alone_s[n - 1]

    @property
    def done(self) -> bool:
        """Every arrival has been handed out in a batch."""
        return self.next == len(self.times) and not any(self.pending)


def inflight_slots(policy: object, grouping: str | None = None,
                   max_inflight: int | None = None) -> int:
    """Batches of one model in service at once: 1 for ``per-model-fifo``, the cap for
    ``per-request`` (``grouping`` and ``max_inflight`` default to the policy's attributes).

    Examples
    --------
    >>> from npuweave.schedule.layerweaver_plus import LayerweaverPlus
    >>> inflight_slots(LayerweaverPlus(grouping="per-request", max_inflight=3))
    3
    >>> inflight_slots(LayerweaverPlus(grouping="per-request"), "per-model-fifo")
    1
    """
    g = getattr(policy, "grouping", "per-model-fifo") if grouping is None else grouping
    cap = getattr(policy, "max_inflight", 4) if max_inflight is None else max_inflight
    cap = check_grouping(g, cap)
    return 1 if g == "per-model-fifo" else cap
