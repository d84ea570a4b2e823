"""Experiments as Python functions: scheduler comparisons and paper reproductions.

``compare`` runs closed-loop streams under several schedulers and measures each run;
``reproduce_layerweaver`` re-runs the Layerweaver evaluation (thesis IV.5) and ``headline``
condenses it into the numbers the thesis quotes (``THESIS``). See ``docs/REPRODUCTION.md``.
"""

from npuweave.experiments.compare import (
    ROW_METRICS,
    compare,
    evaluate,
    resolve_schedulers,
    scheduler_names,
    standalone_lookup,
)
from npuweave.experiments.layerweaver import (
    SCENARIOS,
    THESIS,
    all_pairs,
    averages,
    headline,
    model_spec,
    parse_pairs,
    reproduce_layerweaver,
)

__all__ = [
    "ROW_METRICS", "SCENARIOS", "THESIS", "all_pairs", "averages", "compare", "evaluate",
    "headline", "model_spec", "parse_pairs", "reproduce_layerweaver", "resolve_schedulers",
    "scheduler_names", "standalone_lookup",
]
