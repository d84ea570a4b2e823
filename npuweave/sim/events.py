"""A tiny discrete-event loop: a heap of ``(time, priority, seq, callback, args)``.

``priority`` orders events at the same instant (lower first) and ``seq`` keeps insertion order
among equals, so runs are deterministic. Nothing here is random; scenarios that need
randomness take an explicit seed.

Examples
--------
>>> loop, log = EventLoop(), []
>>> loop.schedule(2.0, log.append, "b")
>>> loop.schedule(1.0, log.append, "a")
>>> loop.run()
>>> log, loop.now
(['a', 'b'], 2.0)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any


class EventLoop:
    """Events fire in time order; ``run(until)`` stops before the first event past ``until``."""

    __slots__ = ("now", "_heap", "_seq")

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = 0

    def schedule(self, time: float, fn: Callable[..., Any], *args: Any, prio: int = 1) -> None:
        """Call ``fn(*args)`` at ``time`` (never earlier than ``now``)."""
        if time < self.now:
            raise ValueError(f"cannot schedule at {time!r} before now={self.now!r}")
        self._seq += 1
        heapq.heappush(self._heap, (time, prio, self._seq, fn, args))

    def step(self) -> bool:
        """Fire the next event; False when none is left."""
        if not self._heap:
            return False
        time, _, _, fn, args = heapq.heappop(self._heap)
        self.now = time
        fn(*args)
        return True

    def run(self, until: float | None = None) -> None:
        """Fire events until none is left (or the next one lies after ``until``)."""
        heap = self._heap
        while heap:
            if until is not None and heap[0][0] > until:
                self.now = until
                return
            self.step()

    def __len__(self) -> int:
        return len(self._heap)
