"""Regression pin: the Layerweaver reproduction table must not move under the serving core.

The golden rows in ``data/layerweaver_pin_df17c2d.json`` were produced by commit ``df17c2d``
(the engine before the serving-core refactor of issue 9: positional units, the closed-loop rule
in four places) with the script below, run on that commit's tree:

    reproduce_layerweaver("RN+BB,IC+XL,MN+NCF,RX+BL", ("single-batch", "multi-batch"),
                          requests=4, cost_model="systolic-ws")

Four pairs cover every compute model and every memory model once, both scenarios, and all six
thesis schedulers (48 runs). The cost model is named explicitly, so a later change of the CLI
default cost model does not move these numbers.

Issue 21 renamed that commit's ``aimt`` (a fetch-ahead band controller, default thresholds
0.1 / 0.5) to ``aimt-fetchahead`` and made whole embedding tables NCF's default; the pin runs
the same controller and the zoo's gather NCF, so it still pins the same physics.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npuweave.experiments.layerweaver import reproduce_layerweaver

PIN = Path(__file__).parent / "data" / "layerweaver_pin_df17c2d.json"
KEYS = ("stp", "antt", "fairness", "pe_utilization", "dram_utilization", "makespan_ratio")


def test_reproduction_table_is_unchanged():
    golden = json.loads(PIN.read_text())
    # the physics and the greedy reading of the pinned commit: SCALE-Sim-exact costs, the zoo's
    # 128 tokens (config "systolic") and npuweave's original idle-time reading
    names = ("sequential", "compute-only", "memory-only", "fair", "aimt-fetchahead",
             "layerweaver")
    rows = reproduce_layerweaver("RN+BB,IC+XL,MN+NCF,RX+BL", ("single-batch", "multi-batch"),
                                 names, requests=4, config="systolic", ncf="gather",
                                 scheduler_opts={"layerweaver": {"reading": "npuweave"},
                                                 "aimt-fetchahead": {"low": 0.1, "high": 0.5}})
    old_name = {"aimt-fetchahead": "aimt"}
    got = {(r["scenario"], r["pair"], old_name.get(r["scheduler"], r["scheduler"])): r
           for r in rows}
    assert len(got) == len(golden) == 48
    for g in golden:
        r = got[g["scenario"], g["pair"], g["scheduler"]]
        for k in KEYS:
            if g[k] is None:  # undefined then (a policy that served nothing): still undefined
                assert r[k] is None, (g["pair"], g["scheduler"], k)
            else:
                assert r[k] == pytest.approx(g[k], rel=1e-12, abs=1e-15), (g["pair"], k)
