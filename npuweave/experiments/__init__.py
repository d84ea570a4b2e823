"""Experiments as Python functions: scheduler comparisons and paper reproductions.

``compare`` runs closed-loop streams under several schedulers and measures each run;
``reproduce_layerweaver`` re-runs the Layerweaver evaluation (thesis IV.5) and ``headline``
condenses it into the numbers the thesis quotes (``THESIS``); ``lw_setup`` holds the
reproduction's assumptions, ``lw_sweeps`` the AI-MT and sequence-length sweeps
(``aimt_sweep.sweep_aimt`` the grid of one run), and
``executor.run_map`` runs independent tasks serially or on a process pool. See
``docs/REPRODUCTION.md``.
"""

from npuweave.experiments.aimt_sweep import AimtSweep, sweep_aimt
from npuweave.experiments.compare import (
    ROW_METRICS,
    compare,
    evaluate,
    resolve_schedulers,
    scheduler_names,
    standalone_lookup,
)
from npuweave.experiments.executor import run_map
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
from npuweave.experiments.lw_setup import CONFIGS, DERIVED_SEQ_LEN, fluid_bound
from npuweave.experiments.lw_sweeps import sweep_aimt_thresholds, sweep_seq_len

__all__ = [
    "AimtSweep", "CONFIGS", "DERIVED_SEQ_LEN", "ROW_METRICS", "SCENARIOS", "THESIS", "all_pairs", "averages",
    "compare", "evaluate", "fluid_bound", "headline", "model_spec", "parse_pairs",
    "reproduce_layerweaver", "resolve_schedulers", "run_map", "scheduler_names",
    "standalone_lookup", "sweep_aimt", "sweep_aimt_thresholds", "sweep_seq_len",
]
