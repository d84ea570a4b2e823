"""The ``Board``: the predicted schedule state and the candidate group, as policies see it.

The schedule state is the thesis's triple (section IV.3): ``t_m``, when the last dispatched
weight fetch completes; ``t_c``, when the last dispatched computation completes; and the
in-flight list of ``(weight bytes, completion time)`` of dispatched units whose computation
ends after ``t_m`` (their weights still occupy the buffer at ``t_m``), in completion order.

``fetch_end`` is ScheduleMemFetch (Figure IV.5): the fetch starts at ``t_m`` into the free
space and, when that runs out, continues in parts as in-flight units complete and free theirs.
``commit`` applies one decision: fetch, then compute at ``max(t_c, fetch end)``, then drops the
in-flight units that completed by the new ``t_m``. The NPU engine (``npuweave.sim.engine``)
performs the same float operations in the same order, so its times equal these predictions.

Each tenant serves a queue of requests; a request is the tenant's unit list. The candidate
group is the next unit of every tenant in ``active`` (tenants with a request in progress or
queued). The board is mutable bookkeeping, kept lean because it is the scheduler's hot loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from npuweave.schedule.base import COMPUTE, MEMORY, Tenant

# on_dispatched(tenant, request, predicted finish): the last unit of a request was committed.
DispatchHook = Callable[[int, int, float], None]


class Board:
    """Schedule state for one NPU (buffer ``buffer_bytes``, bandwidth ``dram_bw`` bytes/s).

    Examples
    --------
    >>> from npuweave.schedule.base import Tenant
    >>> b = Board([Tenant("a", ("x",), (2.0,), (10,))], buffer_bytes=10, dram_bw=10.0)
    >>> b.issue(0, 0, 0.0)
    >>> b.commit(0)      # fetch 10 B at 10 B/s: 0 -> 1 s; compute 1 -> 3 s
    (0, 0, 0.0, 1.0, 1.0, 3.0)
    """

    __slots__ = ("buf", "bw", "t_m", "t_c", "fl", "used", "tenants", "comp", "size", "ftime",
                 "inh", "kind", "mft", "pos", "req", "arrival", "queue", "active", "served",
                 "excluded", "maxft", "on_dispatched", "busy")

    def __init__(self, tenants: Sequence[Tenant], buffer_bytes: int, dram_bw: float,
                 on_dispatched: DispatchHook | None = None) -> None:
        self.buf = int(buffer_bytes)
        self.bw = float(dram_bw)
        self.t_m = 0.0
        self.t_c = 0.0
        self.fl: deque[tuple[int, float]] = deque()
        self.used = 0
        self.tenants = tuple(tenants)
        bw, buf = self.bw, self.buf
        self.comp = [list(t.compute_s) for t in tenants]
        self.size = [list(t.weight_bytes) for t in tenants]
        self.ftime = [[s / bw for s in t.weight_bytes] for t in tenants]
        # inherent memory idle of a unit: L[comp] - (BufSize - L[size]) / MemBW (section IV.4)
        self.inh = [[c - (buf - s) / bw for c, s in zip(t.compute_s, t.weight_bytes)]
                    for t in tenants]
        self.kind = [COMPUTE if t.total_compute_s >= t.total_weight_bytes / bw else MEMORY
                     for t in tenants]
        self.mft = [max(f, default=0.0) for f in self.ftime]
        n = len(tenants)
        self.pos = [0] * n
        self.req = [-1] * n
        self.arrival = [0.0] * n
        self.queue: list[deque[tuple[int, float]]] = [deque() for _ in range(n)]
        self.active: list[int] = []
        self.served = [0.0] * n
        self.busy = [False] * n
        self.excluded = [False] * n
        self.maxft = 0.0
        self.on_dispatched = on_dispatched

    # -- requests -------------------------------------------------------------------------
    def exclude(self, t: int) -> None:
        """Never serve tenant ``t`` (used by policies that run a subset of the tenants)."""
        self.excluded[t] = True
        self.queue[t].clear()
        if t in self.active:
            self.active.remove(t)
            self.busy[t] = False
            self._refresh()

    def issue(self, t: int, index: int, arrival_s: float) -> None:
        """Queue request ``index`` of tenant ``t``, issued at ``arrival_s``."""
        if self.excluded[t]:
            return
        self.queue[t].append((index, arrival_s))
        if not self.busy[t]:
            self._next_request(t)

    def _next_request(self, t: int) -> None:
        q = self.queue[t]
        if not q or not self.size[t]:
            if self.busy[t]:
                self.busy[t] = False
                self.active.remove(t)
                self._refresh()
            return
        self.req[t], self.arrival[t] = q.popleft()
        self.pos[t] = 0
        if not self.busy[t]:
            self.busy[t] = True
            self.active.append(t)
            self.active.sort()
            self._refresh()

    def _refresh(self) -> None:
        self.maxft = max((self.mft[t] for t in self.active), default=0.0)

    # -- ScheduleMemFetch and the fetch window ---------------------------------------------
    def fetch_end(self, size: int) -> float:
        """When a fetch of ``size`` bytes dispatched now would complete (Figure IV.5)."""
        bw = self.bw
        t = self.t_m
        free = self.buf - self.used
        if size <= free:
            return t + size / bw
        t += free / bw
        need = size - free
        for s, c in self.fl:
            if t < c:
                t = c
            if need <= s:
                return t + need / bw
            need -= s
            t += s / bw
        raise AssertionError(f"unit of {size} bytes exceeds the {self.buf}-byte buffer")

    def fetch_window(self, t0: float, size: int, t1: float) -> float:
        """fetch(S'[t_m], S[t_c]): bytes the DMA can bring in during ``(t0, t1)`` once a unit
        of ``size`` bytes has been fetched by ``t0`` (section IV.4, "Memory Idle Time")."""
        bw = self.bw
        free = self.buf - self.used - size
        entries = iter(self.fl)
        nxt = None
        for s, c in entries:
            if c <= t0:
                free += s  # completed by t0: already free when the window opens
            else:
                nxt = (s, c)
                break
        t, got = t0, 0.0
        if free > 0:
            if t + free / bw >= t1:
                return (t1 - t) * bw
            t += free / bw
            got = float(free)
        while nxt is not None:
            s, c = nxt
            if c >= t1:
                break
            if t < c:
                t = c
            if t + s / bw >= t1:
                return got + (t1 - t) * bw
            t += s / bw
            got += s
            nxt = next(entries, None)
        return got

    # -- committing a decision -------------------------------------------------------------
    def commit(self, t: int) -> tuple[int, int, float, float, float, float]:
        """Dispatch tenant ``t``'s next unit; return ``(request, unit, fetch start, fetch end,
        compute start, compute end)`` as predicted."""
        i = self.pos[t]
        size = self.size[t][i]
        comp = self.comp[t][i]
        fs = self.t_m
        fe = self.fetch_end(size) if size else fs
        t_c = self.t_c
        cs = t_c if t_c > fe else fe
        ce = cs + comp
        fl = self.fl
        while fl and fl[0][1] <= fe:
            self.used -= fl.popleft()[0]
        if size and ce > fe:
            fl.append((size, ce))
            self.used += size
        self.t_m = fe
        self.t_c = ce
        self.served[t] += comp if comp > self.ftime[t][i] else self.ftime[t][i]
        r = self.req[t]
        if i + 1 < len(self.size[t]):
            self.pos[t] = i + 1
        else:
            if self.on_dispatched is not None:
                self.on_dispatched(t, r, ce)
            self._next_request(t)
        return r, i, fs, fe, cs, ce
