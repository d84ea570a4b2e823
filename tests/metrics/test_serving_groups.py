"""``summarize`` computes the per-model and per-priority rows in one vectorized pass; every
float must equal what NumPy gives on that group's requests alone (the summation order of
sums, means and percentiles included: ``np.add.reduceat`` would move last bits on groups of
9 or more). The reference below selects each group with a mask and reduces it on its own."""

from __future__ import annotations

import math

import numpy as np
import pytest

from npuweave.metrics import core
from npuweave.metrics.requests import Outcome, request_table
from npuweave.metrics.serving import LATENCY_QS, summarize


def _reference(t, rows, span_s):
    done = t.state == Outcome.DONE
    lat = (t.finish_s - t.arrival_s)[rows & done]
    iso = t.isolated_s[rows & done]
    ntt = lat / iso
    ref = {"requests": int(rows.sum()), "served": int((rows & done).sum()),
           "stp_task_set": float(np.sum(1.0 / ntt)), "stp_open_loop": float(np.sum(iso) / span_s),
           "antt": float(ntt.mean()) if ntt.size else None,
           "fairness": core.fairness(1.0 / ntt, t.priority[rows & done]) if ntt.size else None,
           "latency_max_s": float(lat.max()) if lat.size else None,
           "preempt_overhead_s": float(t.preempt_overhead_s[rows].sum()),
           "preemptions": int(t.preemptions[rows].sum())}
    for q, v in zip(LATENCY_QS, np.percentile(lat, LATENCY_QS) if lat.size else [None] * 5,
                    strict=True):
        ref[f"latency_p{q:g}_s"] = None if v is None else float(v)
    every = (t.finish_s - t.arrival_s)[rows] / t.isolated_s[rows]
    ref["sla_violation_x2"] = float(np.mean(~(every <= 2.0))) if every.size else None
    has = rows & np.isfinite(t.deadline_s)
    late = ~(t.finish_s[has] <= t.deadline_s[has])
    ref["deadline_violation"] = float(late.mean()) if late.size else None
    return ref


@pytest.mark.parametrize("seed", range(12))
def test_group_rows_equal_each_group_reduced_alone(seed):
    rng = np.random.default_rng(seed)
    n_models = int(rng.integers(1, 12))
    n = int(rng.integers(0, 900))  # groups of 0 to several hundred requests (> 128: pairwise)
    model = rng.integers(0, n_models, n) if seed % 2 else rng.integers(0, 2, n) % n_models
    arrival = rng.uniform(0, 1, n)
    iso = rng.uniform(1e-4, 1e-2, n)
    finish = arrival + iso * rng.uniform(1, 30, n)
    state = (rng.uniform(size=n) < 0.15).astype(int)
    finish[state == 1] = np.nan
    deadline = np.where(rng.uniform(size=n) < 0.4, arrival + 0.05, np.inf)
    t = request_table(tuple(f"m{i}" for i in range(n_models)), model, arrival, finish, iso,
                      priority=rng.choice([1, 3, 9], n), deadline_s=deadline, state=state,
                      preemptions=rng.integers(0, 4, n),
                      preempt_overhead_s=rng.uniform(0, 1e-5, n))
    out = summarize(t, span_s=1.3, sla_mults=[2.0])
    groups = [np.ones(n, bool)] + [model == i for i in range(n_models)]
    prios = sorted(set(t.priority.tolist()))
    groups += [t.priority == p for p in prios]
    assert [r["name"] for r in out] == ["all", *t.models, *map(str, prios)]
    for row, rows in zip(out, groups, strict=True):
        for key, want in _reference(t, rows, 1.3).items():
            got = row[key]
            assert type(got) is type(want) and (got == want or (
                isinstance(got, float) and math.isnan(got) and math.isnan(want))), (key, got, want)
