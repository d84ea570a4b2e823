"""Task sets: traces whose rows carry their own per-layer latencies (``layer_latencies_s``).

Users with latencies measured on hardware, and PREMA reimplementations such as Dysta, give a
workload as data: one row per request with ``id``, ``model`` (a label), ``arrival_s``,
``priority`` and ``layer_latencies_s`` (optional ``isolated_s``, and ``deadline_s``, a latency
budget relative to the arrival as in every trace). Each row becomes its own tenant whose units
are exactly those layers, with no weights and no activation traffic (no DMA work at all), so
a unit boundary is a layer boundary. The isolated time is ``isolated_s`` or the sum of the
layer times. Either every row carries ``layer_latencies_s`` or none does.

Examples
--------
>>> ts = task_set_from_rows([{"id": "a", "model": "m0", "arrival_s": 0.0, "priority": 1,
...                          "layer_latencies_s": [1e-3, 2e-3]}], "tasks.json")
>>> ts.ids, ts.isolated_s
(('a',), (0.003,))
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from npuweave.errors import ConfigError

#: Most layers one row may list.
MAX_LAYERS = 100_000
#: Longest single layer accepted (seconds): anything longer is a unit mistake.
MAX_LAYER_S = 3600.0
LAT_KEY = "layer_latencies_s"


@dataclass(frozen=True, slots=True)
class TaskSet:
    """Rows of a task set, in arrival order (relative deadlines; ``inf``: none)."""

    ids: tuple[Any, ...]
    labels: tuple[str, ...]
    arrival_s: tuple[float, ...]
    priority: tuple[int, ...]
    deadline_s: tuple[float, ...]
    isolated_s: tuple[float, ...]
    latencies_s: tuple[tuple[float, ...], ...]


def has_latencies(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> bool:
    """Whether the rows form a task set; a mix is an error naming the first row without."""
    given = [LAT_KEY in r for _, r in rows]
    if any(given) and not all(given):
        where = rows[given.index(False)][0]
        raise ConfigError(f"{where}: no '{LAT_KEY}' while other rows have it; give it in every "
                          "row (a task set) or in none (a trace of zoo models)")
    return bool(given) and all(given)


def _latencies(where: str, value: Any) -> tuple[float, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{where}: '{LAT_KEY}' must be a non-empty list of seconds per layer; "
                          f"got {str(value)[:40]!r}")
    if len(value) > MAX_LAYERS:
        raise ConfigError(f"{where}: '{LAT_KEY}' lists {len(value)} layers; at most "
                          f"{MAX_LAYERS}")
    out = []
    for k, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v < 0:
            raise ConfigError(f"{where}: '{LAT_KEY}'[{k}] = {v!r}; layer times are finite "
                              "numbers of seconds >= 0")
        if v > MAX_LAYER_S:
            raise ConfigError(f"{where}: '{LAT_KEY}'[{k}] = {v!r} s is over an hour; layer "
                              "times are seconds (e.g. 0.0012 for 1.2 ms)")
        out.append(float(v))
    if sum(out) <= 0:
        raise ConfigError(f"{where}: '{LAT_KEY}' sums to 0 s; give the layers' times")
    return tuple(out)


def _positive(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ConfigError(f"{where}: '{key}' = {value!r}; give a finite number of seconds > 0")
    return float(value)


def task_set_from_rows(raw: Sequence[Mapping[str, Any]], source: str) -> TaskSet:
    """Validate task-set rows (dicts as in a JSON file) into a ``TaskSet``."""
    from npuweave.sim.traces import _normalize, _row_values

    cols: dict[str, list[Any]] = {k: [] for k in ("id", "label", "t", "p", "d", "iso", "lat")}
    src = Path(source)
    known = {"id", "model", "arrival_s", "time", "time_s", "arrival", "priority", "deadline",
             "deadline_s", "isolated_s", LAT_KEY}
    for i, row in enumerate(raw):
        where = f"{source}: request {i}"
        bad = sorted(str(k) for k in row if k not in known)
        if bad:
            raise ConfigError(f"{where}: unknown field {bad[0]!r}; use {', '.join(sorted(known))}")
        lat = _latencies(where, row.get(LAT_KEY))
        plain = {k: v for k, v in row.items() if k not in (LAT_KEY, "id", "isolated_s")}
        canon = _normalize(src, f"request {i}", plain)
        t, label, p, d = _row_values(src, f"request {i}", canon, [])
        if cols["t"] and t < cols["t"][-1]:
            raise ConfigError(f"{where}: 'arrival_s' is earlier than the row before; sort the "
                              "task set by arrival time")
        iso = row.get("isolated_s")
        cols["iso"].append(sum(lat) if iso is None else _positive(where, "isolated_s", iso))
        rid = row.get("id", i)
        if isinstance(rid, bool) or not isinstance(rid, (str, int)):
            raise ConfigError(f"{where}: 'id' = {str(rid)[:40]!r}; give a string or an integer")
        cols["id"].append(rid)
        for key, v in (("label", label), ("t", t), ("p", p), ("d", d), ("lat", lat)):
            cols[key].append(v)
    if not cols["t"]:
        raise ConfigError(f"{source}: the task set has no requests")
    if len(set(map(str, cols["id"]))) != len(cols["id"]):
        raise ConfigError(f"{source}: 'id' values repeat; give every request its own id")
    return TaskSet(tuple(cols["id"]), tuple(cols["label"]), tuple(cols["t"]), tuple(cols["p"]),
                   tuple(cols["d"]), tuple(cols["iso"]), tuple(cols["lat"]))


def read_task_set(path: str) -> TaskSet | None:
    """The task set in a JSON trace file, or None when its rows carry no layer latencies (or
    the trace is CSV: task sets are JSON, a list of latencies per row)."""
    from npuweave.sim.traces import _read_rows

    p = Path(path)
    if p.suffix.lower() != ".json":  # a CSV trace is streamed; its header names no latencies
        return None
    rows = list(_read_rows(p))
    if not has_latencies(rows):
        return None
    return task_set_from_rows([r for _, r in rows], str(p))


def serve_tasks(ts: TaskSet, scheduler: Any, *, seed: int = 0, records: bool = True,
                max_events: int = 50_000_000, log: bool = False, **opts: object) -> Any:
    """Serve a task set: every row its own tenant of exactly its layer times, no DMA.
    ``scheduler`` is a registered name (``opts`` are its options) or a policy object."""
    from npuweave.schedule.base import Tenant
    from npuweave.schedule.registry import get_scheduler
    from npuweave.sim.arrivals import make_arrivals
    from npuweave.sim.serve import Simulator
    from npuweave.sim.serving import _table, finish

    policy = (get_scheduler(scheduler, seed=seed, **opts) if isinstance(scheduler, str)
              else scheduler)
    tenants = [Tenant(lab, tuple(f"L{j}" for j in range(len(lat))), lat, (0,) * len(lat),
                      lab) for lab, lat in zip(ts.labels, ts.latencies_s)]
    rows = [(t, k, p, t + d) for k, (t, p, d) in
            enumerate(zip(ts.arrival_s, ts.priority, ts.deadline_s))]
    sim = Simulator(tenants, 1, 1.0, policy, arrivals=rows, isolated_s=ts.isolated_s,
                    max_events=max_events, segments=records, log=log)
    sim.run()
    index = {lab: k for k, lab in enumerate(dict.fromkeys(ts.labels))}  # first-seen order
    arr = make_arrivals(ts.arrival_s, [index[lab] for lab in ts.labels], tuple(index),
                        ts.priority, ts.deadline_s)
    groups = [(t, k, 1, [k]) for k, t in enumerate(ts.arrival_s)]
    table = _table(sim, groups, arr, np.array(ts.isolated_s))
    return finish(sim, groups, arr, table, policy.name, log=log, ids=ts.ids)
