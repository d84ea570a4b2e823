"""ScheduleMemFetch, the fetch window and commit, against hand calculations (buf 100 B, 10 B/s)."""

from __future__ import annotations

import pytest
from sched_helpers import board


def test_fetch_fits_in_free_space():
    # t_m = 2, 90 B in flight -> 10 B free; a 10 B fetch takes 1 s: 2 + 1 = 3
    b = board([[(10, 1.0)]], state=(2.0, 10.0, [(30, 5.0), (50, 8.0), (10, 10.0)]))
    assert b.fetch_end(10) == 3.0


def test_partial_fetch_into_space_freed_by_completing_layers():
    # 45 B with 10 B free at t_m = 2:
    #   10 B now            2 -> 3
    #   (30 B, done at 5):  wait to 5, 30 B more  5 -> 8   (35 - 30 = 5 B still to fetch)
    #   (50 B, done at 8):  5 B                   8 -> 8.5
    b = board([[(45, 1.0)]], state=(2.0, 10.0, [(30, 5.0), (50, 8.0), (10, 10.0)]))
    assert b.fetch_end(45) == 8.5


def test_partial_fetch_when_buffer_is_full_waits_for_first_completion():
    # nothing free at t_m = 0: wait for the 60 B unit (done at 4), fetch 60 B: 4 -> 10
    b = board([[(60, 1.0)]], state=(0.0, 9.0, [(60, 4.0), (40, 9.0)]))
    assert b.fetch_end(60) == 10.0


def test_fetch_window_counts_bytes_fetchable_before_current_compute_ends():
    # After a 10 B unit lands at t0 = 1 (t_c = 10): free = 100 - 10 - 10 = 80 B, fetched 1 -> 9;
    # the in-flight 10 B block frees only at 10 = t1, so the window holds 80 B.
    b = board([[(10, 1.0)]], state=(0.0, 10.0, [(10, 10.0)]))
    assert b.fetch_window(1.0, 10, 10.0) == pytest.approx(80.0)
    # a window shorter than the free space: (1, 5) -> 4 s * 10 B/s = 40 B
    assert b.fetch_window(1.0, 10, 5.0) == pytest.approx(40.0)


def test_fetch_window_continues_into_freed_blocks():
    # t0 = 2, t1 = 12, in flight (50 B, done 6), (40 B, done 12); new unit 10 B:
    # free 0 at 2; wait to 6; 50 B 6 -> 11; the 40 B block frees at 12 = t1: F = 50 B
    b = board([[(10, 1.0)]], state=(0.0, 12.0, [(50, 6.0), (40, 12.0)]))
    assert b.fetch_window(2.0, 10, 12.0) == pytest.approx(50.0)


def test_commit_sequence_with_partial_fetch_and_wait():
    # One tenant: u1 (60 B, 4 s), u2 (30 B, 10 s), u3 (80 B, 1 s).
    # u1: fetch 0 -> 6, compute 6 -> 10
    # u2: 40 B free at 6, fetch 6 -> 9, compute max(10, 9) = 10 -> 20
    # u3: 10 B free at 9: 9 -> 10; u1 frees 60 B at 10: 10 -> 16 (need 10 B more);
    #     u2 frees at 20: 20 -> 21; compute 21 -> 22
    b = board([[(60, 4.0), (30, 10.0), (80, 1.0)]])
    assert b.commit(0) == (0, 0, 0.0, 6.0, 6.0, 10.0)
    assert b.commit(0) == (0, 1, 6.0, 9.0, 10.0, 20.0)
    assert b.commit(0) == (0, 2, 9.0, 21.0, 21.0, 22.0)
    assert b.active == []


def test_commit_drops_units_completed_by_new_t_m():
    b = board([[(60, 4.0), (30, 10.0), (80, 1.0)]])
    for _ in range(2):
        b.commit(0)
    assert b.in_flight() == [(60, 10.0), (30, 20.0)] and b.used == 90
    b.commit(0)  # t_m = 21: both completed, only u3 (done 22) remains
    assert b.in_flight() == [(80, 22.0)] and b.used == 80


def test_kinds_from_totals():
    # T0: 10 s compute vs 1 s fetch; T1: 0.2 s compute vs 10 s fetch
    b = board([[(10, 10.0)], [(50, 0.1), (50, 0.1)]])
    assert b.kind == ["compute", "memory"]
