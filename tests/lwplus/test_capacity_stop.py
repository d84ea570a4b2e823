"""The capacity search's early stop is exact (issue 22, fourth round).

Stand-in runs with hand-set miss counts per seed: a run told ``stop_at`` reports ``stop_at``
(plus an overshoot, as a batch finishing several misses at once would) when its true count
reaches it, else its true count. Every expected number below is worked by hand from the pass
rule ``missed < budget * requests``: 3 seeds x 4,000 requests at 1% allow 119 misses, so the
first seed may run until 120 misses, and each later seed until 120 minus the misses counted.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from npuweave.experiments.capacity import Trial, _monotone, search_capacity

SEEDS = (0, 1, 2)
N = 4000


def _stand_in(true: dict[int, int], calls: list[tuple[int, int | None]],
              overshoot: int = 0):
    """``run(load, seed, stop_at)`` missing ``true[seed]`` above 400 QPS, none at or below."""
    def run(load: float, seed: int, stop_at: int | None = None) -> tuple[int, int]:
        calls.append((seed, stop_at))
        m = true[seed] if load > 400 else 0
        if stop_at is not None and m >= stop_at:
            return stop_at + overshoot, N
        return m, N
    return run


def test_rn_bl_case_fails() -> None:
    """Layerweaver, RN+BL 1:1 at 431.8 QPS: 0 + 27 + 110 = 137 misses run to the end. A
    per-seed stop at 2% (80 of 4,000) would have reported 0 + 27 + 82 = 109 < 120 and passed.
    Pooled: seed 0 may run to 120 (misses 0), seed 1 to 120 (misses 27), seed 2 to
    120 - 27 = 93, reached: the trial fails with a lower bound of 0 + 27 + 93 = 120."""
    calls: list[tuple[int, int | None]] = []
    run = _stand_in({0: 0, 1: 27, 2: 110}, calls)
    cap = search_capacity(run, start=431.8, seeds=SEEDS, rel_tol=0.01, probes=0, scan=0,
                          requests=N)
    assert calls[:3] == [(0, 120), (1, 120), (2, 93)]
    first = cap.trials[0]
    assert first.load == 431.8 and first.missed == 120 and not first.exact
    assert cap.load <= 400 < cap.failed_load <= 404
    assert cap.missed == 0 and all(t.exact for t in cap.trials if t.load <= 400)


def test_true_pass_still_passes() -> None:
    """0 + 27 + 92 = 119 < 120 passes at every load: seed 2 may run to 93 and stops short of
    it, so its count is exact; one miss more (93) fails."""
    calls: list[tuple[int, int | None]] = []
    cap = search_capacity(_stand_in({0: 0, 1: 27, 2: 92}, calls), start=500.0, seeds=SEEDS,
                          max_load=500.0, probes=0, requests=N)
    assert cap.load == 500.0 and cap.missed == 119 and cap.requests == 3 * N
    assert cap.trials[0].exact and calls == [(0, 120), (1, 120), (2, 93)]
    over = search_capacity(_stand_in({0: 0, 1: 27, 2: 93}, []), start=500.0, seeds=SEEDS,
                           max_load=500.0, probes=0, scan=0, requests=N)
    assert over.trials[0].missed == 120 and not over.trials[0].exact
    assert over.load <= 400 < over.failed_load


def test_stopped_first_seed_skips_the_rest() -> None:
    """Seed 0 alone misses 300 >= 120: the trial is decided after one run."""
    calls: list[tuple[int, int | None]] = []
    cap = search_capacity(_stand_in({0: 300, 1: 0, 2: 0}, calls), start=500.0, seeds=SEEDS,
                          max_load=500.0, probes=0, scan=0, requests=N)
    assert calls[0] == (0, 120) and calls[1][1] == 120  # the next trial starts afresh
    assert cap.trials[0].missed == 120 and cap.trials[0].requests == 3 * N


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 200), min_size=1, max_size=4), st.integers(0, 5))
def test_a_stopped_seed_never_passes(counts: list[int], overshoot: int) -> None:
    """Whatever the seeds' true counts and a stop's overshoot, the trial at 500 QPS passes
    exactly when the true total is below 1% of the requests, and a pass has exact counts."""
    seeds = tuple(range(len(counts)))
    calls: list[tuple[int, int | None]] = []
    run = _stand_in(dict(enumerate(counts)), calls, overshoot)
    cap = search_capacity(run, start=500.0, seeds=seeds, max_load=500.0, probes=0, scan=0,
                          requests=N)
    first = cap.trials[0]
    passed = sum(counts) < 0.01 * N * len(counts)
    assert (cap.load == 500.0) == passed
    stopped = any(stop is not None and counts[s] >= stop for s, stop in calls[:len(seeds)])
    assert not (passed and stopped)
    assert first.exact == (not stopped)
    assert (first.missed == sum(counts)) if first.exact else (first.missed <= sum(counts)
                                                               + overshoot)


def test_sure_failure_reruns_a_stopped_trial() -> None:
    """Above 400 QPS the seeds miss 50 each. Wilson (95%) on 150 of 12,000: p = 1.25%, lower
    end = (0.0125 + 1.96^2/24000 - 1.96 * sqrt(0.0125 * 0.9875 / 12000)) / (1 + 1.96^2/12000)
    = (0.0125 + 0.00016 - 0.001988) / 1.00032 = 1.067% > 1%: a sure failure. The pass/fail
    trial stopped at 120 (lower end < 1%), so the failing load is run again to the sure count
    and is reported as the sure failure. With 125 in all (lower end 0.876%) no load fails
    surely: the re-run and the probes above run to the end."""
    cap = search_capacity(_stand_in({0: 50, 1: 50, 2: 50}, []), start=300.0, seeds=SEEDS,
                          rel_tol=0.01, scan=0, requests=N)
    at_failed = [t for t in cap.trials if t.load == cap.failed_load]
    assert len(at_failed) == 2 and at_failed[0].missed == 120 and not at_failed[0].exact
    assert 120 < at_failed[1].missed <= 150 and cap.fail_sure_load == cap.failed_load
    weak = search_capacity(_stand_in({0: 50, 1: 50, 2: 25}, []), start=300.0, seeds=SEEDS,
                           rel_tol=0.01, scan=0, requests=N)
    assert math.isinf(weak.fail_sure_load)
    assert [t.missed for t in weak.trials if t.load >= weak.failed_load and t.exact] \
        == [125, 125, 125]


def test_monotone_ignores_what_a_lower_bound_cannot_show() -> None:
    """A lower bound above an exact rate at a higher load is a proven fall; two lower bounds
    in either order are not."""
    bound = Trial(100.0, 130, 12000, exact=False)
    assert _monotone([bound, Trial(110.0, 121, 12000, exact=False)])
    assert not _monotone([bound, Trial(110.0, 125, 12000)])
    assert _monotone([Trial(90.0, 10, 12000), bound, Trial(110.0, 130, 12000)])


def test_runs_without_requests_go_to_the_end() -> None:
    """No ``requests``: the two-argument run is called as before, never told to stop."""
    cap = search_capacity(lambda q, s: (0 if q <= 400 else 137, N), start=300.0, seeds=SEEDS,
                          rel_tol=0.01, probes=0, scan=0)
    assert cap.load <= 400 < cap.failed_load and all(t.exact for t in cap.trials)
