"""Properties of the serving metrics on random request tables (hypothesis)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.metrics.latency import percentile, sla_violation_rate
from npuweave.metrics.requests import request_table
from npuweave.metrics.serving import LATENCY_QS, summarize


@st.composite
def tables(draw, allow_killed=True):
    n = draw(st.integers(1, 40))
    n_models = draw(st.integers(1, 3))
    floats = st.floats(0.001, 10.0)
    model = draw(st.lists(st.integers(0, n_models - 1), min_size=n, max_size=n))
    arrival = draw(st.lists(st.floats(0.0, 100.0), min_size=n, max_size=n))
    iso = draw(st.lists(floats, min_size=n, max_size=n))
    slow = draw(st.lists(st.floats(1.0, 30.0), min_size=n, max_size=n))
    prio = draw(st.lists(st.sampled_from([1, 3, 9]), min_size=n, max_size=n))
    killed = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if allow_killed else [False] * n
    finish = [a + i * s for a, i, s in zip(arrival, iso, slow, strict=True)]
    return request_table(tuple(f"m{i}" for i in range(n_models)), model, arrival, finish, iso,
                         priority=prio, state=["killed" if k else "done" for k in killed])


MULTS = (1.0, 1.5, 2.0, 5.0, 10.0, 40.0)


@settings(max_examples=300, deadline=None)
@given(t=tables())
def test_percentiles_monotone_and_sla_monotone(t):
    for row in summarize(t, span_s=100.0, sla_mults=MULTS):
        lat = [row[f"latency_p{q:g}_s"] for q in LATENCY_QS] + [row["latency_max_s"]]
        if row["served"]:
            assert all(a <= b + 1e-12 for a, b in zip(lat, lat[1:], strict=False))
        else:
            assert all(v is None for v in lat)
        if not row["requests"]:  # a model with no request at all: rates are undefined
            assert row[f"sla_violation_x{MULTS[0]:g}"] is None
            continue
        sla = [row[f"sla_violation_x{m:g}"] for m in MULTS]
        assert all(a >= b for a, b in zip(sla, sla[1:], strict=False))
        assert all(0.0 <= v <= 1.0 for v in sla)
        # every request is slowed by at most 30x its isolated time: only killed ones miss 40x
        assert sla[-1] == pytest.approx(row["killed"] / row["requests"])


@settings(max_examples=300, deadline=None)
@given(t=tables())
def test_stp_antt_fairness_relations(t):
    rows = summarize(t, span_s=50.0)
    whole = rows[0]
    served = whole["served"]
    if served:
        # mean(1/NTT) >= 1/mean(NTT) (harmonic <= arithmetic mean), and every NTT >= 1
        assert whole["stp_task_set"] / served >= 1.0 / whole["antt"] - 1e-12
        # (finish - arrival) loses digits when arrival is large: allow a relative 1e-9
        assert whole["antt"] >= 1.0 - 1e-9 and whole["stp_task_set"] <= served * (1 + 1e-9)
        assert 0.0 < whole["fairness"] <= 1.0
    models = [r for r in rows if r["scope"] == "model"]
    prios = [r for r in rows if r["scope"] == "priority"]
    for part in (models, prios):
        for key in ("served", "requests", "killed", "preemptions"):
            assert sum(r[key] for r in part) == whole[key]
        for key in ("stp_task_set", "stp_open_loop", "throughput_rps"):
            assert sum(r[key] for r in part) == pytest.approx(whole[key])


@settings(max_examples=150, deadline=None)
@given(t=tables(allow_killed=False))
def test_agrees_with_the_record_based_metrics(t):
    records = [SimpleNamespace(tenant="x", model="x", arrival_s=a, finish_s=f, latency_s=f - a,
                               iso=i, deadline_s=None)
               for a, f, i in zip(t.arrival_s, t.finish_s, t.isolated_s, strict=True)]
    row = summarize(t, span_s=1.0, sla_mults=(2.0,))[0]
    for q in (50, 99):
        assert row[f"latency_p{q}_s"] == pytest.approx(percentile(records, q))
    rate = sla_violation_rate(records, slack=2.0, standalone=lambda r: r.iso)
    assert row["sla_violation_x2"] == pytest.approx(rate)


def test_identical_slowdowns_are_perfectly_fair():
    # NTT * priority equal for every request -> every PP equal -> fairness 1
    t = request_table(("a",), [0, 0, 0], [0.0, 0.0, 0.0], [9.0, 3.0, 1.0], [1.0, 1.0, 1.0],
                      priority=[1, 3, 9])
    row = summarize(t, span_s=10.0)[0]
    assert row["fairness"] == pytest.approx(1.0)
    assert row["antt"] == pytest.approx((9 + 3 + 1) / 3)
    assert np.isclose(row["stp_task_set"], 1 / 9 + 1 / 3 + 1)
