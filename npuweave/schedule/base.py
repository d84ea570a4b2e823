"""The nouns every layer-wise policy shares: ``Tenant`` (what runs) and its unit kinds.

A tenant is one model served as a stream of identical requests; each request is the tenant's
ordered list of scheduling units (layers, or weight tiles of layers too large for the weight
buffer, see ``npuweave.schedule.tiling``). A policy looks at a ``Board`` (the predicted
schedule state plus the candidate group) and names the tenant whose next unit is dispatched
next (``npuweave.schedule.protocol.Policy``); it never advances time: the caller commits the
decision with ``Board.commit``.
"""

from __future__ import annotations

from dataclasses import dataclass

COMPUTE = "compute"
MEMORY = "memory"

# Idle times below this many seconds count as zero: they are rounding noise, not idle time.
EPS = 1e-12


@dataclass(frozen=True, slots=True)
class Tenant:
    """One stream's model as scheduling units (names, PE seconds, weight bytes per unit).

    Examples
    --------
    >>> t = Tenant("toy", ("a", "b"), (1e-6, 2e-6), (100, 0))
    >>> t.total_compute_s
    3e-06
    """

    label: str
    units: tuple[str, ...]
    compute_s: tuple[float, ...]
    weight_bytes: tuple[int, ...]
    model: str = ""
    batch: int = 1

    @property
    def total_compute_s(self) -> float:
        return sum(self.compute_s)

    @property
    def total_weight_bytes(self) -> int:
        return sum(self.weight_bytes)
