"""Closed-loop streams: k streams, each re-issues its next request when the previous finishes.

(Work in progress: the signatures below are the published API.)
"""

from __future__ import annotations

from npuweave.cost.types import LayerCost
from npuweave.hardware.npu import NPU
from npuweave.sim.result import SimResult

ModelSpec = "str | tuple[str, list[LayerCost]]"


def run_streams(models: list[str | tuple[str, list[LayerCost]]], npu: NPU,
                batch: int | list[int] = 1, scheduler: str = "layerweaver", requests: int = 10,
                window_s: float | None = None, seed: int = 0, cost_model: str = "systolic-ws",
                **scheduler_opts: object) -> SimResult:
    """Run one closed-loop stream per model on ``npu`` under ``scheduler``."""
    raise NotImplementedError("run_streams lands in the next commit")


def standalone_time(model: str | tuple[str, list[LayerCost]], npu: NPU, batch: int = 1,
                    cost_model: str = "systolic-ws") -> float:
    """Seconds one request of ``model`` takes alone on the same engine."""
    raise NotImplementedError("standalone_time lands in the next commit")
