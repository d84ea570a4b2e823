"""``metrics.core``: each formula once, against hand calculations; the three stacks agree.

Golden numbers are worked by hand in the comments (no project output is copied).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.errors import NpuweaveError
from npuweave.metrics import core, prema
from npuweave.metrics.requests import request_table
from npuweave.metrics.serving import summarize


def test_formulas_by_hand():
    # latencies 3, 2, 8 s against isolated 1, 2, 4 s: NTT 3, 1, 2
    n = core.ntt([3.0, 2.0, 8.0], [1.0, 2.0, 4.0])
    assert n.tolist() == [3.0, 1.0, 2.0]
    assert core.antt(n) == 2.0                       # (3 + 1 + 2) / 3
    assert core.stp_task_set(n) == pytest.approx(1 / 3 + 1 + 1 / 2)
    assert core.stp_open_loop([1.0, 2.0, 4.0], 14.0) == 0.5   # 7 standalone s in 14 s
    # priorities 1, 1, 2 (sum 4): PP = (1/3)/(1/4), 1/(1/4), (1/2)/(2/4) = 4/3, 4, 1
    assert core.fairness(1.0 / n, [1, 1, 2]) == pytest.approx(1 / 4)
    # NTT 3, 1, 2 within N = 2: only 3 exceeds -> 1/3; N = 1: 3 and 2 exceed -> 2/3
    assert core.sla_violation(n, [1.0, 2.0]).tolist() == [2 / 3, 1 / 3]


def test_edge_cases():
    assert core.fairness([0.0, 0.0], [1, 1]) == 0.0       # nobody progressed: not NaN
    assert math.isnan(core.antt([]))
    assert math.isnan(core.violation_rate(np.zeros(0, bool)))
    assert core.sla_violation([math.nan], [20.0]).tolist() == [1.0]  # unfinished violates
    assert core.sla_mults("prema") == tuple(float(m) for m in range(2, 21))
    for bad in ("nope", [0], [-1.0], [math.inf], ["x"]):
        with pytest.raises(NpuweaveError):
            core.sla_mults(bad)


_times = st.floats(0.01, 100.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_times, _times, st.integers(1, 9)), min_size=1, max_size=12))
def test_serving_and_prema_are_one_stack(rows):
    """The serving summary and PREMA's task-set metrics give the same bits on the same tasks."""
    lat = [a for a, _, _ in rows]
    iso = [b for _, b, _ in rows]
    prio = [p for _, _, p in rows]
    k = len(rows)
    t = request_table(("m",), [0] * k, [0.0] * k, lat, iso, priority=prio)
    row = summarize(t, span_s=1.0, stp_form="task-set", sla_mults="prema")[0]
    n = prema.ntt([0.0] * k, lat, iso)
    assert row["antt"] == prema.antt(n)
    assert row["stp_task_set"] == prema.stp(n)
    assert row["fairness"] == prema.fairness(n, prio)
    sla = prema.sla_violation(n).tolist()
    assert [row[f"sla_violation_x{m:g}"] for m in prema.SLA_MULTS] == sla
