"""Task-level scheduling for PREMA: token arithmetic (Algorithm 2), mechanism selection
(Algorithm 3) and the named readings of the places where the paper is garbled or silent.

These are pure functions of numbers: the serving engine owns time and requests, a task-level
policy turns its view into these functions' arguments and their answer into a decision.
"""

from npuweave.schedule.prema.mechanism import CHECKPOINT, DRAIN, KILL, MECHANISMS, select_mechanism
from npuweave.schedule.prema.readings import PRESETS, Reading, reading
from npuweave.schedule.prema.tokens import (
    LEVELS,
    accrue,
    candidates,
    closed_form,
    initial_token,
    pick_shortest,
    priority_value,
    select,
    threshold,
)

__all__ = [
    "CHECKPOINT", "DRAIN", "KILL", "LEVELS", "MECHANISMS", "PRESETS", "Reading", "accrue",
    "candidates", "closed_form", "initial_token", "pick_shortest", "priority_value", "reading",
    "select", "select_mechanism", "threshold",
]
