"""The executor sends items in chunks; results still come back complete and in order."""

from __future__ import annotations

from npuweave.experiments.executor import chunk_size, run_iter, run_map


def _square(x: int) -> int:
    return x * x


def test_chunk_size_rule() -> None:
    # about eight tasks per worker, 1 to 64 items each
    assert [chunk_size(n, 2) for n in (0, 1, 15, 16, 17, 200, 1024, 1040, 10**6)] == \
        [1, 1, 1, 1, 1, 12, 64, 64, 64]
    assert chunk_size(200, 0) == 25  # a nonsense worker count is read as one


def test_pool_results_complete_and_ordered_across_chunks() -> None:
    items = list(range(-60, 61))  # 121 items: chunks of 7 on two workers, the last one short
    assert run_map(_square, items, jobs=2) == [x * x for x in items]
    got = dict(run_iter(_square, items, jobs=2))
    assert sorted(got) == list(range(len(items))) and all(got[i] == items[i] ** 2 for i in got)
