"""Preemption in the NPU engine: taking back a request's jobs not started, cutting off its
computation running now (``npuweave.sim.engine``; ``Engine`` has these methods)."""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

from npuweave.sim.jobs import Job, Kind

if TYPE_CHECKING:
    from npuweave.sim.events import EventLoop


class Preemption:
    """``Engine.take_back`` and ``Engine.cut`` (a base of ``Engine``)."""

    if not TYPE_CHECKING:  # (mypy would take the empty slots for the subclass's too)
        __slots__ = ()
    else:
        loop: EventLoop
        pending: deque[Job]
        ready: deque[Job]
        dispatched: int
        computed: int
        store_wait: bool
        store_after: int
        dma_job: Job | None
        orphan: bool
        pe_job: Job | None
        pe_busy: bool
        pe_start: float
        pe_end: float

        def settle(self) -> None: ...
        def _release(self, hold: int) -> None: ...
        def _post_pull(self, now: float) -> None: ...
        def _store_now(self, now: float) -> None: ...
        def _leave(self, now: float) -> Job: ...  # type: ignore[empty-body]
        def _compute(self, now: float) -> None: ...

    def take_back(self, rid: int, first: int) -> int:
        """Withdraw request ``rid``'s jobs for its units ``first`` and later that have not
        started: those still queued in ``pending`` and the computations waiting for the PE
        (their weights leave the buffer). The computation running now is left to end: a
        checkpoint takes effect there, one preemption point after the decision (a kill
        also calls ``cut``). A weight
        fetch in progress goes on and frees its bytes when it ends; a store waiting for a
        withdrawn computation is cancelled. Checkpoint and restore jobs (index -1) stay.
        Returns the number of computations withdrawn from the PE's queue.

        Examples
        --------
        >>> from npuweave.sim.engine import Engine, Kind, Unit
        >>> class Two:
        ...     def next(self, now):
        ...         return None
        >>> e = Engine(100, 1.0, Two())
        >>> e.pending.extend([(Unit(Kind.COMPUTE, 0, 0, 0, 0, 1.0), 7),
        ...                   (Unit(Kind.COMPUTE, 0, 1, 0, 0, 1.0), 7)])
        >>> e.take_back(7, 1), [u.index for u, _ in e.pending]
        (0, [0])
        """
        def mine(job: Job) -> bool:
            return job[1] == rid and job[0].index >= first

        self.settle()
        pend = self.pending
        if any(mine(j) for j in pend):
            kept = [j for j in pend if not mine(j)]
            pend.clear()
            pend.extend(kept)
        taken = [j for j in self.ready if mine(j)]
        if taken:
            kept = [j for j in self.ready if not mine(j)]
            self.ready.clear()
            self.ready.extend(kept)
            self.dispatched -= len(taken)
            if self.store_wait:  # all were dispatched before the waiting store
                self.store_after -= len(taken)
            for unit, _ in taken:
                if unit.hold:
                    self._release(unit.hold)
        job = self.dma_job
        if job is not None and mine(job):
            if job[0].kind is Kind.STORE and self.store_wait:
                self.store_wait = False
                self.dma_job = None
                self._post_pull(self.loop.now)
            elif job[0].hold:
                self.orphan = True
        if self.store_wait and self.computed >= self.store_after:
            self._store_now(self.loop.now)
        return len(taken)

    def cut(self, rid: int) -> float:
        """Stop request ``rid``'s computation running now, if one is (a kill): its work is
        lost, its weights leave the buffer and the PE takes its next computation at once.
        The cut computation counts as ended (a store waiting for it goes on) but the ``on_end``
        hook is not called: it produced nothing. Returns the seconds it had run (0.0 when
        none of ``rid``'s computations runs).

        Examples
        --------
        >>> from npuweave.sim.engine import Engine, Kind, Unit
        >>> class One:
        ...     def __init__(self):
        ...         self.jobs = [(Unit(Kind.COMPUTE, 0, 0, 0, 0, 4.0), 7)]
        ...     def next(self, now):
        ...         return self.jobs.pop() if self.jobs else None
        >>> e = Engine(100, 1.0, One())
        >>> _ = e.loop.schedule(1.5, lambda: e.cut(7))
        >>> e.run()
        >>> e.pe_log[0][2:], e.pe_busy_s, e.last_end
        ((0.0, 1.5), 1.5, 1.5)
        """
        self.settle()
        job = self.pe_job
        if not self.pe_busy or job is None or job[1] != rid:
            return 0.0
        now, start = self.loop.now, self.pe_start
        self.pe_end = math.inf
        self._leave(now)
        if self.ready:
            self._compute(now)
        return now - start

    def _drop_orphan(self) -> None:
        """A fetch whose computation was taken back ended: its weights leave the buffer."""
        self.orphan = False
        self._release(self.dma_job[0].hold)  # type: ignore[index]
