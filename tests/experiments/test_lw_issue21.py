"""Issue 21's setup: NCF's default reading, AI-MT's CLI options, the new rows."""

from __future__ import annotations

import subprocess
import sys

import pytest

from npuweave.experiments.layerweaver import SCENARIOS, SCHEDULERS, Physics, _spec, make_tasks
from npuweave.hardware import preset
from npuweave.sim.tenants import tenants_for

# thesis IV.4.A, scheduling-cost paragraph: average latency of a single layer of the evaluated
# workloads at batch 1 on the evaluated NPUs
LO_S, HI_S = 4.7e-6, 221e-6


def mean_layer_latency(ncf: str, npu: str) -> float:
    phys = Physics("maestro", 32, ncf)
    scenario = next(s for s, v in SCENARIOS.items() if v.npu == npu)
    t = tenants_for([_spec("NCF", scenario, phys)], preset(npu), 1, "maestro")[0]
    bw = preset(npu).dram_bw
    lat = [max(c, b / bw) for c, b in zip(t.compute_s, t.weight_bytes)]
    return sum(lat) / len(lat)


@pytest.mark.parametrize("npu", ["memory-centric", "compute-centric"])
def test_default_ncf_has_layer_latencies_in_the_thesis_range(npu):
    assert Physics("maestro", 32).ncf == "tables"
    assert LO_S <= mean_layer_latency("tables", npu) <= HI_S
    # the zoo's gather, kept as a sensitivity study, falls far below the stated range
    assert mean_layer_latency("gather", npu) < LO_S / 10


def test_rows_for_the_random_interleaver_and_the_former_controller():
    assert {"aimt", "aimt-fetchahead", "random"} <= set(SCHEDULERS)
    tasks = make_tasks([("RN", "BB")], ["single-batch"], ["aimt-fetchahead", "aimt"], 2,
                       Physics("maestro", 32), {"aimt": {"mem": 0.25, "dist": 0.1}})
    assert [t.opts for t in tasks] == [(("high", 0.2), ("low", 0.0)),
                                       (("dist", 0.1), ("mem", 0.25))]


@pytest.mark.parametrize("args, match", [
    (["--ncf", "rows"], "ncf"),
    (["--aimt", "mem=2"], '"mem" must be a number in [0, 1]'),
    (["--aimt", "low=0.1"], "scheduler 'aimt' has no option 'low'"),
    (["--aimt", "dist=-1"], '"dist"'),
    (["--aimt", "merge"], "key=value"),
    (["--aimt-sweep", "--aimt", "mem=0.1"], "chosen by --aimt-sweep"),
    # accepted and ignored before: no aimt row to apply it to
    (["--schedulers", "layerweaver", "--aimt", "mem=0.5"], "not among --schedulers"),
])
def test_bad_aimt_and_ncf_options_exit_2_with_one_line(args, match):
    proc = subprocess.run([sys.executable, "-m", "npuweave", "reproduce", "layerweaver",
                           "--pairs", "RN+BB", *args], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and match in lines[0]
    assert proc.stdout == ""  # nothing ran, no header


def test_grid_edges_report_where_the_best_lands():
    from npuweave.experiments.lw_sweeps import aimt_grid, grid_edges

    grid = aimt_grid()
    assert len(grid) == 49
    assert grid_edges(0.5, 0.01, grid) == []            # inside: the issue-21 result
    assert grid_edges(0.5, 0.5, grid) == ["dist"]       # largest dist tried, below its limit
    assert grid_edges(1.0, 0.02, grid) == []            # mem = 1 is the rule's own limit
    small = aimt_grid([0.0, 0.25], [0.0, 0.1])
    assert grid_edges(0.25, 0.1, small) == ["mem", "dist"]


def test_grid_rows_equal_one_run_per_setting_and_some_are_reused():
    # run_grid skips a setting whose thresholds lie in an earlier run's box; its rows must
    # equal running every setting on its own (the row of each setting, options included)
    import npuweave.experiments.layerweaver as lw

    grid = tuple((m, d) for m in (0.0, 1 / 32, 0.5, 1.0) for d in (0.0, 0.01, 0.5))
    task = lw.Task(("MN", "NCF"), "single-batch", "aimt", 2, (), Physics("maestro", 32),
                   stp_only=True, grid=grid)
    runs = []
    real = lw.run_task

    def counted(t, policy=None):
        runs.append(t.opts)
        return real(t, policy)

    lw.run_task = counted
    try:
        rows = lw.run_grid(task)
    finally:
        lw.run_task = real
    alone = [real(lw.Task(task.pair, task.scenario, "aimt", 2,
                          (("dist", d), ("mem", m)), task.phys, True)) for m, d in grid]
    assert rows == alone
    assert len(runs) < len(grid)  # a small memory threshold changes no test here: reused
