"""The closed-loop fast path: a ``SimResult`` built from the planned schedule, without the engine.

For closed-loop streams under a layer-wise policy that only selects (``LayerBase.decide``,
no preemption, no idling, no view of the clock) and without activation traffic, the engine
executes exactly the decisions ``plan`` makes, at exactly the predicted times (the ``==`` tests
in ``tests/sim``): the DMA never idles, so the board's prediction never falls behind the clock.
This module therefore runs the policy on the ``Board`` alone (``plan_arrays``: the compiled
Layerweaver kernel where it pays, else the reference loop), replays the weight fetches part by
part (``npuweave.schedule.fetchparts``, the same float operations as the engine's DMA;
compiled once this process has loaded the kernels, plain Python before) and
assembles the result with NumPy: PE intervals ``(compute start, compute end)`` per decision,
one DRAM interval per fetched part, busy totals summed in the engine's order, one record per
request. ``tests/sim/test_fastloop.py`` checks on random instances that every field equals the
engine's.

``run_tenants`` uses it automatically where it is valid (``fast_path_refusal`` says why not);
``fast=True``/``False`` or the environment variable ``NPUWEAVE_CLOSED_LOOP`` (``auto``,
``fast``, ``engine``) force either path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from npuweave.errors import ConfigError
from npuweave.schedule.base import Tenant
from npuweave.schedule.board import Board
from npuweave.schedule.fetchparts import replay_parts
from npuweave.schedule.plan import compiled_arrays, path_and_why, plan_arrays, start_streams
from npuweave.schedule.protocol import LayerBase, Policy
from npuweave.sim.arrival_processes import ClosedLoop
from npuweave.sim.intervals import interval_columns
from npuweave.sim.result import RequestColumns, SimResult
from npuweave.sim.runwork import Parts, RunWork, fresh_slots, run_span

#: Environment variable that forces the closed-loop path: ``auto`` (default), ``fast``, ``engine``.
ENV = "NPUWEAVE_CLOSED_LOOP"
MODES = ("auto", "fast", "engine")
#: The engine takes about 3.5 events per decision; the fast path runs only where the engine
#: would stay within its event budget at this many events per decision.
EVENTS_PER_DECISION = 4
#: Note of a run whose policy excluded tenants (the engine's wording, ``sim/serve.py``).
NEVER_RUN = ("{} request(s) of models the policy does not serve were never run; they count "
             "as killed")


def closed_loop_mode(fast: bool | None = None) -> str:
    """``"fast"``, ``"engine"`` or ``"auto"``: from ``fast`` when given, else from ``ENV``.

    Examples
    --------
    >>> closed_loop_mode(True), closed_loop_mode(False)
    ('fast', 'engine')
    """
    if fast is not None:
        return "fast" if fast else "engine"
    mode = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if mode not in MODES:
        raise ConfigError(f"environment variable {ENV}={mode!r} is not a closed-loop path; "
                          f"use one of {', '.join(MODES)} (or unset it)")
    return mode


def fast_path_refusal(tenants: Sequence[Tenant], dram_bw: float, policy: object,
                      loop: ClosedLoop, max_events: int) -> str | None:
    """Why the fast path cannot stand in for the engine here, or None when it can.

    Examples
    --------
    >>> from npuweave.schedule import get_scheduler
    >>> from npuweave.schedule.tiling import make_tenant
    >>> a = make_tenant("a", [2.0], [10], buffer_bytes=10)
    >>> fast_path_refusal([a], 10.0, get_scheduler("fcfs"), ClosedLoop(2), 10**6)
    'policy fcfs is task-level'
    >>> fast_path_refusal([a], 10.0, get_scheduler("layerweaver"), ClosedLoop(2), 10**6) is None
    True
    """
    name = getattr(policy, "name", type(policy).__name__)
    if getattr(policy, "level", "layer") != "layer":
        return f"policy {name} is task-level"
    if getattr(type(policy), "decide", None) is not LayerBase.decide:
        return f"policy {name} decides with the clock (its own decide)"
    if EVENTS_PER_DECISION * _decisions(tenants, dram_bw, loop) > max_events:
        return f"the run may pass the engine's event budget ({max_events}); the engine checks it"
    return None


def run_fast(tenants: Sequence[Tenant], buffer_bytes: int, dram_bw: float, policy: Policy,
             loop: ClosedLoop) -> SimResult | None:
    """The engine's ``SimResult`` of closed-loop ``tenants`` under ``policy``, from the plan.

    Call only where ``fast_path_refusal`` is None; returns None (run the engine) when a
    replayed fetch does not end at its predicted time, which the tests say never happens.

    Examples
    --------
    >>> from npuweave.schedule import get_scheduler
    >>> from npuweave.schedule.tiling import make_tenant
    >>> a = make_tenant("a", [2.0], [10], buffer_bytes=10)
    >>> r = run_fast([a], 10, 10.0, get_scheduler("sequential"), ClosedLoop(2))
    >>> r.makespan_s, [(iv.resource, iv.start_s, iv.end_s) for iv in r.intervals]
    (6.0, [('DRAM', 0.0, 1.0), ('PE', 1.0, 3.0), ('DRAM', 3.0, 4.0), ('PE', 4.0, 6.0)])
    """
    board = Board(tenants, buffer_bytes, dram_bw)
    notes = start_streams(board, policy, loop.requests, loop.window_s)
    left = sum(board.excluded) if loop.first() else 0
    how, planned = path_and_why("auto", policy, board, loop.requests, loop.window_s)
    # the path is chosen once (plan_arrays would resolve it again)
    cols = (compiled_arrays(policy, board, loop.requests, loop.window_s) if how == "kernel"
            else plan_arrays(policy, board, loop.requests, loop.window_s, "python"))
    t, r, i, fs, fe, cs, ce = cols
    parts = _replayed(tenants, board, t, r, i, fs, fe, cs, ce)
    if parts is None:
        return None
    labels = tuple(x.label for x in tenants)
    intervals = interval_columns(labels, [x.units for x in tenants], (t, r, i, cs, ce),
                                 parts)
    makespan = float(ce[-1]) if len(ce) else 0.0
    if left:
        notes.append(NEVER_RUN.format(left))
    work = intervals.work()  # per-request ends and busy totals (the replay folded them)
    return SimResult(intervals, _requests(tenants, work), makespan, float(work.busy[0]),
                     float(work.busy[1]), tuple(notes), policy.name,
                     labels, f"closed-loop fast path: planned by {planned}; DMA parts "
                     "replayed (a layer-wise policy that only selects)")


def _replayed(tenants: Sequence[Tenant], board: Board, t: np.ndarray, r: np.ndarray,
              i: np.ndarray, fs: np.ndarray, fe: np.ndarray, cs: np.ndarray,
              ce: np.ndarray) -> Parts | None:
    """The DMA parts of the planned decisions (None: a fetch missed its predicted end), with
    both runs' reach where the compiled replay folds it in the same pass (then nothing
    reads the runs again for it)."""
    off, flat = board.tables.flat()[:2]
    span = run_span((t, r))
    worked, lo, hi, start_s, finish_s = fresh_slots(len(tenants), span)
    last = np.array([len(x.units) - 1 for x in tenants], np.int64)
    replay = replay_parts(t, i, off, flat, fs, fe, ce, board.buf, board.bw,
                          fold=(r, cs, span, worked, lo, hi, last, start_s, finish_s))
    if replay is None:
        return None
    reach = None
    if replay.folded is not None:
        busy_pe, busy_dram, in_order, exact = replay.folded
        reach = RunWork(span, worked, lo, hi, start_s, finish_s,
                        np.array([busy_pe, busy_dram]), in_order), exact
    return Parts(replay.parts[0], replay.parts[1], replay.parts[2], reach)


def _requests(tenants: Sequence[Tenant], work: RunWork) -> RequestColumns:
    """One record per request, by tenant then request: issued when the previous one of its
    stream finished (0 for the first), started at its first computation."""
    done = (work.start_s == work.start_s) & (work.finish_s == work.finish_s)  # not NaN
    slot = done.nonzero()[0]  # by tenant, then request: the slots' own order
    ten, req = np.divmod(slot, work.span)
    finish = work.finish_s[slot]
    # the previous slot's finish (slot 0's "previous", the last slot, is never read)
    arrival = np.where(req == 0, 0.0, work.finish_s[slot - 1])
    return RequestColumns(tuple(x.label for x in tenants), tuple(x.model for x in tenants),
                          tuple(x.batch for x in tenants), ten, req, arrival,
                          work.start_s[slot], finish)


def _decisions(tenants: Sequence[Tenant], dram_bw: float, loop: ClosedLoop) -> int:
    """An upper estimate of the run's decisions (as ``plan``'s, for every tenant)."""
    n = 0
    for x in tenants:
        units = len(x.weight_bytes)
        if loop.window_s is None:
            n += units * max(1, loop.requests or 1)
        else:
            busy = max(sum(x.compute_s), sum(b / dram_bw for b in x.weight_bytes))
            n += units * (int(loop.window_s / busy) + 2 if busy > 0 else 1 << 40)
    return n
