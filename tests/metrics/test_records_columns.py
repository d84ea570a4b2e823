"""Per-request and per-segment records kept as columns (``npuweave.metrics.records``).

The oracle is the per-record computation the columns replaced (one dict per row, reading
the table element by element), written out here; hypothesis draws the tables.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.metrics import records as rec
from npuweave.metrics.records import (
    FIELDS,
    RequestRecords,
    SegmentRecords,
    request_records,
    segment_columns,
    segment_records,
    switches,
)
from npuweave.metrics.requests import Outcome, request_table


def _num(x):
    return float(x) if math.isfinite(x) else None


def oracle_requests(table, ids=None, batch=None, preemptions=None):
    """One dict per row, element by element (the computation before the columns)."""
    pre = table.preemptions if preemptions is None else preemptions
    out = []
    for i in range(len(table)):
        done = table.state[i] == Outcome.DONE
        ddl, fin = float(table.deadline_s[i]), float(table.finish_s[i])
        out.append({"id": ids[i] if ids is not None else i,
                    "model": table.models[int(table.model[i])],
                    "priority": int(table.priority[i]),
                    "arrival_s": float(table.arrival_s[i]),
                    "start_s": _num(float(table.start_s[i])),
                    "finish_s": _num(fin) if done else None,
                    "deadline_s": _num(ddl),
                    "met": None if not math.isfinite(ddl) else bool(done and fin <= ddl),
                    "preemptions": int(pre[i]),
                    "batch": int(batch[i]) if batch is not None else 1})
    return out


@st.composite
def runs(draw):
    n = draw(st.integers(0, 30))
    n_models = draw(st.integers(1, 3))
    model = draw(st.lists(st.integers(0, n_models - 1), min_size=n, max_size=n))
    arrival = draw(st.lists(st.floats(0.0, 50.0), min_size=n, max_size=n))
    wait = draw(st.lists(st.floats(0.0, 5.0), min_size=n, max_size=n))
    run = draw(st.lists(st.floats(0.001, 5.0), min_size=n, max_size=n))
    killed = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    started = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    budget = draw(st.lists(st.one_of(st.just(math.inf), st.floats(0.001, 20.0)),
                           min_size=n, max_size=n))
    start = [a + w if s or not k else math.nan
             for a, w, s, k in zip(arrival, wait, started, killed, strict=True)]
    finish = [a + w + r for a, w, r in zip(arrival, wait, run, strict=True)]
    t = request_table(tuple(f"m{i}" for i in range(n_models)), model, arrival, finish,
                      [1.0] * n_models, start_s=start,
                      deadline_s=[a + b for a, b in zip(arrival, budget, strict=True)],
                      state=np.array([int(k) for k in killed], np.int64),
                      priority=draw(st.lists(st.sampled_from([1, 2, 9]), min_size=n,
                                             max_size=n)))
    ids = draw(st.one_of(st.none(), st.just([f"r{i}" for i in range(n)])))
    batch = draw(st.one_of(st.none(), st.lists(st.integers(1, 8), min_size=n, max_size=n)))
    pre = draw(st.one_of(st.none(), st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    return t, ids, batch, pre


@settings(max_examples=300, deadline=None)
@given(r=runs(), size=st.integers(1, 7))
def test_request_columns_equal_the_per_record_oracle(r, size):
    t, ids, batch, pre = r
    want = oracle_requests(t, ids, batch, pre)
    lazy = RequestRecords(t, ids, batch, pre)
    assert len(lazy) == len(want)
    assert request_records(t, ids, batch, pre) == want
    chunks = list(lazy.row_chunks(size))
    assert [len(c) for c in chunks] == [min(size, len(want) - i)
                                       for i in range(0, len(want), size)]
    got = [row for c in chunks for row in c]
    assert got == want
    # the same types, not only equal values (True == 1, 1.0 == 1)
    assert [[type(v) for v in row.values()] for row in got] == [
        [type(v) for v in row.values()] for row in want]
    assert all(list(row) == list(FIELDS) for row in got)
    cols = lazy.columns(0, len(lazy))
    assert list(cols) == list(FIELDS)
    assert [dict(zip(cols, vals, strict=True)) for vals in zip(*cols.values(), strict=True)] == want


def test_sequence_protocol():
    t = request_table(("a",), [0, 0, 0], [0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [1.0])
    lazy = RequestRecords(t)
    want = oracle_requests(t)
    assert lazy[0] == want[0] and lazy[-1] == want[-1]
    assert lazy[1:] == want[1:] and lazy[::2] == want[::2] and lazy[::-1] == want[::-1]
    assert list(lazy) == want and lazy == want and lazy != want[:2]
    with pytest.raises(IndexError):
        lazy[3]
    with pytest.raises(IndexError):
        lazy[-4]
    assert lazy.json_plain() and lazy.flat()
    assert not RequestRecords(t, ids=["x", "y", "z"]).json_plain()
    assert not RequestRecords(t, ids=[{"a": 1}, "y", "z"]).flat()


@settings(max_examples=200, deadline=None)
@given(segs=st.lists(st.tuples(st.integers(0, 5), st.floats(0.0, 9.0), st.floats(0.0, 9.0)),
                     max_size=30),
       named=st.booleans())
def test_segments_and_switches_equal_the_per_segment_oracle(segs, named):
    rows = [list(s) for s in segs]
    ids = [f"q{i}" for i in range(6)] if named else None
    want = [{"id": ids[r] if ids else r, "start_s": float(s), "end_s": float(e)}
            for r, s, e in rows]
    assert segment_records(rows, ids) == want
    cols = segment_columns(rows)
    assert segment_records(cols, ids) == want
    assert list(SegmentRecords(*cols, ids=ids)) == want
    count = [0] * 6
    for r, _, _ in rows:
        count[r] += 1
    assert switches(rows, 6).tolist() == [max(c - 1, 0) for c in count]
    assert switches(cols, 6).tolist() == [max(c - 1, 0) for c in count]


def test_chunk_default_is_read_at_call_time(monkeypatch):
    t = request_table(("a",), [0] * 5, [0.0] * 5, [1.0] * 5, [1.0])
    monkeypatch.setattr(rec, "CHUNK_ROWS", 2)
    assert [len(c) for c in RequestRecords(t).row_chunks()] == [2, 2, 1]
