"""The ``Board``: the predicted schedule state and the candidate group, as policies see it.

The schedule state is the thesis's triple (section IV.3): ``t_m``, when the last dispatched
weight fetch completes; ``t_c``, when the last dispatched computation completes; and the
in-flight list of ``(weight bytes, completion time)`` of dispatched units whose computation
ends after ``t_m`` (their weights still occupy the buffer at ``t_m``), in completion order.

``fetch_end`` is ScheduleMemFetch (Figure IV.5): the fetch starts at ``t_m`` into the free
space and, when that runs out, continues in parts as in-flight units complete and free theirs.
``commit`` applies one decision: fetch, then compute at ``max(t_c, fetch end)``, then drops the
in-flight units that completed by the new ``t_m``. The arithmetic is written once, in
``npuweave.schedule.buffer`` (the compiled loops call the same functions); the board keeps the
in-flight list as three Python lists ``fl_s``, ``fl_c``, ``fl_f`` (bytes, completion, bytes /
bandwidth) live from ``head`` on. The NPU engine (``npuweave.sim.engine``) performs the same
float operations in the same order, so its times equal these predictions.

Each tenant serves a queue of requests; a request is the tenant's unit list. The candidate
group is the next unit of every tenant in ``active`` (tenants with a request in progress or
queued). The board is mutable bookkeeping, kept lean because it is the scheduler's hot loop.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from itertools import chain

import numpy as np

from npuweave.schedule import buffer, jit
from npuweave.schedule.base import COMPUTE, MEMORY, Tenant

# the buffer arithmetic as plain Python on the board's lists (``npuweave.schedule.buffer``)
_fetch_end = jit.python(f"{buffer.__name__}.fetch_end")
_fetch_window = jit.python(f"{buffer.__name__}.fetch_window")
_commit = jit.python(f"{buffer.__name__}.commit_in_place")

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

    __slots__ = ("buf", "bw", "t_m", "t_c", "fl_s", "fl_c", "fl_f", "head", "used", "tenants",
                 "comp", "size", "ftime", "inh", "kind", "mft", "pos", "req", "arrival",
                 "queue", "active", "served", "excluded", "maxft", "on_dispatched", "busy",
                 "tail", "tables")

    def __init__(self, tenants: Sequence[Tenant], buffer_bytes: int, dram_bw: float,
                 on_dispatched: DispatchHook | None = None) -> None:
        self.buf = int(buffer_bytes)
        self.bw = float(dram_bw)
        self.t_m = 0.0
        self.t_c = 0.0
        self.fl_s: list[int] = [0] * 16
        self.fl_c: list[float] = [0.0] * 16
        self.fl_f: list[float] = [0.0] * 16
        self.head = 0
        self.tail = 0
        self.used = 0
        self.tenants = tuple(tenants)
        # the per-unit tables, shared by every board of these tenants (each board may
        # replace a tenant's list, never change one in place)
        self.tables = tables(self.tenants, self.buf, self.bw)
        t = self.tables
        self.comp, self.size, self.ftime = list(t.comp), list(t.size), list(t.ftime)
        self.inh, self.kind, self.mft = list(t.inh), list(t.kind), list(t.mft)
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
    def in_flight(self) -> list[tuple[int, float]]:
        """The in-flight list: ``(weight bytes, completion time)``, in completion order."""
        h, t = self.head, self.tail
        return list(zip(self.fl_s[h:t], self.fl_c[h:t]))

    def set_in_flight(self, entries: Sequence[tuple[int, float]]) -> None:
        """Replace the in-flight list (``(weight bytes, completion time)``, in completion
        order) and the bytes it holds."""
        n = max(16, 2 * len(entries))
        self.fl_s = [s for s, _ in entries] + [0] * (n - len(entries))
        self.fl_c = [float(c) for _, c in entries] + [0.0] * (n - len(entries))
        self.fl_f = [s / self.bw for s, _ in entries] + [0.0] * (n - len(entries))
        self.head, self.tail = 0, len(entries)
        self.used = sum(s for s, _ in entries)

    def free_until(self, now: float) -> None:
        """Drop the in-flight units whose computation ended by ``now`` (their space is free)."""
        h, t, fl_c = self.head, self.tail, self.fl_c
        while h < t and fl_c[h] <= now:
            self.used -= self.fl_s[h]
            h += 1
        self.head = h

    def fetch_end(self, size: int) -> float:
        """When a fetch of ``size`` bytes dispatched now would complete (Figure IV.5)."""
        free = self.buf - self.used
        if size <= free:
            return self.t_m + size / self.bw
        fe = _fetch_end(self.fl_s, self.fl_c, self.fl_f, self.head, self.tail, self.t_m,
                        free, size, self.bw)
        assert fe != float("inf"), f"unit of {size} bytes exceeds the {self.buf}-byte buffer"
        return fe

    def fetch_window(self, t0: float, size: int, t1: float) -> float:
        """fetch(S'[t_m], S[t_c]): bytes the DMA can bring in during ``(t0, t1)`` once a unit
        of ``size`` bytes has been fetched by ``t0`` (section IV.4, "Memory Idle Time")."""
        return _fetch_window(self.fl_s, self.fl_c, self.fl_f, self.head, self.tail,
                             self.buf - self.used - size, self.bw, t0, t1)

    # -- committing a decision -------------------------------------------------------------
    def commit(self, t: int) -> tuple[int, int, float, float, float, float]:
        """Dispatch tenant ``t``'s next unit; return ``(request, unit, fetch start, fetch end,
        compute start, compute end)`` as predicted."""
        i = self.pos[t]
        fs, t_c = self.t_m, self.t_c
        if self.tail == len(self.fl_s) and self.head == 0:  # room for one more, in place
            grow = [0] * len(self.fl_s)
            self.fl_s += grow
            self.fl_c += [0.0] * len(grow)
            self.fl_f += [0.0] * len(grow)
        fe, ce, self.head, self.tail, self.used = _commit(
            i, fs, t_c, self.buf - self.used, self.size[t], self.comp[t], self.ftime[t],
            self.fl_s, self.fl_c, self.fl_f, self.head, self.tail, self.used, self.bw)
        self.t_m = fe
        self.t_c = ce
        comp, ftime = self.comp[t][i], self.ftime[t][i]
        self.served[t] += comp if comp > ftime else ftime
        r = self.req[t]
        if i + 1 < len(self.size[t]):
            self.pos[t] = i + 1
        else:
            if self.on_dispatched is not None:
                self.on_dispatched(t, r, ce)
            self._next_request(t)
        return r, i, fs, fe, (t_c if t_c > fe else fe), ce


class Tables:
    """A tenant set's per-unit tables on one buffer and bandwidth: compute seconds, weight
    bytes, fetch seconds, inherent memory idle, each tenant's kind and longest fetch; and,
    on first use, the same concatenated as arrays (``flat``) for the compiled loops."""

    __slots__ = ("tenants", "comp", "size", "ftime", "inh", "kind", "mft", "_flat")

    def __init__(self, tenants: tuple[Tenant, ...], buf: int, bw: float) -> None:
        self.tenants = tenants
        self.comp = tuple(list(t.compute_s) for t in tenants)
        self.size = tuple(list(t.weight_bytes) for t in tenants)
        self.ftime = tuple([s / bw for s in t.weight_bytes] for t in tenants)
        # inherent memory idle of a unit: L[comp] - (BufSize - L[size]) / MemBW (section IV.4)
        self.inh = tuple([c - (buf - s) / bw for c, s in zip(t.compute_s, t.weight_bytes)]
                         for t in tenants)
        self.kind = tuple(COMPUTE if t.total_compute_s >= t.total_weight_bytes / bw else MEMORY
                          for t in tenants)
        self.mft = tuple(max(f, default=0.0) for f in self.ftime)
        self._flat: tuple[np.ndarray, ...] = ()

    def flat(self) -> tuple[np.ndarray, ...]:
        """``off, size, comp, ftime, inh, compute kind, mft`` as arrays (units of all tenants
        concatenated; ``off[t]:off[t + 1]`` is tenant ``t``). Shared: never write to them."""
        if not self._flat:
            self._flat = concatenated(self)
        return self._flat

    def same(self, board: Board) -> bool:
        """Whether ``board`` still has these tables (no tenant's list replaced)."""
        return (all(a is b for a, b in zip(board.size, self.size))
                and all(a is b for a, b in zip(board.comp, self.comp))
                and all(a is b for a, b in zip(board.ftime, self.ftime))
                and all(a is b for a, b in zip(board.inh, self.inh))
                and board.kind == list(self.kind) and board.mft == list(self.mft))


def concatenated(t: Tables | Board) -> tuple[np.ndarray, ...]:
    """``Tables.flat`` of the lists of ``t`` (tables or a board)."""
    off = np.zeros(len(t.size) + 1, np.int64)
    off[1:] = np.cumsum([len(s) for s in t.size])
    return (off, *(np.fromiter(chain.from_iterable(c), dt) for c, dt in (
        (t.size, np.int64), (t.comp, np.float64), (t.ftime, np.float64),
        (t.inh, np.float64))), np.array([k == COMPUTE for k in t.kind], np.bool_),
        np.array(t.mft, np.float64))


_TABLES: OrderedDict[tuple, Tables] = OrderedDict()


def tables(tenants: tuple[Tenant, ...], buf: int, bw: float) -> Tables:
    """The ``Tables`` of ``tenants`` (the same objects: a run repeated on the same tenants,
    as a comparison or a sweep does, builds them once; the last 64 sets are kept)."""
    key = (tuple(map(id, tenants)), buf, bw)
    hit = _TABLES.get(key)
    if hit is not None and all(a is b for a, b in zip(hit.tenants, tenants)):
        _TABLES.move_to_end(key)
        return hit
    _TABLES[key] = made = Tables(tenants, buf, bw)
    if len(_TABLES) > 64:
        _TABLES.popitem(last=False)
    return made
