"""The reference decision loop: the policy's own ``select`` and ``Board.commit``, one at a time.

This is the loop every fast path is checked against decision by decision (the compiled loop,
``npuweave.schedule.loop``, performs its float operations in the same order). It is written
once for both arrival processes, as the compiled loop is:

* **closed loop** (``plan``): no arrival source; a stream re-issues its next request from the
  board's dispatch hook (``plan.stream_hook``) and the run ends when no tenant is active;
* **open arrivals** (``npuweave.sim.lwserve.serve_layerwise``): an ``ArrivalSource`` admits
  what has arrived (batches into board tenants) before each decision, and when nothing is in
  service says when work can start next; the board (a ``Predictor``) is told that time. The
  run ends when the source has nothing more, or once it counts ``limit`` missed deadlines.

A decision is taken when the DMA engine frees, ``board.t_m``: the time the policy sees.
The event engine (``npuweave.sim``) stays the reference of this loop; tests compare them where
no arrival ties a decision (``tests/lwplus/test_lwplus_serve.py``,
``tests/sim/test_serve_predict.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

from npuweave.schedule.board import Board


class ArrivalSource(Protocol):
    """Open arrivals for ``decide``: what is admitted, when work comes next, what is missed."""

    missed: int

    def admit(self, now: float) -> None:
        """Put what has arrived by ``now`` in service (issue it on the board)."""

    def wake(self, now: float) -> float | None:
        """With nothing in service: when work can start next (None: never)."""


def decide(board: Board, select: Callable[[Board], int], source: ArrivalSource | None = None,
           limit: float = math.inf, record: bool = False) -> tuple[int, list]:
    """Run ``board`` to the end with ``select`` choosing each tenant; returns the number of
    decisions and, ``record``-ed, the seven columns ``tenant, request, unit, fs, fe, cs,
    ce`` (one entry per decision; empty lists when not recorded). ``source`` is None for a closed loop (the board started, its hook re-issuing),
    else the open arrivals, and ``board`` is a ``Predictor`` (it is told the time after an
    idle gap); ``limit``: stop once ``source.missed`` reaches it.

    Examples
    --------
    >>> from npuweave.schedule.registry import get_scheduler
    >>> from npuweave.schedule.tiling import make_tenant
    >>> b = Board([make_tenant("a", [2.0], [10], 10)], 10, 10.0)
    >>> b.issue(0, 0, 0.0)
    >>> decide(b, get_scheduler("sequential").select, record=True)
    (1, [[0], (0,), (0,), (0.0,), (1.0,), (1.0,), (3.0,)])
    """
    chosen: list[int] = []
    rows: list[tuple] = []
    commit = board.commit
    n = 0
    now = 0.0
    while True:
        if source is not None:
            if source.missed >= limit:
                break
            source.admit(now)
            if not board.active:
                nxt = source.wake(now)
                if nxt is None:
                    break
                now = nxt
                board.tell(now)  # type: ignore[attr-defined]
                continue
        elif not board.active:
            break
        t = select(board)
        if record:
            chosen.append(t)
            rows.append(commit(t))
        else:
            commit(t)
        n += 1
        now = board.t_m
    return n, ([chosen, *zip(*rows)] if rows else [[] for _ in range(7)])
