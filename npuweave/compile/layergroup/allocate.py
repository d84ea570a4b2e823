"""LMEM allocation as interval packing.

Each buffer is a rectangle: its timesteps on one axis, its bytes on the other. Time is fixed
by ``assign_timesteps``; the allocator only chooses the address. Buffers are placed one by
one in op order (by first timestep), resident weights first, and among buffers born at the
same step the longer-lived first, then the larger (the seed's priority). Addresses are
multiples of ``ALIGN`` bytes.

Bank rule (``bank_rules=True``). LMEM is ``banks`` equal banks. Among the addresses where a
buffer fits, the allocator takes the lowest one in the best tier:

0. the buffer crosses no more bank boundaries than its size forces, and shares no bank with
   an already placed buffer that the same compute step also reads or writes;
1. no extra bank crossing, but a bank shared with such a co-accessed buffer;
2. an extra bank crossing and no shared bank;
3. anything that fits (plain first fit).

Candidates are the start of every free gap and every bank boundary inside a gap. If the
preferences fragment memory so much that some buffer finds no place, the whole group is
allocated again by plain first fit before the allocation is declared failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from npuweave.compile.layergroup.model import Buffer, BufferKind

ALIGN = 64


def align(nbytes: int) -> int:
    """Round ``nbytes`` up to the allocation granule."""
    return -(-nbytes // ALIGN) * ALIGN


def peak_live(buffers: Iterable[Buffer]) -> int:
    """Largest total size live at one timestep: no allocation can use less LMEM."""
    return peak_of((b.start, b.end, b.bytes) for b in buffers)


def peak_of(lives: Iterable[tuple[int, int, int]]) -> int:
    """``peak_live`` of plain ``(start, end, bytes)`` triples."""
    lives = list(lives)
    if not lives:
        return 0
    delta = [0] * (max(end for _, end, _ in lives) + 2)
    for start, end, nbytes in lives:
        size = -(-nbytes // ALIGN) * ALIGN
        delta[start] += size
        delta[end + 1] -= size
    peak = live = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak


def allocation_order(buffers: tuple[Buffer, ...] | list[Buffer]) -> list[Buffer]:
    """Resident weights first, then by first timestep, longer lifetime, larger size."""
    last = max((b.end for b in buffers), default=0)

    def key(b: Buffer) -> tuple[int, int, int, int, int]:
        resident = b.kind is BufferKind.WEIGHT and b.start == 0 and b.end == last
        return (0 if resident else 1, b.start, b.start - b.end, -b.bytes, b.id)

    return sorted(buffers, key=key)


def _gaps(busy: list[tuple[int, int]], capacity: int) -> list[tuple[int, int]]:
    gaps, cursor = [], 0
    for lo, hi in sorted(busy):
        if lo > cursor:
            gaps.append((cursor, lo))
        cursor = max(cursor, hi)
    if capacity > cursor:
        gaps.append((cursor, capacity))
    return gaps


def _tier(addr: int, size: int, bank: int, avoid: set[int]) -> int:
    first, last = addr // bank, (addr + size - 1) // bank
    extra_crossing = (last - first) > (-(-size // bank) - 1)
    shared = any(k in avoid for k in range(first, last + 1))
    return 2 * extra_crossing + shared


def best_address(size: int, busy: list[tuple[int, int]], capacity: int, bank: int,
                 avoid: set[int], bank_rules: bool = True) -> int | None:
    """Lowest address of the best tier (see the module docstring), or None if none fits."""
    best: tuple[int, int] | None = None
    for g0, g1 in _gaps(busy, capacity):
        starts = [align(g0)]
        if bank_rules:
            starts += range(-(-g0 // bank) * bank, g1, bank)
        for a in sorted(set(starts)):
            if a + size > g1:
                continue
            tier = _tier(a, size, bank, avoid) if bank_rules else 0
            if best is None or (tier, a) < best:
                best = (tier, a)
            if tier == 0:
                return a
    return None if best is None else best[1]


def _pack(buffers: tuple[Buffer, ...], capacity: int, banks: int,
          bank_rules: bool) -> dict[int, int] | None:
    bank = max(capacity // banks, 1)
    steps = max((b.end for b in buffers), default=0) + 1
    by_step: list[list[Buffer]] = [[] for _ in range(steps)]
    users: dict[int, list[Buffer]] = {}
    for b in buffers:
        for s in b.uses:
            users.setdefault(s, []).append(b)
    addr: dict[int, int] = {}
    for b in allocation_order(buffers):
        size = align(b.bytes)
        near = {o.id: o for s in range(b.start, b.end + 1) for o in by_step[s]}
        busy = [(addr[i], addr[i] + align(o.bytes)) for i, o in near.items()]
        avoid = {k for s in b.uses for o in users[s] if o.id in addr and o.id != b.id
                 for k in range(addr[o.id] // bank, (addr[o.id] + align(o.bytes) - 1) // bank + 1)}
        a = best_address(size, busy, capacity, bank, avoid, bank_rules)
        if a is None:
            return None
        addr[b.id] = a
        for s in range(b.start, b.end + 1):
            by_step[s].append(b)
    return addr


def allocate(buffers: tuple[Buffer, ...], capacity: int, banks: int = 1,
             bank_rules: bool = True) -> tuple[Buffer, ...] | None:
    """Place every buffer in ``capacity`` bytes of LMEM; None when they cannot all fit.

    Examples
    --------
    >>> from npuweave.compile.layergroup.model import Buffer, BufferKind
    >>> a = Buffer(0, "a", BufferKind.ACTIVATION, 128, 0, 1, (1,))
    >>> b = Buffer(1, "b", BufferKind.ACTIVATION, 64, 1, 2, (1, 2))
    >>> [x.address for x in allocate((a, b), 256)]
    [0, 128]
    """
    addr = _pack(buffers, capacity, banks, bank_rules)
    if addr is None and bank_rules and banks > 1:
        addr = _pack(buffers, capacity, banks, bank_rules=False)
    if addr is None:
        return None
    return tuple(replace(b, address=addr[b.id]) for b in buffers)
