"""npuweave: share one NPU well among many DNN models.

Stages (each a subpackage; data flows one way): ``workload`` -> ``cost`` (with ``hardware``)
-> ``schedule`` -> ``sim`` -> ``metrics`` -> ``report``; ``compile`` and ``numbers`` hang off
the side. See ARCHITECTURE in the README.
"""

from npuweave.errors import (
    ConfigError,
    InfeasibleError,
    ModelImportError,
    NpuweaveError,
    UnknownNameError,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "InfeasibleError",
    "ModelImportError",
    "NpuweaveError",
    "UnknownNameError",
    "__version__",
]
