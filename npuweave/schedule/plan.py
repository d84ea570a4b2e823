"""``plan``: run a policy to the end on the predicted state, without the engine.

The result is a ``Schedule``: the dispatch order and, per unit, the predicted fetch and compute
times. It is what the thesis's scheduler hands to the NPU; ``npuweave.sim`` executes the same
decisions on the event-driven engine and reproduces these times exactly.

Requests arrive by the closed loop (``npuweave.sim.arrival_processes.ClosedLoop``, one of the
arrival processes); its rule is written once, here (``first_issue``, ``reissues``), because
``plan`` applies it and ``schedule`` may not import ``sim``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from npuweave.schedule.base import Tenant
from npuweave.schedule.board import Board, DispatchHook
from npuweave.schedule.protocol import Policy
from npuweave.schedule.reference import decide


@dataclass(frozen=True, slots=True)
class Schedule:
    """A dispatch order with its predicted timeline (seconds).

    ``order[j] = (tenant index, request index, unit index)``; the other tuples are aligned with
    ``order``.
    """

    tenants: tuple[str, ...]
    order: tuple[tuple[int, int, int], ...]
    fetch_start_s: tuple[float, ...]
    fetch_end_s: tuple[float, ...]
    compute_start_s: tuple[float, ...]
    compute_end_s: tuple[float, ...]
    notes: tuple[str, ...] = ()
    scheduler: str = ""
    #: which path made it, and why (``path_and_why``); not part of the schedule's equality
    path: str = field(default="", compare=False)

    @property
    def makespan_s(self) -> float:
        return max(self.compute_end_s, default=0.0)


def first_issue(window_s: float | None) -> bool:
    """The closed loop (thesis IV.5.B): whether the streams issue their first request at time 0
    (always, unless the issue window is empty)."""
    return window_s is None or window_s > 0.0


def reissues(requests: int | None, window_s: float | None, index: int,
             finish_s: float) -> bool:
    """The closed loop: whether a stream issues request ``index + 1`` at ``finish_s``, when its
    request ``index`` finishes: while the previous request finished before ``window_s`` when a
    window is given (it wins), else for ``requests`` requests.

    Examples
    --------
    >>> reissues(2, None, 0, 3.0), reissues(2, None, 1, 6.0), reissues(None, 5.0, 7, 4.9)
    (True, False, True)
    """
    if window_s is not None:
        return finish_s < window_s
    return requests is not None and index + 1 < requests


def stream_hook(board: Board, requests: int | None, window_s: float | None) -> DispatchHook:
    """The closed loop as a ``Board`` dispatch hook: re-issue at the predicted finish."""

    def reissue(t: int, r: int, finish_s: float) -> None:
        if reissues(requests, window_s, r, finish_s):
            board.issue(t, r + 1, finish_s)

    return reissue


def start_streams(board: Board, policy: Policy, requests: int | None,
                  window_s: float | None) -> list[str]:
    """Issue every stream's first request at time 0 and let the policy prepare."""
    board.on_dispatched = stream_hook(board, requests, window_s)
    notes = policy.start(board)
    if first_issue(window_s):
        for t in range(len(board.tenants)):
            board.issue(t, 0, 0.0)
    return notes


def policy_tenants(policy: object, tenants: Sequence[Tenant], buffer_bytes: int,
                   dram_bw: float) -> Sequence[Tenant]:
    """The tenants as ``policy`` runs them: its own units where it defines them (AI-MT's
    merged sub-layer blocks), else ``tenants`` unchanged. ``plan`` and the engine both call
    this, so a schedule's unit indices refer to the same units the engine runs."""
    units = getattr(policy, "units", None)
    return tenants if units is None else units(tenants, buffer_bytes, dram_bw)


def plan(policy: str | Policy, tenants: Sequence[Tenant], buffer_bytes: int, dram_bw: float,
         requests: int = 1, window_s: float | None = None, **opts: object) -> Schedule:
    """Schedule ``requests`` closed-loop requests per tenant with ``policy`` (a name or object).

    Long Layerweaver and AI-MT runs go through the one compiled decision loop
    (``npuweave.schedule.loop``) when numba is installed; the decisions and predicted times are the same (see ``plan_using``).

    Examples
    --------
    >>> from npuweave.schedule.tiling import make_tenant
    >>> a = make_tenant("a", [2.0], [10], buffer_bytes=10)
    >>> plan("sequential", [a], buffer_bytes=10, dram_bw=10.0, requests=2).compute_end_s
    (3.0, 6.0)
    """
    return plan_using("auto", policy, tenants, buffer_bytes, dram_bw, requests, window_s, **opts)


def plan_using(path: str, policy: str | Policy, tenants: Sequence[Tenant], buffer_bytes: int,
               dram_bw: float, requests: int = 1, window_s: float | None = None,
               **opts: object) -> Schedule:
    """``plan`` on a chosen path: ``"python"`` (the reference loop,
    ``npuweave.schedule.reference.decide``: ``policy.select`` and ``Board.commit`` per
    decision), ``"kernel"`` (a policy with a loop code,
    ``LayerBase.loop_code``: sequential, Layerweaver in a named reading, Layerweaver+, AI-MT;
    the whole run in the one decision loop, ``npuweave.schedule.closed.run_closed``, compiled
    when numba is installed) or ``"auto"``: the kernel when numba is installed, the policy has
    a loop code and the run is expected to take at least ``KERNEL_MIN_DECISIONS`` decisions (below that, numba's import and cache
    load, about 0.3 s, cost more than they save), else the reference. Without numba,
    ``Layerweaver`` takes the kernel as plain Python on lists (``loop.runner``): the
    same loop, as fast as a plain-Python port of it and faster than the policy loop.

    Examples
    --------
    >>> from npuweave.schedule.tiling import make_tenant
    >>> ts = [make_tenant("a", [4.0], [10], 100), make_tenant("b", [0.5], [40], 100)]
    >>> plan_using("kernel", "layerweaver", ts, 100, 10.0, 3, reading="npuweave") == plan_using(
    ...     "python", "layerweaver", ts, 100, 10.0, 3, reading="npuweave")
    True
    """
    if isinstance(policy, str):
        from npuweave.schedule.registry import get_scheduler

        policy = get_scheduler(policy, **opts)
    tenants = policy_tenants(policy, tenants, buffer_bytes, dram_bw)
    board = Board(tenants, buffer_bytes, dram_bw)
    notes = start_streams(board, policy, requests, window_s)
    labels = tuple(x.label for x in tenants)
    path, why = path_and_why(path, policy, board, requests, window_s)
    if path == "kernel":
        cols = [tuple(a.tolist()) for a in compiled_arrays(policy, board, requests, window_s)]
    else:  # the reference's rows as they are (no round trip through arrays)
        cols = decide(board, policy.select, record=True)[1]
    fs, fe, cs, ce = (tuple(c) for c in cols[3:])
    return Schedule(labels, tuple(zip(*cols[:3])), fs, fe, cs, ce, tuple(notes), policy.name,
                    why)


def plan_arrays(policy: Policy, board: Board, requests: int | None, window_s: float | None,
                path: str = "auto") -> tuple[np.ndarray, ...]:
    """Run ``board`` (started with ``start_streams``) to the end on ``path`` (as in
    ``plan_using``); return ``tenant, request, unit, fs, fe, cs, ce`` as arrays, one row per
    decision (what ``npuweave.sim.fastloop`` builds its result from)."""
    path = choose_path(path, policy, board, requests, window_s)
    if path == "kernel":
        return compiled_arrays(policy, board, requests, window_s)
    cols = decide(board, policy.select, record=True)[1]
    return (*(np.array(c, np.int64) for c in cols[:3]),
            *(np.array(c, np.float64) for c in cols[3:]))


def compiled_arrays(policy: Policy, board: Board, requests: int | None,
                    window_s: float | None) -> tuple[np.ndarray, ...]:
    """The kernel path of ``plan_arrays``: the one compiled decision loop
    (``npuweave.schedule.closed.run_closed``), with the policy's code."""
    from npuweave.schedule.closed import run_closed

    return run_closed(policy, board, requests, window_s,
                      _expected_decisions(board, requests, window_s))


# "auto" uses the kernel from this many expected decisions on (about 0.5 s of reference time)
# when numba's on-disk cache of the kernel is warm (loading it costs about 0.3-0.6 s) ...
KERNEL_MIN_DECISIONS = 100_000
# ... and from this many when it is cold: compiling the one loop (every policy's branch, the
# open arrivals too) costs about 25 s of CPU (11 s for the former closed-loop-only kernel;
# docs/BENCHMARKS.md), so below about 8 M decisions (3 us each in the reference) the
# reference finishes first ...
KERNEL_COLD_MIN_DECISIONS = 8_000_000
# ... and from this many once this process has loaded the kernels (a call then costs tens of
# microseconds of array conversion).
KERNEL_LOADED_MIN_DECISIONS = 1_000


def kernels_pay(decisions: int) -> bool:
    """Whether compiled kernels are worth using for a run of ``decisions`` decisions: numba is
    installed and the run reaches ``KERNEL_LOADED_MIN_DECISIONS`` when the kernels are already
    loaded in this process, ``KERNEL_MIN_DECISIONS`` when numba's cache is warm, else
    ``KERNEL_COLD_MIN_DECISIONS`` (docs/SCHEDULING.md)."""
    from npuweave.schedule import kernel

    if kernel.loaded():
        return decisions >= KERNEL_LOADED_MIN_DECISIONS
    need = KERNEL_MIN_DECISIONS if kernel_cache_warm() else KERNEL_COLD_MIN_DECISIONS
    return decisions >= need and kernel.available()


def kernel_cache_warm() -> bool:
    """Whether numba's cache holds a compiled ``run_loop`` (index files next to the module)."""
    from pathlib import Path

    cache = Path(__file__).with_name("__pycache__")
    return any(cache.glob("loop.run_loop-*.nbi"))


def choose_path(path: str, policy: Policy, board: Board, requests: int | None,
                window_s: float | None) -> str:
    """``"kernel"`` or ``"python"``: what ``path`` (``"auto"``, ``"python"``, ``"kernel"``)
    resolves to for this run (see ``plan_using``)."""
    return path_and_why(path, policy, board, requests, window_s)[0]


def path_and_why(path: str, policy: Policy, board: Board, requests: int | None,
                 window_s: float | None) -> tuple[str, str]:
    """``choose_path`` and, in words, the path that runs and why (a result's note).

    Examples
    --------
    >>> from npuweave.schedule.registry import get_scheduler
    >>> from npuweave.schedule.tiling import make_tenant
    >>> b = Board([make_tenant("a", [2.0], [10], 10)], 10, 10.0)
    >>> path_and_why("auto", get_scheduler("fair"), b, 1, None)[1]
    'the reference loop (policy.select): fair states no loop code'
    """
    if path not in ("auto", "python", "kernel"):
        raise ValueError(f'path must be "auto", "python" or "kernel", got {path!r}')
    from npuweave.schedule.closed import policy_code
    from npuweave.schedule.layerweaver import Layerweaver

    # the loop runs every policy that states a code (its ``loop_code``), on units that fit
    coded = policy_code(policy) is not None
    fits = coded and _fit(board) and (requests is None or isinstance(requests, int))
    if path == "kernel" and not fits:
        raise ValueError(f"the compiled loop runs policies with a loop code (sequential, "
                         f"layerweaver in a named reading, layerweaver-plus, aimt) on units "
                         f"that fit the buffer only, not {policy.name!r} here; use "
                         "path='python'")
    numba = _numba()
    if path != "auto":
        why = f"path={path!r} asked for"
    elif not coded:
        path, why = "python", f"{policy.name} states no loop code"
    elif not fits:
        path, why = "python", "a unit does not fit the buffer"
    elif type(policy) is Layerweaver and not numba:
        # the same loop as plain Python on lists, faster than the policy loop
        path, why = "kernel", "numba is not installed"
    else:
        n = _expected_decisions(board, requests, window_s)
        path = "kernel" if kernels_pay(n) else "python"
        why = (f"about {n:,} decisions" if path == "kernel" else
               "numba is not installed" if not numba else
               f"about {n:,} decisions, too few to pay for loading the compiled loop")
    what = ("the reference loop (policy.select)" if path == "python" else
            "the compiled decision loop" if numba else "the decision loop as plain Python")
    return path, f"{what}: {why}"


def _fit(board: Board) -> bool:
    """Whether every unit fits the buffer."""
    if board.tables.same(board):
        size = board.tables.flat()[1]
        return not size.size or int(size.max()) <= board.buf
    return all(s <= board.buf for u in board.size for s in u)


def _numba() -> bool:
    from npuweave.schedule import kernel

    return kernel.available()


def _expected_decisions(board: Board, requests: int | None, window_s: float | None) -> int:
    """Decisions a closed-loop run will take (an upper estimate with a time window: request
    ``r`` of a tenant cannot finish before ``(r + 1) * max(compute, fetch time)``)."""
    n = 0
    for t in board.active:
        units = len(board.size[t])
        if window_s is None:
            n += units * max(1, requests or 1)
        else:
            busy = max(sum(board.comp[t]), sum(board.ftime[t]))
            n += units * (int(window_s / busy) + 2 if busy > 0 else 1 << 20)
    return n
