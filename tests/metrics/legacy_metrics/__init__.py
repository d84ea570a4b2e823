"""The closed-loop metrics as they were before ``IntervalIndex`` (record by record).

A frozen copy of ``npuweave/metrics/{common,multitask,occupancy,summary,latency}.py`` at
commit df17c2d, kept only so ``test_metrics_index.py`` can check that the array version gives
the very same numbers. Not part of the package.
"""
