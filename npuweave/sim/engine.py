"""The NPU engine: a DMA engine and a PE array, decoupled, sharing a finite weight buffer.

Work reaches the engine as ``Unit`` records (``LOAD``, ``COMPUTE``, ``STORE``) from a *source*:
``source.next(now)`` returns ``(unit, request id)`` or None, and the engine asks whenever the
DMA engine is free, so a policy decides exactly when the hardware needs the next command. The
hardware rules:

* DMA, in dispatch order, one command at a time:

  - ``LOAD`` moves ``nbytes`` in, after ``latency_s``. The ``hold`` bytes of it (weights) take
    weight-buffer space: the fetch starts with the space free at that moment; when the buffer
    is full it waits and continues in parts as computations end and free their weights, one
    part per freed block, in the order they were freed (thesis Figure IV.5).
  - ``COMPUTE`` takes no DMA time: it joins the PE's queue at once (its loads are done, since
    the DMA works in order) and the DMA asks for the next command.
  - ``STORE`` moves ``nbytes`` out once every computation dispatched before it has ended (it
    writes what they produced: spilled activations, a checkpoint); the DMA waits until then.

* PE: computes ``COMPUTE`` units in dispatch order, one at a time; when one ends it frees its
  ``hold`` bytes of the weight buffer.

With latency 0 and no activation traffic these are the rules ScheduleMemFetch assumes, with
the same float operations in the same order, so the engine's times equal the ``Board``'s
predictions exactly. Preemption: ``take_back`` withdraws a request's jobs not started;
``cut`` stops its computation running now (a kill: the PE is free at once). Events at one instant fire in this order: computations end (they free
space), then transfers end, then the DMA asks for its next command. Hooks ``on_start`` and
``on_end`` get ``(unit, request, time)`` for every computation.

Speed (this is the open loop's hot path): the engine's own events never enter the loop's heap.
At any moment it has at most one computation ending (``pe_end``), one transfer part ending
(``dma_end``) and one posted ask (``pull``); it is the loop's ``inner`` participant, and
``drive`` merges these three timers with the heap of outside events (arrivals, wake-ups), in
the order above, without allocating anything per event. When a transfer ends and the DMA is
free, it asks for the next command at once unless a computation ends at the same instant
(then it posts the ask, as the order above requires); jobs a source queued in ``pending`` are
taken without calling it. Every fired timer counts as one event of the loop, as a heap event
would.

``log=True`` keeps ``pe_log`` (``(unit, request, start, end)``) and ``dram_log``
(``(unit, request, start, end, bytes)`` per transferred part); without it only the busy
totals are kept, so memory does not grow with the number of units.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from heapq import heappop

from npuweave.sim.engine_preempt import Preemption
from npuweave.sim.events import EventBudgetError, EventLoop, cancelled
from npuweave.sim.jobs import Hook, Job, Kind, Source, Unit

__all__ = ["Engine", "Hook", "Job", "Kind", "Source", "Unit"]

INF = math.inf
_COMPUTE, _STORE = Kind.COMPUTE, Kind.STORE

FREE, PART, PULL = 0, 1, 2  # event priorities at one instant


class Engine(Preemption):
    """Executes units from ``source`` on an NPU with ``buffer_bytes`` and ``dram_bw``.

    ``pending`` is a queue of jobs the engine takes before asking ``source.next`` again: a
    source that knows several jobs ahead (the serving simulator: a unit's activation load,
    weight load, computation and activation store) appends them there.
    """

    __slots__ = ("loop", "buf", "bw", "source", "on_start", "on_end", "pending", "next_job",
                 "free", "freed", "dma_job", "need", "waiting", "store_wait", "dma_idle",
                 "ready", "pe_busy", "pe_job", "pe_start", "dispatched", "computed",
                 "store_after", "log", "pe_log", "dram_log", "pe_busy_s", "dram_busy_s",
                 "last_end", "claimed", "peak_claimed", "orphan", "pe_end", "dma_end", "pull",
                 "stretch", "held")

    def __init__(self, buffer_bytes: int, dram_bw: float, source: Source,
                 on_start: Hook | None = None, on_end: Hook | None = None,
                 loop: EventLoop | None = None, log: bool = True) -> None:
        self.loop = loop if loop is not None else EventLoop()
        self.buf, self.bw, self.source = int(buffer_bytes), float(dram_bw), source
        self.on_start, self.on_end = on_start, on_end
        self.pending: deque[Job] = deque()
        self.next_job: Callable[[float], Job | None] = source.next  # asked when none pending
        self.free = self.buf  # bytes free at the start of the current fetch
        self.freed: deque[int] = deque()  # blocks freed since the current fetch started
        self.dma_job: Job | None = None
        self.need = 0  # bytes the current fetch still has to move
        self.waiting = False  # DMA stalled for space
        self.store_wait = False  # DMA stalled until earlier computations end
        self.dma_idle = True
        self.ready: deque[Job] = deque()  # computations whose loads are done
        self.pe_busy = False
        self.pe_job: Job | None = None  # the computation on the PE and its start
        self.pe_start = 0.0
        self.dispatched = 0  # computations handed to the PE
        self.computed = 0  # computations ended
        self.store_after = 0  # computations a waiting store needs ended
        self.log = log
        self.pe_log: list[tuple[Unit, int, float, float]] = []
        self.dram_log: list[tuple[Unit, int, float, float, int]] = []
        self.pe_busy_s = 0.0
        self.dram_busy_s = 0.0
        self.last_end = 0.0
        self.claimed = 0  # weight-buffer bytes fetched (or being fetched) and not yet freed
        self.peak_claimed = 0  # most ever claimed at once (never above ``buf``)
        self.orphan = False  # the fetch in progress was taken back: free its bytes at its end
        # the engine's own events: when the computation running ends, when the transfer part
        # in progress ends (inf: none), and whether an ask of the DMA is posted for ``now``
        self.pe_end = INF
        self.dma_end = INF
        self.pull = False
        # fires a stretch of the engine's events at once (``npuweave.sim.stretch``): called
        # with the heap's first event (time, priority), ``until`` and the events left; returns
        # the events it fired (0: none, fire this one here)
        self.stretch: Callable[[float, int, float, float], int] | None = None
        # set while the last stretch holds the engine's queues and totals in its arrays:
        # ``settle`` brings them back (the times, ``pull``, ``dma_idle``, ``pe_busy``,
        # ``pe_job`` and ``pe_start`` are always current)
        self.held: Callable[[], None] | None = None
        self.loop.inner = self

    def run(self, until: float | None = None) -> None:
        """Start pulling units at time ``now`` and run the event loop."""
        self.kick()
        self.loop.run(until)

    def kick(self) -> None:
        """Wake an idle DMA engine (e.g. after new work arrives)."""
        if self.dma_idle:
            self.dma_idle = False
            self._post_pull(self.loop.now)

    def _post_pull(self, now: float) -> None:
        self.pull = True  # always for ``now``: the loop fires it after this instant's others

    def settle(self) -> None:
        """Bring back the state a stretch holds (before anything reads or changes it)."""
        if self.held is not None:
            self.held()

    # -- the loop ---------------------------------------------------------------------------
    def next_event(self) -> tuple[float, int]:
        """``(time, priority)`` of the engine's next event (``(inf, PULL)`` when none)."""
        if self.pe_end <= self.dma_end:
            t, kind = self.pe_end, FREE
        else:
            t, kind = self.dma_end, PART
        if self.pull and self.loop.now < t:
            t, kind = self.loop.now, PULL
        return t, kind

    def drive(self, until: float | None) -> None:
        """Fire the engine's events and the loop's, in time order, until none is left (or
        the next lies after ``until``): ``EventLoop.run`` for a loop with an engine. At one
        instant the engine's events (priorities ``FREE`` < ``PART`` < ``PULL``) go before an
        outside event of a larger priority (wake-ups and arrivals use 3)."""
        loop = self.loop
        heap = loop.heap
        cap = loop.max_events if loop.max_events is not None else INF
        fired = loop.fired
        try:
            while True:
                t, kind = self.next_event()
                while heap and heap[0][3] is cancelled:
                    heappop(heap)
                outside = bool(heap) and (heap[0][0] < t or heap[0][0] == t
                                          and heap[0][1] < kind)
                if not outside and t == INF:
                    return
                if until is not None and (heap[0][0] if outside else t) > until:
                    loop.now = until
                    return
                if fired >= cap:
                    raise EventBudgetError(
                        f"the simulation reached its budget of {cap} events at t = "
                        f"{loop.now:.6g} s and was stopped{loop.budget_hint}")
                if not outside and self.stretch is not None:
                    n = self.stretch(heap[0][0] if heap else INF, heap[0][1] if heap else 0,
                                     INF if until is None else until, cap - fired)
                    if n:
                        fired += n
                        continue
                fired += 1
                if outside:
                    time, _, _, fn, args = heappop(heap)
                    loop.now = time
                    fn(*args)
                elif kind == FREE:
                    loop.now = t
                    self.pe_end = INF
                    self._computed()
                elif kind == PART:
                    loop.now = t
                    self.dma_end = INF
                    self._part_event()
                else:
                    self.pull = False
                    self._pull()
        finally:
            loop.fired = fired
            self.settle()

    # -- DMA --------------------------------------------------------------------------------
    def _pull(self) -> None:
        if self.held is not None:
            self.held()
        now = self.loop.now
        pend, next_job = self.pending, self.next_job
        while True:
            job = pend.popleft() if pend else next_job(now)
            if job is None:
                self.dma_idle = True
                return
            unit = job[0]
            if unit.kind is not _COMPUTE:
                break
            self.dispatched += 1
            self.ready.append(job)
            if not self.pe_busy:
                self._compute(now)
            if now + unit.seconds == now:  # it may end (and free space) this instant:
                self._post_pull(now)  # let that fire first
                return
        self.dma_job = job
        if unit.kind is _STORE:
            if self.computed < self.dispatched:
                self.store_after, self.store_wait = self.dispatched, True
                return
            self._move(now, unit.nbytes, unit.seconds)
            return
        self._load(now, unit)

    def _load(self, now: float, unit: Unit) -> None:
        freed = self.freed
        while freed:  # everything freed so far is free space for this fetch
            self.free += freed.popleft()
        hold = unit.hold
        if hold == 0:
            self._move(now, unit.nbytes, unit.seconds)
            return
        free = self.free
        part = hold if hold <= free else free
        self.free = free - part
        self.need = hold
        if part == 0:
            self._part_end(now)
            return
        self._transfer(now + unit.seconds if unit.seconds else now, part)

    def _move(self, now: float, nbytes: int, latency: float) -> None:
        """A transfer that claims no buffer space (activations, checkpoints)."""
        self.need = 0
        if nbytes == 0 and latency == 0.0:
            self._part_end(now)
            return
        end = now + latency + nbytes / self.bw
        self.dram_busy_s += end - now
        if self.log:
            self._record(now, end, nbytes)
        self.dma_end = end

    def _record(self, start: float, end: float, nbytes: int) -> None:
        job = self.dma_job
        self.dram_log.append((job[0], job[1], start, end, nbytes))  # type: ignore[index]

    def _transfer(self, start: float, part: int) -> None:
        """Move ``part`` bytes of the current fetch from ``start`` (no event for 0 bytes)."""
        self.need -= part
        if part == 0:
            self._part_end(self.loop.now)
            return
        claimed = self.claimed = self.claimed + part
        if claimed > self.peak_claimed:
            self.peak_claimed = claimed
        end = start + part / self.bw
        self.dram_busy_s += end - start
        if self.log:
            self._record(start, end, part)
        self.dma_end = end

    def _part_event(self) -> None:
        """A transfer part ended (an event). When the DMA is then free and no event at this
        instant would fire before its pull, pull now instead of posting the pull event: the
        same order as the event loop's, one event fewer."""
        if self.held is not None:
            self.held()
        now = self.loop.now
        if self.need == 0:
            if self.orphan:
                self._drop_orphan()
            self.dma_job = None
            heap = self.loop.heap
            if self.pe_end == now or heap and heap[0][0] == now and heap[0][1] <= PULL:
                self._post_pull(now)
            else:
                self._pull()
        elif self.freed:
            self._next_part(now)
        else:
            self.waiting = True

    def _part_end(self, now: float) -> None:
        """A transfer of nothing ended at once (inside another step: the pull is posted)."""
        if self.need == 0:
            if self.orphan:
                self._drop_orphan()
            self.dma_job = None
            self._post_pull(now)
        elif self.freed:
            self._next_part(now)
        else:
            self.waiting = True

    def _next_part(self, now: float) -> None:
        block = self.freed.popleft()
        part = self.need if self.need <= block else block
        self.free += block - part
        self._transfer(now, part)

    # -- PE ---------------------------------------------------------------------------------
    def _compute(self, now: float) -> None:
        job = self.pe_job = self.ready.popleft()
        self.pe_busy = True
        self.pe_start = now
        if self.on_start is not None:
            self.on_start(job[0], job[1], now)
        self.pe_end = now + job[0].seconds

    def _computed(self) -> None:
        """The computation on the PE ended (an event)."""
        if self.held is not None:
            self.held()
        now = self.loop.now
        unit, rid = self._leave(now)
        if self.on_end is not None:
            self.on_end(unit, rid, now)
        if self.ready:
            self._compute(now)

    def _leave(self, now: float) -> Job:
        """The computation on the PE leaves it at ``now``, ended or cut off: the PE is idle,
        its weights are freed, a store waiting for it may go; returns its job."""
        job = self.pe_job
        unit, rid = job  # type: ignore[misc]
        start = self.pe_start
        self.pe_busy = False
        self.computed += 1
        self.pe_busy_s += now - start
        self.last_end = now
        if self.log:
            self.pe_log.append((unit, rid, start, now))
        if unit.hold:
            self._release(unit.hold)
        if self.store_wait and self.computed >= self.store_after:
            self._store_now(now)
        return job  # type: ignore[return-value]

    def _store_now(self, now: float) -> None:
        """The waiting store's computations have all ended: it moves now."""
        self.store_wait = False
        store = self.dma_job[0]  # type: ignore[index]
        self._move(now, store.nbytes, store.seconds)

    def _release(self, hold: int) -> None:
        """``hold`` bytes of the weight buffer become free (a stalled fetch goes on)."""
        self.claimed -= hold
        self.freed.append(hold)
        if self.waiting:
            self.waiting = False
            self._next_part(self.loop.now)
