"""Layer-wise multi-tenant scheduling policies behind one small protocol.

A ``Tenant`` is a model as scheduling units; a ``Board`` holds the predicted schedule state and
the candidate group; a ``Policy`` picks the tenant whose next unit goes next. ``plan`` runs a
policy to the end without the engine and returns the ``Schedule`` (order plus predicted times).
Policies: ``schedulers()``; how each works: ``docs/SCHEDULING.md``.

Examples
--------
>>> from npuweave.schedule import make_tenant, plan
>>> cnn = make_tenant("cnn", [4.0, 4.0], [10, 10], buffer_bytes=40)
>>> nlp = make_tenant("nlp", [1.0, 1.0], [40, 40], buffer_bytes=40)
>>> s = plan("layerweaver", [cnn, nlp], buffer_bytes=40, dram_bw=10.0)
>>> s.makespan_s <= 18.0
True
"""

from npuweave.schedule.base import COMPUTE, EPS, MEMORY, Tenant
from npuweave.schedule.board import Board
from npuweave.schedule.plan import Schedule, plan
from npuweave.schedule.protocol import Policy
from npuweave.schedule.registry import get_scheduler, register_scheduler, schedulers
from npuweave.schedule.tiling import make_tenant, tile

__all__ = [
    "COMPUTE", "EPS", "MEMORY", "Board", "Policy", "Schedule", "Tenant", "get_scheduler",
    "make_tenant", "plan", "register_scheduler", "schedulers", "tile",
]
