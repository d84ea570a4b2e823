"""The policy protocol: what every scheduling policy sees, and what it may answer.

The serving simulator (``npuweave.sim.serve``) owns time, the NPU and the requests; a policy
only decides. Whenever the NPU can take new work (the DMA engine is free, a request arrives,
a request finishes, a wake-up fires) the simulator calls ``policy.decide(now, view)`` and
carries out the returned ``Decision``:

* ``Dispatch(tenant)``: layer-wise policies. Hand the next unit (layer or weight tile) of the
  tenant's current request to the NPU. ``tenant`` must be in ``view.board.active``.
* ``Run(request)``: task-level policies. Give the NPU to this request (start it, or resume a
  preempted one) until it is finished or preempted; its units are then dispatched in order
  without asking again.
* ``Preempt(request, mechanism, then)``: take the NPU from a running request with a
  ``Mechanism`` (checkpoint, kill, drain) and run ``then`` afterwards (``None``: ask again).
  ``restart=False`` with ``KILL`` drops the request for good (state ``killed``).
* ``Idle(until_s)``: nothing now; ask again at ``until_s`` (``inf``: at the next event).

Two policy shapes share this one decision type:

* ``LayerPolicy`` (Layerweaver, AI-MT, fair, sequential, compute-only, memory-only): picks
  among the candidate group, the next unit of every active tenant. Its lookahead is the
  ``Board``, the predicted hardware state, kept told of ``now`` by the simulator. Its hot
  method ``select(board) -> tenant`` is what ``decide`` calls; ``plan`` and the closed-loop
  kernel call it directly.
* ``TaskPolicy`` (FCFS, SJF, HPF, round robin, PREMA's token policy): picks a request.

A policy may ask to be woken every ``period_s`` seconds (PREMA's scheduling quantum); ``None``
means only on events. Policies never advance time and never write to requests or the board
(``Board.commit`` is the simulator's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    from npuweave.schedule.base import Tenant
    from npuweave.schedule.board import Board


class Mechanism(Enum):
    """How a running request gives up the NPU (priced by ``npuweave.cost.preemption``)."""

    CHECKPOINT = "checkpoint"  # store live activations, resume later where it stopped
    KILL = "kill"              # discard its progress; restart from its first unit later
    DRAIN = "drain"            # let it run to its end, then switch


@dataclass(frozen=True, slots=True)
class Dispatch:
    """Layer-wise: dispatch the next unit of tenant ``tenant``'s current request."""

    tenant: int


@dataclass(frozen=True, slots=True)
class Run:
    """Task-level: give the NPU to request ``request`` (an id) until it ends or is preempted."""

    request: int


@dataclass(frozen=True, slots=True)
class Preempt:
    """Take the NPU from running request ``request`` with ``mechanism``; then run ``then``."""

    request: int
    mechanism: Mechanism = Mechanism.CHECKPOINT
    then: int | None = None
    restart: bool = True


@dataclass(frozen=True, slots=True)
class Idle:
    """Do nothing now; ask again at ``until_s`` (``inf``: at the next event)."""

    until_s: float = math.inf


Decision = Dispatch | Run | Preempt | Idle
IDLE = Idle()


class RequestView(Protocol):
    """What a policy may read of a request (``npuweave.sim.requests.Request`` has all this)."""

    id: int
    model: int
    arrival_s: float
    priority: int
    deadline_s: float
    batch: int
    units: int
    progress: int
    dispatched: int
    preemptions: int

    @property
    def remaining_units(self) -> int: ...


@dataclass(slots=True, eq=False)
class View:
    """The state a policy decides on; the simulator updates it in place before each call.

    Attributes
    ----------
    now : current simulated time (seconds).
    tenants : the run's models as scheduling units (index = ``Request.model``).
    queued : arrived requests waiting for the NPU, preempted ones included, in arrival order.
    running : requests holding the NPU (task-level: at most one; layer-wise: each active
        tenant's current request).
    board : the predictor (layer-wise policies; ``None`` for task-level runs).
    isolated_s : cold isolated seconds of one request per tenant (PREMA's normalizer).
    remaining : per tenant, ``remaining[t][i]`` = isolated seconds of units ``i..end``
        (``max(compute, fetch)`` per unit), so ``remaining[t][0] == isolated estimate``.
    """

    now: float
    tenants: tuple[Tenant, ...]
    queued: list[RequestView] = field(default_factory=list)
    running: list[RequestView] = field(default_factory=list)
    board: Board | None = None
    isolated_s: tuple[float, ...] = ()
    remaining: tuple[tuple[float, ...], ...] = ()

    def remaining_s(self, request: RequestView) -> float:
        """Estimated isolated seconds left for ``request`` (from its ``progress``)."""
        rest = self.remaining[request.model]
        return rest[request.progress] if request.progress < len(rest) else 0.0

    def waiting(self) -> Sequence[RequestView]:
        """Every request that could be given the NPU now (queued, then running)."""
        return [*self.queued, *self.running]


class Policy(Protocol):
    """A layer-wise scheduling policy as ``plan`` and the closed-loop kernel use it.

    ``start`` runs once before the first decision; it may exclude tenants
    (``board.exclude(t)``) and returns notes for the result. ``select`` returns one tenant index
    from ``board.active``; it must not change the board.
    """

    name: str

    def start(self, board: Board) -> list[str]: ...

    def select(self, board: Board) -> int: ...


class LayerPolicy(Protocol):
    """A layer-wise policy: ``select`` names the tenant whose next unit goes next.

    ``start`` runs once before the first decision; it may exclude tenants
    (``board.exclude(t)``) and returns notes for the result.
    """

    name: str
    level: ClassVar[str]
    period_s: float | None

    def start(self, board: Board) -> list[str]: ...

    def select(self, board: Board) -> int: ...

    def decide(self, now: float, view: View) -> Decision: ...


class TaskPolicy(Protocol):
    """A task-level policy: ``decide`` names the request that holds the NPU."""

    name: str
    level: ClassVar[str]
    period_s: float | None

    def start(self, view: View) -> list[str]: ...

    def decide(self, now: float, view: View) -> Decision: ...


AnyPolicy = LayerPolicy | TaskPolicy


class LayerBase:
    """Mixin for layer-wise policies: ``decide`` is ``Dispatch(select(view.board))``."""

    level: ClassVar[str] = "layer"
    period_s: float | None = None

    def select(self, board: Board) -> int:  # pragma: no cover - every policy overrides it
        raise NotImplementedError

    def loop_code(self) -> int | None:
        """The policy's code in the one compiled decision loop (``npuweave.schedule.loop``;
        the codes are in ``npuweave.schedule.loop_steps``), asked after ``start``; None: the
        loop does not run it. A subclass that overrides ``select`` but not ``loop_code``
        leaves the loop (``closed.policy_code``)."""
        return None

    def decide(self, now: float, view: View) -> Decision:
        assert view.board is not None, "layer-wise policies need the board"
        return Dispatch(self.select(view.board))


class TaskBase:
    """Base of task-level policies: no wake-ups, no notes; subclasses write ``decide``."""

    level: ClassVar[str] = "task"
    name = "task"
    period_s: float | None = None

    def start(self, view: View) -> list[str]:
        return []

    def decide(self, now: float, view: View) -> Decision:  # pragma: no cover - abstract
        raise NotImplementedError


def first_by(requests: Sequence[RequestView], key: object) -> RequestView | None:
    """The request with the least ``key(r)`` (ties: lower id); None when empty."""
    if not requests:
        return None
    return min(requests, key=lambda r: (key(r), r.id))  # type: ignore[operator]
