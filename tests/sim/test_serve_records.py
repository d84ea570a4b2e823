"""``serving._records``: per-request batch sizes and PE preemptions, and per-segment ids, from
the run's groups and segments in array passes; the oracle is the loop over groups it
replaced (hypothesis draws the partitions into batches and the segments)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.metrics.records import request_records, segment_records, switches
from npuweave.metrics.requests import request_table
from npuweave.sim.serving import _records


def oracle(groups, segments, n_requests, table, ids):
    """Per group: its members' batch and segment-switch count; segments named by the
    group's first member (the loop before the columns)."""
    n = len(table)
    batch, pre = np.ones(n, np.int64), np.zeros(n, np.int64)
    for g, k in zip(groups, switches(segments, n_requests).tolist()):
        batch[g[3]], pre[g[3]] = g[2], k
    first = [g[3][0] for g in groups]
    segs = [(first[r], s, e) for r, s, e in segments]
    return request_records(table, ids, batch, pre), segment_records(segs, ids)


@st.composite
def runs(draw):
    n = draw(st.integers(1, 25))
    rows = draw(st.permutations(range(n)))
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=n - 1))) if n > 1 else []
    parts = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    groups = [(0.0, 0, len(p), list(p)) for p in parts]
    ran = draw(st.integers(0, len(groups)))  # groups that became requests
    segs = [[draw(st.integers(0, ran - 1)), float(i), float(i) + 0.5]
            for i in range(draw(st.integers(0, 30)))] if ran else []
    return n, groups, ran, segs, draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(run=runs())
def test_records_equal_the_group_loop(run):
    n, groups, ran, segs, named = run
    table = request_table(("m",), [0] * n, [0.0] * n, [1.0] * n, [1.0])
    ids = [f"id{i}" for i in range(n)] if named else None
    sim = SimpleNamespace(segments=segs, requests=[None] * ran)
    got_req, got_seg = _records(sim, groups, table, ids)
    want_req, want_seg = oracle(groups, segs, ran, table, ids)
    assert list(got_req) == want_req
    assert list(got_seg) == want_seg
    if all(len(g[3]) == 1 and g[3][0] == i for i, g in enumerate(groups)):  # singles
        got_req, got_seg = _records(sim, None, table, ids)
        assert list(got_req) == want_req
        assert list(got_seg) == want_seg


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 20), data=st.data())
def test_records_without_groups_are_the_singles(n, data):
    ran = data.draw(st.integers(0, n))
    segs = [[data.draw(st.integers(0, ran - 1)), float(i), float(i) + 0.5]
            for i in range(data.draw(st.integers(0, 30)))] if ran else []
    table = request_table(("m",), [0] * n, [0.0] * n, [1.0] * n, [1.0])
    sim = SimpleNamespace(segments=segs, requests=[None] * ran)
    singles = [(0.0, 0, 1, [i]) for i in range(n)]
    for got, want in zip(_records(sim, None, table, None), oracle(singles, segs, ran, table, None),
                         strict=True):
        assert list(got) == want


@pytest.mark.parametrize("killed", [(0, 1, 0, 0), (0, 0, 0, 0), (1, 1, 1, 1)])
def test_per_request_files_from_columns_are_the_files_of_the_dicts(tmp_path, killed):
    from npuweave import report
    from npuweave.cli.serve_tasks import write_per_request
    from npuweave.metrics.records import RequestRecords

    table = request_table(("a", "b"), [0, 1, 1, 0], [0.0, 0.1, 0.2, 0.3],
                          [0.5, 0.9, 1.0, 1.1], [0.2, 0.3], start_s=[0.0, np.nan, 0.5, 0.6],
                          deadline_s=[0.4, np.inf, 1.5, np.inf],
                          state=np.array(killed, np.int64))
    recs = RequestRecords(table, batch=[1, 2, 2, 1], preemptions=[0, 0, 3, 1])
    write_per_request(str(tmp_path / "a.csv"), recs)
    report.write_csv(tmp_path / "b.csv", list(recs))
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    write_per_request(str(tmp_path / "a.parquet"), recs)
    report.write_parquet(tmp_path / "b.parquet", list(recs))
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
