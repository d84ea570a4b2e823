"""Weight tiling: a layer whose weights exceed the weight buffer becomes several units.

Rule: a layer of ``B`` weight bytes on a weight buffer of ``W`` bytes is one unit when
``B <= W``. Otherwise it is split into ``n = ceil(B / (W // 2))`` tiles of near-equal size (the
first ``B mod n`` tiles carry one byte more) so that two tiles always fit at once and the next
tile streams in while the current one computes. Each tile carries compute time in proportion
to its bytes, so tiles add up to the layer exactly. A tile smaller than ``min_tile_bytes`` (for
a weight-stationary array: one array fill of weights) cannot be used: ``InfeasibleError``.
"""

from __future__ import annotations

from collections.abc import Sequence

from npuweave.errors import InfeasibleError
from npuweave.schedule.base import Tenant


def tile(name: str, compute_s: float, weight_bytes: int, buffer_bytes: int,
         min_tile_bytes: int = 1) -> list[tuple[str, float, int]]:
    """Split one layer into ``(unit name, compute seconds, weight bytes)`` units.

    Examples
    --------
    >>> tile("fc", 3.0, 10, 4)        # 10 bytes, buffer 4 -> ceil(10 / 2) = 5 tiles of 2
    [('fc#t1/5', 0.6, 2), ('fc#t2/5', 0.6, 2), ('fc#t3/5', 0.6, 2), ('fc#t4/5', 0.6, 2), ('fc#t5/5', 0.6, 2)]
    >>> tile("conv", 1.0, 4, 4)
    [('conv', 1.0, 4)]
    """
    if weight_bytes <= buffer_bytes:
        return [(name, compute_s, weight_bytes)]
    half = buffer_bytes // 2
    if half < max(1, min_tile_bytes):
        raise InfeasibleError(
            f"layer {name!r}: {weight_bytes} weight bytes cannot be tiled into a weight buffer "
            f"of {buffer_bytes} bytes (a tile needs at least {max(1, min_tile_bytes)} bytes and "
            f"two tiles must fit); use an NPU with a larger weight_buffer")
    n = -(-weight_bytes // half)
    q, r = divmod(weight_bytes, n)
    out = []
    for j in range(n):
        nbytes = q + (1 if j < r else 0)
        out.append((f"{name}#t{j + 1}/{n}", compute_s * nbytes / weight_bytes, nbytes))
    return out


def make_tenant(label: str, compute_s: Sequence[float], weight_bytes: Sequence[int],
                buffer_bytes: int, names: Sequence[str] | None = None, model: str = "",
                batch: int = 1, min_tile_bytes: int = 1) -> Tenant:
    """A ``Tenant`` from plain per-layer costs, tiling layers larger than the buffer.

    Examples
    --------
    >>> make_tenant("m", [1.0, 2.0], [8, 30], buffer_bytes=16).units
    ('L0', 'L1#t1/4', 'L1#t2/4', 'L1#t3/4', 'L1#t4/4')
    """
    if len(compute_s) != len(weight_bytes):
        raise ValueError("compute_s and weight_bytes must have one entry per layer")
    if names is None:
        names = [f"L{i}" for i in range(len(compute_s))]
    units: list[tuple[str, float, int]] = []
    for name, comp, nbytes in zip(names, compute_s, weight_bytes):
        units.extend(tile(name, float(comp), int(nbytes), buffer_bytes, min_tile_bytes))
    return Tenant(label, tuple(u[0] for u in units), tuple(u[1] for u in units),
                  tuple(u[2] for u in units), model or label, batch)
