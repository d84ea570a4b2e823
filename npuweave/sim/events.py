"""A tiny discrete-event loop: a heap of ``[time, priority, seq, callback, args]`` entries.

``priority`` orders events at the same instant (lower first) and ``seq`` keeps insertion order
among equals, so runs are deterministic. ``schedule`` returns the entry as a ``Handle``;
``handle.cancel()`` removes the event lazily (it stays in the heap and is skipped when it comes
up). ``max_events`` caps a run: a model whose events never end (an unbounded arrival window)
stops with ``EventBudgetError`` instead of running away with memory. Nothing here is random;
scenarios that need randomness take an explicit seed. Every simulator in the package (the NPU
engine, the serving simulator, the Gemini replay) runs on this one loop.

Examples
--------
>>> loop, log = EventLoop(), []
>>> _ = loop.schedule(2.0, log.append, "b")
>>> _ = loop.schedule(1.0, log.append, "a")
>>> h = loop.schedule(1.5, log.append, "never")
>>> h.cancel()
>>> loop.run()
>>> log, loop.now
(['a', 'b'], 2.0)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from npuweave.errors import NpuweaveError


class EventBudgetError(NpuweaveError):
    """A run fired more events than its budget allows."""


def _cancelled(*args: Any) -> None:
    """Stands in for the callback of a cancelled event."""


class Handle(list):  # type: ignore[type-arg]
    """A scheduled event: ``[time, priority, seq, callback, args]``; ``cancel()`` drops it."""

    __slots__ = ()

    @property
    def time(self) -> float:
        return float(self[0])

    @property
    def cancelled(self) -> bool:
        return self[3] is _cancelled

    def cancel(self) -> None:
        """The event will not fire (a no-op when it already fired or was cancelled)."""
        self[3] = _cancelled
        self[4] = ()


class EventLoop:
    """Events fire in time order; ``run(until)`` stops before the first event past ``until``.

    ``max_events`` (None: no cap) bounds the events one ``run`` may fire; ``budget_hint`` is
    appended to the error to say how to raise it.
    """

    __slots__ = ("now", "_heap", "_seq", "fired", "max_events", "budget_hint")

    def __init__(self, max_events: int | None = None, budget_hint: str = "") -> None:
        self.now = 0.0
        self._heap: list[Handle] = []
        self._seq = 0
        self.fired = 0
        self.max_events = max_events
        self.budget_hint = budget_hint

    def schedule(self, time: float, fn: Callable[..., Any], *args: Any, prio: int = 1) -> Handle:
        """Call ``fn(*args)`` at ``time`` (never earlier than ``now``); return its handle."""
        if time < self.now:
            raise ValueError(f"cannot schedule at {time!r} before now={self.now!r}")
        self._seq += 1
        entry = Handle((time, prio, self._seq, fn, args))
        heapq.heappush(self._heap, entry)
        return entry

    def post(self, time: float, fn: Callable[..., Any], *args: Any, prio: int = 1) -> None:
        """``schedule`` without a handle: the engine's hot path (a plain list is about 0.4 us
        cheaper to build than a ``Handle``, and these events are never cancelled)."""
        if time < self.now:
            raise ValueError(f"cannot schedule at {time!r} before now={self.now!r}")
        self._seq += 1
        heapq.heappush(self._heap, [time, prio, self._seq, fn, args])  # type: ignore[arg-type]

    def step(self) -> bool:
        """Fire the next event (cancelled ones are skipped); False when none is left."""
        heap = self._heap
        while heap:
            time, _, _, fn, args = heapq.heappop(heap)
            if fn is _cancelled:
                continue
            self.now = time
            self.fired += 1
            fn(*args)
            return True
        return False

    def run(self, until: float | None = None) -> None:
        """Fire events until none is left (or the next one lies after ``until``)."""
        heap = self._heap
        cap = self.max_events
        while heap:
            if until is not None and heap[0][0] > until:
                self.now = until
                return
            if cap is not None and self.fired >= cap:
                raise EventBudgetError(
                    f"the simulation reached its budget of {cap} events at t = {self.now:.6g} s "
                    f"and was stopped{self.budget_hint}")
            self.step()

    def __len__(self) -> int:
        return sum(1 for e in self._heap if e[3] is not _cancelled)
