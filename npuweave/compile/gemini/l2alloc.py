"""Addresses in a core's L2: first fit in one ring-buffer region, wrapping past its end.

Tensors live over a range of workload positions ``[start, end]`` on their core. They are
placed in order of ``start`` (larger first on ties) at the lowest candidate address (0 or the
end of a tensor alive at the same time) where they overlap nothing alive at the same time.
A tensor that runs past the region's end continues at the region's start, as the format's
ring buffer does (``checks_buffer.occupied`` reads it back the same way).
"""

from __future__ import annotations

from dataclasses import dataclass

from npuweave.errors import InfeasibleError


@dataclass(frozen=True, slots=True)
class Live:
    """A tensor to place: ``size`` bytes alive from position ``start`` to ``end`` inclusive."""

    key: object
    size: int
    start: int
    end: int


def spans(address: int, size: int, capacity: int) -> list[tuple[int, int]]:
    """The ``[lo, hi)`` intervals a tensor occupies in a ring of ``capacity`` bytes.

    Examples
    --------
    >>> spans(90, 20, 100)
    [(90, 100), (0, 10)]
    """
    end = address + size
    if end <= capacity:
        return [(address, end)]
    return [(address, capacity), (0, end - capacity)]


def _clash(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
    return any(lo < h and l2 < hi for lo, hi in a for l2, h in b)


def allocate(tensors: list[Live], capacity: int, where: str = "L2") -> dict[object, int]:
    """Address of every tensor (key -> byte address) in a ring of ``capacity`` bytes.

    Raises :class:`InfeasibleError` when a tensor is larger than the ring or no address is
    free while it lives.

    Examples
    --------
    >>> allocate([Live("a", 60, 0, 1), Live("b", 60, 1, 2)], 100)
    {'a': 0, 'b': 60}
    """
    placed: list[tuple[Live, list[tuple[int, int]], int]] = []
    out: dict[object, int] = {}
    for t in sorted(tensors, key=lambda t: (t.start, -t.size)):
        if t.size > capacity:
            raise InfeasibleError(f"{where}: a tensor of {t.size:,} bytes does not fit the "
                                  f"{capacity:,}-byte buffer; use a larger l2_bytes")
        placed = [p for p in placed if p[0].end >= t.start]
        alive = [p for p in placed if p[0].start <= t.end]
        for address in sorted({0, *(p[2] % capacity for p in alive),
                               *((p[2] + p[0].size) % capacity for p in alive)}):
            mine = spans(address, t.size, capacity)
            if not any(_clash(mine, p[1]) for p in alive):
                break
        else:
            used = sum(p[0].size for p in alive)
            raise InfeasibleError(f"{where}: no free address for {t.size:,} bytes at workload "
                                  f"position {t.start} ({used:,} of {capacity:,} bytes in use); "
                                  f"use a larger l2_bytes or more cores")
        placed.append((t, mine, address))
        out[t.key] = address
    return out
