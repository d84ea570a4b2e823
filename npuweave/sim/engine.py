"""The NPU engine: a DMA engine and a PE array, decoupled, sharing a finite weight buffer.

Units arrive in dispatch order from a *source* (``source.next(now)`` returns
``(tenant, request, unit, weight bytes, compute seconds)`` or None); the engine pulls the next
one whenever the DMA engine becomes free, so a policy decides exactly when the hardware needs
the next command. The hardware rules:

* DMA: fetches units one after another, in dispatch order. A fetch starts with the space free
  at that moment; when the buffer is full it waits, and continues in parts as computations end
  and free their weights, one part per freed block, in the order they were freed.
* PE: computes a unit once its weights are all in and the previous computation has ended.
* Buffer: a unit's weights are freed when its computation ends.

These are the rules ScheduleMemFetch assumes (thesis Figure IV.5), with the same float
operations in the same order, so the engine's times equal the scheduler's predictions exactly.

Events at one instant fire in this order: computation ends (they free space), then fetch parts
end, then the DMA asks for its next unit. Hooks ``on_start``/``on_end`` (called with the unit
and the time its computation starts/ends) let scenarios record requests; arrival processes,
deadlines and preemption plug in through the source and these hooks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol

from npuweave.sim.events import EventLoop

Unit = tuple[int, int, int, int, float]  # tenant, request, unit index, weight bytes, compute s

FREE, PART, PULL = 0, 1, 2  # event priorities at one instant


class Source(Protocol):
    def next(self, now: float) -> Unit | None: ...


class Engine:
    """Executes units from ``source`` on an NPU with ``buffer_bytes`` and ``dram_bw``.

    After ``run()``: ``pe_log`` holds ``(unit, start, end)`` per unit and ``dram_log``
    ``(unit, start, end, bytes)`` per transferred part.
    """

    def __init__(self, buffer_bytes: int, dram_bw: float, source: Source,
                 on_start: Callable[[Unit, float], None] | None = None,
                 on_end: Callable[[Unit, float], None] | None = None,
                 loop: EventLoop | None = None) -> None:
        self.loop = loop or EventLoop()
        self.buf, self.bw, self.source = int(buffer_bytes), float(dram_bw), source
        self.on_start, self.on_end = on_start, on_end
        self.free = self.buf  # bytes free at the start of the current fetch
        self.freed: deque[int] = deque()  # blocks freed since the current fetch started
        self.dma_unit: Unit | None = None
        self.need = 0  # bytes the current fetch still has to move
        self.waiting = False  # DMA stalled for space
        self.dma_idle = True
        self.ready: deque[Unit] = deque()  # fetched, waiting for the PE
        self.pe_busy = False
        self.pe_log: list[tuple[Unit, float, float]] = []
        self.dram_log: list[tuple[Unit, float, float, int]] = []

    def run(self, until: float | None = None) -> None:
        """Start pulling units at time ``now`` and run the event loop."""
        self.kick()
        self.loop.run(until)

    def kick(self) -> None:
        """Wake an idle DMA engine (e.g. after new work arrives)."""
        if self.dma_idle:
            self.dma_idle = False
            self.loop.schedule(self.loop.now, self._pull, prio=PULL)

    # -- DMA --------------------------------------------------------------------------------
    def _pull(self) -> None:
        now = self.loop.now
        unit = self.source.next(now)
        if unit is None:
            self.dma_idle = True
            return
        while self.freed:  # everything freed so far is free space for this fetch
            self.free += self.freed.popleft()
        self.dma_unit, self.need = unit, unit[3]
        if self.need == 0:
            self._fetched(now)
            return
        part = self.need if self.need <= self.free else self.free
        self.free -= part
        self._transfer(now, part)

    def _transfer(self, start: float, part: int) -> None:
        """Move ``part`` bytes of the current fetch from ``start`` (no event for 0 bytes)."""
        self.need -= part
        if part == 0:
            self._part_end()
            return
        end = start + part / self.bw
        self.dram_log.append((self.dma_unit, start, end, part))  # type: ignore[arg-type]
        self.loop.schedule(end, self._part_end, prio=PART)

    def _part_end(self) -> None:
        now = self.loop.now
        if self.need == 0:
            self._fetched(now)
        elif self.freed:
            self._next_part(now)
        else:
            self.waiting = True

    def _next_part(self, now: float) -> None:
        block = self.freed.popleft()
        part = self.need if self.need <= block else block
        self.free += block - part
        self._transfer(now, part)

    def _fetched(self, now: float) -> None:
        unit, self.dma_unit = self.dma_unit, None
        self.ready.append(unit)  # type: ignore[arg-type]
        if not self.pe_busy:
            self._compute(now)
        self.loop.schedule(now, self._pull, prio=PULL)

    # -- PE ---------------------------------------------------------------------------------
    def _compute(self, now: float) -> None:
        unit = self.ready.popleft()
        self.pe_busy = True
        if self.on_start is not None:
            self.on_start(unit, now)
        self.loop.schedule(now + unit[4], self._computed, unit, now, prio=FREE)

    def _computed(self, unit: Unit, start: float) -> None:
        now = self.loop.now
        self.pe_busy = False
        self.pe_log.append((unit, start, now))
        if unit[3]:
            self.freed.append(unit[3])
            if self.waiting:
                self.waiting = False
                self._next_part(now)
        if self.on_end is not None:
            self.on_end(unit, now)
        if self.ready:
            self._compute(now)
