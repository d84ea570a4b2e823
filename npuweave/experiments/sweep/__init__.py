"""Declarative sweeps: an ``experiment.yaml`` of fixed settings and axes, run point by point
on this process, a local process pool or a Dask cluster, streamed to CSV or Parquet.

Examples
--------
>>> from npuweave.experiments.sweep import sweep_from_dict, run_sweep
>>> spec = sweep_from_dict({"kind": "schedule",
...                         "fixed": {"models": "RN,BB", "requests": 2},
...                         "axes": {"scheduler": ["sequential", "layerweaver"]}})
>>> report = run_sweep(spec, jobs=1)                     # doctest: +SKIP
>>> [round(r["stp"], 2) for r in report.rows]            # doctest: +SKIP
"""

from npuweave.experiments.sweep.executors import run_point
from npuweave.experiments.sweep.kinds import KINDS
from npuweave.experiments.sweep.run import SweepReport, run_sweep, standalone_table
from npuweave.experiments.sweep.spec import Point, SweepSpec, load_sweep, sweep_from_dict
from npuweave.experiments.sweep.store import read_results

__all__ = ["KINDS", "Point", "SweepReport", "SweepSpec", "load_sweep", "read_results",
           "run_point", "run_sweep", "standalone_table", "sweep_from_dict"]
