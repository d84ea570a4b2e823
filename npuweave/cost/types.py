"""``LayerCost``: what one layer costs on one NPU at one batch size.

Seconds and bytes at the boundary. Costs add with ``+`` (a model's total is the sum of its
layers) and become plain dicts with ``to_dict()``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, TypeVar

R = TypeVar("R", bound="CostRecord")


class CostRecord:
    """What the cost records share: ``+`` field by field (``sum()`` starts from 0) and
    ``to_dict()``. For frozen dataclasses; a record with another rule for a field overrides
    ``__add__``."""

    __slots__ = ()

    def __add__(self: R, other: R) -> R:
        if type(other) is not type(self):
            return NotImplemented
        return type(self)(*(getattr(self, f.name) + getattr(other, f.name)
                            for f in fields(self)))  # type: ignore[arg-type]

    def __radd__(self: R, other: object) -> R:
        if other == 0:  # lets sum() start from its default 0
            return self
        return NotImplemented

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True, slots=True)
class LayerCost(CostRecord):
    """Cost of one layer (or, after ``+``, of several executed back to back).

    Attributes
    ----------
    compute_s : time the PE array (and vector unit) is busy.
    memory_s : time the DRAM interface is busy for this layer's traffic (latency included).
    dram_bytes : all DRAM traffic: ``weight_bytes + spill_bytes``.
    weight_bytes : weight (parameter) bytes fetched from DRAM at the layer's weight format.
    spill_bytes : activation bytes that do not fit the activation buffer, written and read back.
    act_bytes : input plus output activation bytes of the layer (on-chip footprint).
    macs : multiply-accumulates (whole batch).
    utilization : MACs / (PE capacity over ``compute_s``); 0 for layers without MACs.
    """

    compute_s: float = 0.0
    memory_s: float = 0.0
    dram_bytes: int = 0
    weight_bytes: int = 0
    spill_bytes: int = 0
    act_bytes: int = 0
    macs: int = 0
    utilization: float = 0.0

    def __add__(self, other: LayerCost) -> LayerCost:
        if not isinstance(other, LayerCost):
            return NotImplemented
        busy = self.compute_s + other.compute_s
        util = ((self.utilization * self.compute_s + other.utilization * other.compute_s) / busy
                if busy > 0 else 0.0)
        return LayerCost(
            compute_s=busy,
            memory_s=self.memory_s + other.memory_s,
            dram_bytes=self.dram_bytes + other.dram_bytes,
            weight_bytes=self.weight_bytes + other.weight_bytes,
            spill_bytes=self.spill_bytes + other.spill_bytes,
            act_bytes=self.act_bytes + other.act_bytes,
            macs=self.macs + other.macs,
            utilization=util,
        )

    @property
    def time_s(self) -> float:
        """Time alone on the NPU with compute and DRAM overlapped: the larger of the two."""
        return max(self.compute_s, self.memory_s)

    @property
    def bound(self) -> str:
        """``"compute"`` or ``"memory"``: which resource dominates this layer."""
        return "compute" if self.compute_s >= self.memory_s else "memory"

    @property
    def intensity(self) -> float:
        """Arithmetic intensity: operations (2 per MAC) per DRAM byte (inf with no traffic)."""
        return 2.0 * self.macs / self.dram_bytes if self.dram_bytes else float("inf")


def toy_models() -> list[tuple[str, list[LayerCost]]]:
    """The two models of the documentation's examples on ``npuweave.hardware.toy_npu()``, as
    the ``(label, [LayerCost, ...])`` pairs that the simulators take as given:

    * ``cnn``: 3 layers of 4 s of compute and 10 weight bytes (a 1 s fetch on the toy NPU);
    * ``nlp``: 3 layers of 0.5 s of compute and 40 weight bytes (a 4 s fetch).

    Examples
    --------
    >>> [(label, len(costs), costs[0].compute_s, costs[0].weight_bytes)
    ...  for label, costs in toy_models()]
    [('cnn', 3, 4.0, 10), ('nlp', 3, 0.5, 40)]
    """
    return [("cnn", [LayerCost(compute_s=4.0, weight_bytes=10)] * 3),
            ("nlp", [LayerCost(compute_s=0.5, weight_bytes=40)] * 3)]
