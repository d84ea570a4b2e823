"""A power counter track for Perfetto/Chrome traces: watts over time from the busy intervals.

The NPU draws its static power all the time and, while the PE array runs a unit, that unit's
dynamic power (its dynamic energy over its time alone). The counter (``"ph": "C"``, name
``power``, ``args.watts``) steps at every PE interval's start and end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def power_counter(intervals: Iterable[Any], unit_power_w: Callable[[str, str], float],
                  static_w: float, pid: int = 1) -> list[dict[str, Any]]:
    """Counter events of one run's power; ``unit_power_w(tenant, unit)`` gives dynamic watts.

    Examples
    --------
    >>> from npuweave.sim.records import Interval  # doctest: +SKIP
    >>> from types import SimpleNamespace as I
    >>> ivs = [I(resource="PE", tenant="a", unit="l1", start_s=1e-6, end_s=3e-6)]
    >>> [(e["ts"], e["args"]["watts"]) for e in power_counter(ivs, lambda t, u: 5.0, 2.0)]
    [(0.0, 2.0), (1.0, 7.0), (3.0, 2.0)]
    """
    steps: list[tuple[float, int, float]] = [(0.0, 0, static_w)]
    for iv in intervals:
        if iv.resource != "PE" or iv.end_s <= iv.start_s:
            continue
        steps.append((iv.end_s, 0, static_w))
        steps.append((iv.start_s, 1, static_w + unit_power_w(iv.tenant, iv.unit)))
    steps.sort()
    return [{"ph": "C", "name": "power", "pid": pid, "tid": 0, "ts": t * 1e6,
             "args": {"watts": w}} for t, _, w in steps]
