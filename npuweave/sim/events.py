"""A tiny discrete-event loop: a heap of ``[time, priority, seq, callback, args]`` entries.

``priority`` orders events at the same instant (lower first) and ``seq`` keeps insertion order
among equals, so runs are deterministic. ``schedule`` returns the entry as a ``Handle``;
``handle.cancel()`` removes the event lazily (it stays in the heap and is skipped when it comes
up). A loop may have one ``inner`` participant that keeps its own timers instead of heap
entries (the NPU engine, ``npuweave.sim.engine``): ``run`` then hands over to its ``drive``,
which merges those timers with the heap, and ``peek`` asks it too. ``max_events`` caps a run: a model whose events never end (an unbounded arrival window)
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
import itertools
import math
from collections.abc import Callable
from typing import Any, Protocol

from npuweave.errors import NpuweaveError


class EventBudgetError(NpuweaveError):
    """A run fired more events than its budget allows."""


def cancelled(*args: Any) -> None:
    """Stands in for the callback of a cancelled event."""




class Inner(Protocol):
    """A participant with its own timers (the NPU engine): ``drive(until)`` runs the loop."""

    def next_event(self) -> tuple[float, int]: ...

    def drive(self, until: float | None) -> None: ...


class Handle(list):
    """A scheduled event: ``[time, priority, seq, callback, args]``; ``cancel()`` drops it."""

    __slots__ = ()

    @property
    def time(self) -> float:
        return float(self[0])

    @property
    def cancelled(self) -> bool:
        return self[3] is cancelled

    def cancel(self) -> None:
        """The event will not fire (a no-op when it already fired or was cancelled)."""
        self[3] = cancelled
        self[4] = ()


class EventLoop:
    """Events fire in time order; ``run(until)`` stops before the first event past ``until``.

    ``max_events`` (None: no cap) bounds the events one ``run`` may fire; ``budget_hint`` is
    appended to the error to say how to raise it.
    """

    __slots__ = ("now", "heap", "counter", "fired", "max_events", "budget_hint", "inner")

    def __init__(self, max_events: int | None = None, budget_hint: str = "") -> None:
        self.now = 0.0
        # The heap holds Handles and plain lists; ``counter`` numbers every entry.
        self.heap: list[list[Any]] = []
        self.counter = itertools.count(1)
        self.fired = 0
        self.max_events = max_events
        self.budget_hint = budget_hint
        self.inner: Inner | None = None

    def schedule(self, time: float, fn: Callable[..., Any], *args: Any, prio: int = 1) -> Handle:
        """Call ``fn(*args)`` at ``time`` (never earlier than ``now``); return its handle."""
        if time < self.now:
            raise ValueError(f"cannot schedule at {time!r} before now={self.now!r}")
        entry = Handle((time, prio, next(self.counter), fn, args))
        heapq.heappush(self.heap, entry)
        return entry

    def post(self, time: float, fn: Callable[..., Any], *args: Any, prio: int = 1) -> None:
        """``schedule`` without a handle: the engine's hot path (a plain list is about 0.4 us
        cheaper to build than a ``Handle``, and these events are never cancelled)."""
        if time < self.now:
            raise ValueError(f"cannot schedule at {time!r} before now={self.now!r}")
        heapq.heappush(self.heap, [time, prio, next(self.counter), fn, args])

    def peek(self) -> float:
        """Time of the next event that will fire (``inf`` when none is left)."""
        heap = self.heap
        while heap and heap[0][3] is cancelled:
            heapq.heappop(heap)
        first = float(heap[0][0]) if heap else float("inf")
        return first if self.inner is None else min(first, self.inner.next_event()[0])

    def step(self) -> bool:
        """Fire the next event (cancelled ones are skipped); False when none is left. (A
        loop with an ``inner`` participant runs with ``run`` only.)"""
        heap = self.heap
        while heap:
            time, _, _, fn, args = heapq.heappop(heap)
            if fn is cancelled:
                continue
            self.now = time
            self.fired += 1
            fn(*args)
            return True
        return False

    def run(self, until: float | None = None) -> None:
        """Fire events until none is left (or the next one lies after ``until``)."""
        if self.inner is not None:
            self.inner.drive(until)
            return
        heap = self.heap
        pop = heapq.heappop
        cap = self.max_events if self.max_events is not None else math.inf
        fired = self.fired
        try:
            while heap:  # ``step`` inlined: this loop fires every event of a run
                if until is not None and heap[0][0] > until:
                    self.now = until
                    return
                if fired >= cap:
                    raise EventBudgetError(
                        f"the simulation reached its budget of {cap} events at t = "
                        f"{self.now:.6g} s and was stopped{self.budget_hint}")
                time, _, _, fn, args = pop(heap)
                if fn is cancelled:
                    continue
                self.now = time
                fired += 1
                fn(*args)
        finally:
            self.fired = fired

    def __len__(self) -> int:
        return sum(1 for e in self.heap if e[3] is not cancelled)
