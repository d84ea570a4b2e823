"""From a ``Tenant`` (and its activation footprint) to the engine's ``Unit`` records.

Units are built once per model unit and shared by every request of the model: per unit ``i``
an optional activation ``LOAD`` (the spill of the unit before, read back), the weight ``LOAD``
(none for a unit without weights), the ``COMPUTE`` (which frees the weights when it ends) and
an optional activation ``STORE`` (its own spilled output). Activation units exist only with
``traffic=True``; then every transfer also pays the DRAM latency.

``Footprint`` carries, per unit, the live bytes a checkpoint after it must store and the bytes
it spills (``npuweave.cost.preemption.live_bytes``, ``LayerCost.spill_bytes``). A spill is a
round trip: half is written after the unit, half read back before the next one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from npuweave.cost.preemption import transfer_s
from npuweave.schedule.base import Tenant
from npuweave.sim.engine import Kind, Unit


@dataclass(frozen=True, slots=True)
class Footprint:
    """Per-unit activation bytes of one tenant: ``live`` after the unit, ``spill`` round trip,
    and ``mid``, the live bytes when a sub-unit of the unit ends before the unit does (its
    layer's inputs and partial sums; empty: as ``live``).

    Examples
    --------
    >>> Footprint((10, 20), (0, 8)).live
    (10, 20)
    """

    live: tuple[int, ...]
    spill: tuple[int, ...]
    mid: tuple[int, ...] = ()

    def blocks(self, whole: Sequence[str], units: Sequence[str]) -> Footprint:
        """The footprint of ``units``: the units ``whole`` (this footprint's) cut into blocks
        in order (AI-MT's sub-layer blocks, ``npuweave.schedule.aimt.sub_layers``): a unit is
        ``whole``'s next unit itself, or block ``j`` of ``k`` of it, named ``<name>#b<j>/<k>``
        (matched to the unit it was cut from, so a unit may itself be named like a block).
        A block that ends before its unit leaves ``mid``; the last one the unit's ``live``,
        and it carries the unit's spill.

        Examples
        --------
        >>> f = Footprint((10, 5), (4, 0), (30, 5))
        >>> g = f.blocks(["a", "b"], ["a#b1/3", "a#b2/3", "a#b3/3", "b"])
        >>> g.live, g.spill, g.mid
        ((30, 30, 10, 5), (0, 0, 4, 0), (30, 30, 30, 5))
        """
        if len(whole) != len(self.live):
            raise ValueError(f"{len(whole)} units for a footprint of {len(self.live)}")
        mid = self.mid or self.live
        live: list[int] = []
        spill: list[int] = []
        mids: list[int] = []
        u = 0
        for name in units:
            if u == len(whole):
                raise ValueError(f"unit {name!r} is past the last of {len(whole)} units")
            base = whole[u]
            j, _, k = name[len(base) + 2:].partition("/")
            if name != base and not (name.startswith(f"{base}#b") and j.isdigit()
                                     and k.isdigit()):
                raise ValueError(f"unit {name!r} is neither {base!r} nor a block of it")
            last = name == base or j == k
            live.append(self.live[u] if last else mid[u])
            spill.append(self.spill[u] if last else 0)
            mids.append(mid[u])
            u += last
        if u != len(whole):
            raise ValueError(f"{len(units)} blocks cover {u} of {len(whole)} units")
        return Footprint(tuple(live), tuple(spill), tuple(mids))


@dataclass(frozen=True, slots=True)
class TenantUnits:
    """The engine's units for one tenant, by unit index (None: no such transfer)."""

    load: tuple[Unit | None, ...]
    comp: tuple[Unit, ...]
    aload: tuple[Unit | None, ...]
    astore: tuple[Unit | None, ...]
    live: tuple[int, ...]
    latency_s: float
    bw: float

    def transfer_s(self, nbytes: int) -> float:
        """Seconds one DMA stream of ``nbytes`` takes (latency included)."""
        return transfer_s(nbytes, self.latency_s, self.bw)


def tenant_units(tenant: Tenant, k: int, foot: Footprint | None, traffic: bool,
                 latency_s: float, bw: float = 1.0) -> TenantUnits:
    """Unit records of tenant ``k``.

    Examples
    --------
    >>> from npuweave.schedule.base import Tenant
    >>> u = tenant_units(Tenant("a", ("x", "y"), (1.0, 2.0), (10, 0)), 0, None, False, 0.0)
    >>> u.load[1] is None, u.comp[0].hold, u.comp[1].seconds
    (True, 10, 2.0)
    """
    n = len(tenant.compute_s)
    lat = latency_s if traffic else 0.0
    live = foot.live if foot is not None else (0,) * n
    spill = foot.spill if foot is not None and traffic else (0,) * n
    load: list[Unit | None] = []
    comp: list[Unit] = []
    aload: list[Unit | None] = []
    astore: list[Unit | None] = []
    back = 0  # read back before unit i: the half of unit i - 1's spill it did not write
    # one pass (the table is built per tenant and index: thousands of units per task)
    for i, (c, b) in enumerate(zip(tenant.compute_s, tenant.weight_bytes)):
        load.append(Unit(Kind.LOAD, k, i, b, b, lat) if b else None)
        comp.append(Unit(Kind.COMPUTE, k, i, 0, b, c))
        aload.append(Unit(Kind.LOAD, k, i, back, 0, lat) if back else None)
        s = spill[i]
        store = s - s // 2
        astore.append(Unit(Kind.STORE, k, i, store, 0, lat) if store else None)
        back = s // 2
    return TenantUnits(tuple(load), tuple(comp), tuple(aload), tuple(astore), tuple(live),
                       lat, bw)


def dispatch_order(units: TenantUnits) -> tuple[tuple[Unit, ...], tuple[tuple[Unit, ...], ...]]:
    """Per unit index, the engine's units in dispatch order, split as ``(first, rest)``.

    The order is activation load, weight load, computation, activation store (absent ones
    left out); the serving simulator queues a unit's jobs from these, built once per tenant.

    Examples
    --------
    >>> from npuweave.schedule.base import Tenant
    >>> u = tenant_units(Tenant("a", ("x", "y"), (1.0, 2.0), (10, 0)), 0, None, False, 0.0)
    >>> heads, tails = dispatch_order(u)
    >>> [h.kind.name for h in heads], [[r.kind.name for r in t] for t in tails]
    (['LOAD', 'COMPUTE'], [['COMPUTE'], []])
    """
    heads: list[Unit] = []
    tails: list[tuple[Unit, ...]] = []
    for a, w, c, s in zip(units.aload, units.load, units.comp, units.astore):
        if a is None and w is None:  # most units: the computation first
            heads.append(c)
            tails.append(() if s is None else (s,))
        else:
            q = [x for x in (a, w, c, s) if x is not None]
            heads.append(q[0])
            tails.append(tuple(q[1:]))
    return tuple(heads), tuple(tails)


Tables = tuple[TenantUnits, tuple[Unit, ...], tuple[tuple[Unit, ...], ...]]


@lru_cache(maxsize=4096)
def unit_tables(tenant: Tenant, k: int, foot: Footprint | None, traffic: bool,
                latency_s: float, bw: float) -> Tables:
    """``tenant_units`` and its ``dispatch_order``, built once per distinct tenant and index
    (units are frozen and shared, so every run of the same task reuses them)."""
    units = tenant_units(tenant, k, foot, traffic, latency_s, bw)
    heads, tails = dispatch_order(units)
    return units, heads, tails
