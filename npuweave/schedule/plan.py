"""``plan``: run a policy to the end on the predicted state, without the engine.

The result is a ``Schedule``: the dispatch order and, per unit, the predicted fetch and compute
times. It is what the thesis's scheduler hands to the NPU; ``npuweave.sim`` executes the same
decisions on the event-driven engine and reproduces these times exactly.

Requests follow the closed-loop stream rule: each tenant's next request is issued when its
previous one finishes (known as soon as the previous request's last unit is dispatched, which
is when the thesis's scheduler appends queued requests), for ``requests`` requests per tenant
or while the previous request finished before ``window_s``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from npuweave.schedule.base import Policy, Tenant
from npuweave.schedule.board import Board, DispatchHook


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

    @property
    def makespan_s(self) -> float:
        return max(self.compute_end_s, default=0.0)


def stream_hook(board: Board, requests: int | None, window_s: float | None) -> DispatchHook:
    """The closed-loop rule as a ``Board`` dispatch hook: re-issue at the predicted finish."""

    def reissue(t: int, r: int, finish_s: float) -> None:
        if window_s is not None:
            if finish_s < window_s:
                board.issue(t, r + 1, finish_s)
        elif requests is not None and r + 1 < requests:
            board.issue(t, r + 1, finish_s)

    return reissue


def start_streams(board: Board, policy: Policy, requests: int | None,
                  window_s: float | None) -> list[str]:
    """Issue every stream's first request at time 0 and let the policy prepare."""
    board.on_dispatched = stream_hook(board, requests, window_s)
    notes = policy.start(board)
    for t in range(len(board.tenants)):
        if window_s is None or window_s > 0.0:
            board.issue(t, 0, 0.0)
    return notes


def plan(policy: str | Policy, tenants: Sequence[Tenant], buffer_bytes: int, dram_bw: float,
         requests: int = 1, window_s: float | None = None, **opts: object) -> Schedule:
    """Schedule ``requests`` closed-loop requests per tenant with ``policy`` (a name or object).

    Examples
    --------
    >>> from npuweave.schedule.tiling import make_tenant
    >>> a = make_tenant("a", [2.0], [10], buffer_bytes=10)
    >>> plan("sequential", [a], buffer_bytes=10, dram_bw=10.0, requests=2).compute_end_s
    (3.0, 6.0)
    """
    if isinstance(policy, str):
        from npuweave.schedule.registry import get_scheduler

        policy = get_scheduler(policy, **opts)
    board = Board(tenants, buffer_bytes, dram_bw)
    notes = start_streams(board, policy, requests, window_s)
    order, fs, fe, cs, ce = [], [], [], [], []
    select, commit = policy.select, board.commit
    while board.active:
        t = select(board)
        r, i, a, b, c, d = commit(t)
        order.append((t, r, i))
        fs.append(a)
        fe.append(b)
        cs.append(c)
        ce.append(d)
    return Schedule(tuple(x.label for x in tenants), tuple(order), tuple(fs), tuple(fe),
                    tuple(cs), tuple(ce), tuple(notes), policy.name)
