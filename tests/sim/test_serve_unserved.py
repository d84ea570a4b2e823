"""Arrivals of a model the policy never serves count as killed, with or without batching.

On the memory-centric NPU both ResNet-50 and BERT-base are compute-intensive, so
``memory-only`` serves nothing. With batching, one batch per model forms and never runs, its
slot never frees, and the later arrivals are never formed into a batch; the request table
took those as done requests without a finish and refused them (exit 2 from ``serve``).
"""

from __future__ import annotations

import numpy as np
import pytest

from npuweave.fileio.flags import Batching
from npuweave.hardware import preset
from npuweave.metrics.requests import Outcome
from npuweave.sim.arrivals import poisson
from npuweave.sim.serving import serve

MODELS = ["resnet50", "bert-base"]


@pytest.mark.parametrize("batching", [None, Batching(0.002, 8)])
def test_requests_of_an_unserved_model_are_killed(batching):
    arr = poisson(MODELS, (300.0, 80.0), 0.05, seed=3)
    r = serve(MODELS, preset("memory-centric"), arr, "memory-only", batching=batching)
    assert len(arr) > 4
    assert r.table.state.tolist() == [Outcome.KILLED] * len(arr)
    assert np.isnan(r.table.finish_s).all()
