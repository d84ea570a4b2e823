"""Slicing: cut the batch (N) first, down to one sample, then the output height (H).

Slices are as even as integer division allows: piece ``k`` of ``total`` cut into ``parts`` is
``[k*total//parts, (k+1)*total//parts)``, so the pieces tile ``[0, total)`` exactly.
"""

from __future__ import annotations

Rows = tuple[int, int] | None  # half-open [lo, hi), None when empty


def split_range(total: int, parts: int, index: int) -> Rows:
    """Piece ``index`` of ``[0, total)`` cut into ``parts`` nearly equal pieces.

    Examples
    --------
    >>> [split_range(10, 3, k) for k in range(3)]
    [(0, 3), (3, 6), (6, 10)]
    >>> split_range(2, 3, 0) is None
    True
    """
    lo, hi = index * total // parts, (index + 1) * total // parts
    return (lo, hi) if hi > lo else None


def rows(r: Rows) -> int:
    return 0 if r is None else r[1] - r[0]


def hull(a: Rows, b: Rows) -> Rows:
    """Smallest range covering both ``a`` and ``b``."""
    if a is None:
        return b
    if b is None:
        return a
    return (min(a[0], b[0]), max(a[1], b[1]))


def n_pieces(batch: int, count: int) -> list[int]:
    """Samples in each of ``count`` N slices of ``batch`` (e.g. 5 in 2 -> [2, 3])."""
    return [rows(split_range(batch, count, k)) for k in range(count)]


def n_slice_counts(batch: int) -> list[int]:
    """N slice counts to try, fewest first, one per distinct largest-slice size.

    Examples
    --------
    >>> n_slice_counts(8)
    [1, 2, 3, 4, 8]
    """
    counts, seen = [], set()
    for count in range(1, batch + 1):
        size = -(-batch // count)
        if size not in seen:
            seen.add(size)
            counts.append(count)
    return counts
