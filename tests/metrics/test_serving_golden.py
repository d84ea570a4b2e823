"""Serving metrics on a five-request run worked out by hand.

Models a and b, span 10 s, PE busy 7 s, DRAM busy 2.5 s:

====  =====  =======  ======  ========  ====  ========  ===========================
req   model  arrival  finish  isolated  prio  deadline  notes
====  =====  =======  ======  ========  ====  ========  ===========================
r0    a      0        2       1         1     3         latency 2, NTT 2, met
r1    a      1        5       1         1     4         latency 4, NTT 4, missed
r2    b      0        6       2         3     none      latency 6, NTT 3
r3    b      2        killed  2         3     10        1 preemption, 0.5 s wasted
r4    b      3        8       2         3     none      latency 5, NTT 2.5, 2 preemptions,
                                                        0.25 s overhead
====  =====  =======  ======  ========  ====  ========  ===========================

Whole run: served 4 of 5, throughput 4 / 10 = 0.4/s.
STP (PREMA Eq. 1) = 1/2 + 1/4 + 1/3 + 1/2.5 = 1.48333...; open-loop STP = (1+1+2+2)/10 = 0.6.
ANTT = (2 + 4 + 3 + 2.5) / 4 = 2.875.
Fairness: 1/(NTT*prio) = 1/2, 1/4, 1/9, 1/7.5; min/max = (1/9)/(1/2) = 2/9.
SLA at 2x: r0 meets (2 <= 2), r1, r2, r4 miss, r3 killed -> 4/5. At 5x only r3 -> 1/5.
Deadlines: r0 met, r1 missed, r3 killed -> 2 of 3.
Latencies sorted 2, 4, 5, 6; linear rank q/100 * 3: p50 at 1.5 -> 4.5, p90 at 2.7 -> 5.7,
p95 -> 5.85, p99 -> 5.97, p99.9 -> 5.997, max 6.
"""

from __future__ import annotations

import json
import math

import pytest

from npuweave.errors import ConfigError
from npuweave.metrics.requests import Outcome, request_table
from npuweave.metrics.serving import jsonable, summarize, to_csv


def table():
    return request_table(
        ("a", "b"), model=[0, 0, 1, 1, 1], arrival_s=[0, 1, 0, 2, 3],
        finish_s=[2, 5, 6, math.nan, 8], isolated_s=[1, 1, 2, 2, 2], priority=[1, 1, 3, 3, 3],
        deadline_s=[3, 4, math.inf, 10, math.inf],
        state=["done", "done", "done", "killed", "done"], preemptions=[0, 0, 0, 1, 2],
        preempt_overhead_s=[0, 0, 0, 0, 0.25], wasted_s=[0, 0, 0, 0.5, 0])


def rows(**kw):
    out = summarize(table(), span_s=10.0, pe_busy_s=7.0, dram_busy_s=2.5, sla_mults=(2, 5), **kw)
    return {(r["scope"], r["name"]): r for r in out}


def test_whole_run():
    r = rows()[("all", "all")]
    assert (r["requests"], r["served"], r["killed"]) == (5, 4, 1)
    assert r["throughput_rps"] == pytest.approx(0.4)
    assert r["stp_task_set"] == pytest.approx(0.5 + 0.25 + 1 / 3 + 0.4)
    assert r["stp_open_loop"] == pytest.approx(0.6)
    assert r["stp"] == r["stp_open_loop"]
    assert r["antt"] == pytest.approx(2.875)
    assert r["fairness"] == pytest.approx(2 / 9)
    assert r["sla_violation_x2"] == pytest.approx(0.8)
    assert r["sla_violation_x5"] == pytest.approx(0.2)
    assert r["deadline_requests"] == 3
    assert r["deadline_violation"] == pytest.approx(2 / 3)
    expected = {"latency_p50_s": 4.5, "latency_p90_s": 5.7, "latency_p95_s": 5.85,
                "latency_p99_s": 5.97, "latency_p99.9_s": 5.997, "latency_max_s": 6.0}
    for key, value in expected.items():
        assert r[key] == pytest.approx(value)
    assert r["pe_util"] == pytest.approx(0.7) and r["dram_util"] == pytest.approx(0.25)
    assert (r["preemptions"], r["preempt_overhead_s"], r["wasted_s"]) == (3, 0.25, 0.5)


def test_per_model_and_per_priority():
    # model a: NTT 2 and 4 -> STP 0.75, ANTT 3, fairness (1/4)/(1/2) = 0.5, latencies 2, 4:
    # p50 3, p90 2 + 0.9 * 2 = 3.8. model b: NTT 3 and 2.5 -> STP 1/3 + 0.4, ANTT 2.75,
    # fairness (1/9)/(1/7.5) = 5/6; SLA 2x: r2, r3, r4 all miss; 5x: r3 -> 1/3; deadline: r3.
    by = rows()
    a, b = by[("model", "a")], by[("model", "b")]
    assert (a["served"], a["stp_task_set"], a["stp_open_loop"]) == (2, 0.75, pytest.approx(0.2))
    assert a["antt"] == 3.0 and a["fairness"] == 0.5
    assert a["latency_p50_s"] == 3.0 and a["latency_p90_s"] == pytest.approx(3.8)
    assert a["sla_violation_x2"] == 0.5 and a["sla_violation_x5"] == 0.0
    assert a["deadline_violation"] == 0.5 and a["preemptions"] == 0
    assert (b["requests"], b["served"], b["killed"]) == (3, 2, 1)
    assert b["stp_task_set"] == pytest.approx(1 / 3 + 0.4)
    assert b["antt"] == pytest.approx(2.75) and b["fairness"] == pytest.approx(5 / 6)
    assert b["sla_violation_x2"] == 1.0 and b["sla_violation_x5"] == pytest.approx(1 / 3)
    assert b["deadline_requests"] == 1 and b["deadline_violation"] == 1.0
    assert b["latency_p50_s"] == 5.5 and b["latency_max_s"] == 6.0
    assert a["pe_util"] is None and b["dram_util"] is None
    # priorities 1 and 3 hold exactly the requests of a and b here
    for prio, model in (("1", a), ("3", b)):
        p = by[("priority", prio)]
        assert {k: v for k, v in p.items() if k not in ("scope", "name")} == \
            {k: v for k, v in model.items() if k not in ("scope", "name")}


def test_task_set_form_and_serialization():
    r = rows(stp_form="task-set")[("all", "all")]
    assert r["stp"] == pytest.approx(1.483333333)
    out = summarize(table(), span_s=10.0)
    text = json.dumps(jsonable(out), allow_nan=False)
    assert json.loads(text)[0]["served"] == 4
    csv_text = to_csv(out)
    header = csv_text.splitlines()[0].split(",")
    assert header[:4] == ["scope", "name", "requests", "served"]
    assert len(csv_text.splitlines()) == len(out) + 1
    assert ",," in csv_text  # the per-model utilizations are empty fields


def test_nothing_served():
    t = request_table(("a",), [0], [0.0], [math.nan], [1.0], state=["killed"])
    r = summarize(t, span_s=1.0, sla_mults=(2,))[0]
    assert r["served"] == 0 and r["antt"] is None and r["latency_p50_s"] is None
    assert r["stp_task_set"] == 0.0 and r["sla_violation_x2"] == 1.0 and r["fairness"] is None
    assert r["deadline_violation"] is None


def test_table_helpers():
    t = table()
    assert t.done.tolist() == [True, True, True, False, True]
    assert t.ntt[[0, 1, 2, 4]].tolist() == [2.0, 4.0, 3.0, 2.5] and math.isnan(t.ntt[3])
    assert t.state.tolist() == [Outcome.DONE] * 3 + [Outcome.KILLED, Outcome.DONE]
    per_model = request_table(("a", "b"), [1, 0, 1], [0, 0, 0], [1, 2, 3], [0.5, 2.0])
    assert per_model.isolated_s.tolist() == [2.0, 0.5, 2.0]


@pytest.mark.parametrize("kw,match", [
    ({"span_s": 0.0}, "span_s"), ({"span_s": math.inf}, "span_s"),
    ({"span_s": 1.0, "stp_form": "best"}, "stp_form"),
    ({"span_s": 1.0, "sla_mults": (2, 0)}, "sla_mults"),
])
def test_summarize_rejects(kw, match):
    with pytest.raises(ConfigError, match=match):
        summarize(table(), **kw)


@pytest.mark.parametrize("kw,match", [
    ({"isolated_s": [0.0, 1.0]}, "isolated"),
    ({"finish_s": [-1.0, 1.0]}, "finish"),
    ({"model": [0, 5]}, "model indices"),
    ({"state": ["done", "lost"]}, "state"),
    ({"arrival_s": [0.0, 1.0, 2.0]}, "shape"),
    ({"colour": [1, 2]}, "unknown column"),
])
def test_request_table_rejects(kw, match):
    args = {"models": ("a",), "model": [0, 0], "arrival_s": [0.0, 0.0], "finish_s": [1.0, 2.0],
            "isolated_s": [1.0, 1.0]} | kw
    with pytest.raises(ConfigError, match=match):
        request_table(**args)
