"""The executor sends items in chunks; results still come back complete and in order."""

from __future__ import annotations

from npuweave.experiments.executor import chunk_sizes, run_iter, run_map


def _square(x: int) -> int:
    return x * x


def test_chunk_sizes_rule() -> None:
    # at most items // (8 x workers) per task (1 to 64), and at most ceil(left / (2 x workers)):
    # by hand for 40 items on two workers, 2 per task until 4 are left, then 1, 1, 1, 1
    assert chunk_sizes(40, 2) == [2] * 18 + [1] * 4
    assert chunk_sizes(17, 2) == [1] * 17  # 17 // 16 = 1 item per task
    assert chunk_sizes(0, 2) == [] and chunk_sizes(1, 2) == [1]
    assert chunk_sizes(17, 0) == chunk_sizes(17, 1) == [2] * 8 + [1]  # nonsense workers: one
    big = chunk_sizes(10**6, 2)
    assert big[0] == 64 and sum(big) == 10**6 and big[-4:] == [1, 1, 1, 1]
    for n in (2, 15, 200, 1041):
        sizes = chunk_sizes(n, 2)
        assert sum(sizes) == n and sizes == sorted(sizes, reverse=True)


def test_pool_results_complete_and_ordered_across_chunks() -> None:
    items = list(range(-60, 61))  # 121 items: chunks of 7, then 6 down to 1, on two workers
    assert run_map(_square, items, jobs=2) == [x * x for x in items]
    got = dict(run_iter(_square, items, jobs=2))
    assert sorted(got) == list(range(len(items))) and all(got[i] == items[i] ** 2 for i in got)
