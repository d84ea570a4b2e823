"""npuweave: share one NPU well among many DNN models.

Stages (each a subpackage; data flows one way): ``workload`` -> ``cost`` (with ``hardware``)
-> ``schedule`` -> ``sim`` -> ``metrics`` -> ``report``; ``compile`` and ``numbers`` hang off
the side. See ARCHITECTURE in the README.

The front door of every simulation is ``simulate(SimSpec(models, npu, arrivals, scheduler))``
(``npuweave.sim.simulate``): it runs the closed-loop fast path, the compiled serving loop or
the event engine, and the result says which and why.
"""

from typing import TYPE_CHECKING, Any

from npuweave.errors import (
    ConfigError,
    InfeasibleError,
    ModelImportError,
    NpuweaveError,
    UnknownNameError,
)

if TYPE_CHECKING:
    from npuweave.sim.arrival_processes import ClosedLoop
    from npuweave.sim.simulate import SimSpec, simulate

__version__ = "0.1.0"

#: Imported on first use, so ``import npuweave`` (and every CLI command) stays cheap.
_LAZY = {"ClosedLoop": "npuweave.sim.arrival_processes", "SimSpec": "npuweave.sim.simulate",
         "simulate": "npuweave.sim.simulate"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'npuweave' has no attribute {name!r}")

__all__ = [
    "ClosedLoop",
    "ConfigError",
    "InfeasibleError",
    "ModelImportError",
    "NpuweaveError",
    "SimSpec",
    "UnknownNameError",
    "__version__",
    "simulate",
]
