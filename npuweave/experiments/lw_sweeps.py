"""Sweeps around the Layerweaver reproduction: AI-MT's thresholds and the sequence length.

``sweep_aimt_thresholds`` is the thesis's own procedure (IV.5.B): one (low, high) setting per
scenario, the one with the best geomean STP over all pairs. ``sweep_seq_len`` reruns the
reproduction at several transformer sequence lengths and condenses each into the headline
numbers, so the reader sees the whole curve the derived default sits on. Every run of a sweep
is an independent ``Task`` handed to ``executor.run_map`` at once, so ``jobs`` workers share
the whole sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from npuweave.errors import ConfigError
from npuweave.experiments.executor import run_map
from npuweave.experiments.layerweaver import (
    SCENARIOS,
    SCHEDULERS,
    THESIS,
    Physics,
    _geomean,
    check_options,
    headline,
    make_tasks,
    prime,
    resolve_physics,
    run_grid,
    run_tasks,
)

Step = Callable[[dict[str, Any]], None]


def aimt_grid(mems: Sequence[float] | None = None,
              dists: Sequence[float] | None = None) -> list[tuple[float, float]]:
    """Every ``(mem, dist)`` setting of the sweep (``aimt_sweep``'s grid when not given)."""
    from npuweave.experiments.aimt_sweep import DISTS, MEMS

    return [(m, d) for m in mems or MEMS for d in dists or DISTS]


def sweep_aimt_thresholds(
    pairs: str | Iterable[str] | None,
    scenario: str,
    requests: int = 10,
    mems: Sequence[float] | None = None,
    dists: Sequence[float] | None = None,
    seed: int = 0,
    cost_model: str | None = None,
    on_step: Step | None = None,
    seq_len: int | None = None,
    config: str = "thesis",
    ncf: str = "tables",
    jobs: int = 1,
    dask: str | None = None,
    merge: dict[str, float] | None = None,
) -> dict[str, Any]:
    """One AI-MT setting for a whole scenario: the ``(mem, dist)`` with the best geomean STP.

    As in the thesis (IV.5.B), the thresholds are swept in 2D and the single setting with the
    best overall throughput over all pairs is kept (not a different setting per pair; ties:
    the first in grid order). Returns ``{"mem", "dist", "stp_geomean", "edge", "grid": [(mem,
    dist, stp_geomean), ...]}``; ``edge`` names the grid's outer edges the best lies on (an edge
    at the option's own limit, ``mem = 1``, is not one).
    ``merge`` (``{"merge": cap}`` or empty) is passed to every AI-MT run.
    """
    model, seq = resolve_physics(config, cost_model, seq_len)
    chosen, _ = check_options(pairs, [scenario], ["aimt"], requests, model, seq, ncf, jobs)
    phys = Physics(model, seq, ncf, seed)
    grid = aimt_grid(mems, dists)
    # one task per pair runs the whole grid (``run_grid``: settings that make an identical
    # schedule run once)
    tasks = [replace(t, grid=tuple(grid)) for t in make_tasks(
        chosen, [scenario], ["aimt"], requests, phys, {"aimt": dict(merge or {})},
        stp_only=True)]
    prime(tasks)

    def each_row(_task: Any, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            on_step(row)  # type: ignore[misc]

    per_pair = run_map(run_grid, tasks, jobs, None if on_step is None else each_row, dask=dask)
    scored = [(m, d, _geomean(rows[i]["stp"] for rows in per_pair))
              for i, (m, d) in enumerate(grid)]
    m, d, best = max(scored, key=lambda g: g[2] or 0.0)
    return {"mem": m, "dist": d, "stp_geomean": best, "edge": grid_edges(m, d, grid),
            "grid": scored}


def grid_edges(mem: float, dist: float, grid: Sequence[tuple[float, float]]) -> list[str]:
    """The grid's outer edges that ``(mem, dist)`` lies on: its largest ``mem`` or ``dist``,
    unless that is the option's own limit (``mem = 1``, ``dist = MAX_DIST``), where the rule
    itself ends and a wider grid would not help.

    Examples
    --------
    >>> g = [(m, d) for m in (0.0, 0.5) for d in (0.0, 0.1)]
    >>> grid_edges(0.5, 0.0, g), grid_edges(0.0, 0.1, g), grid_edges(0.0, 0.0, g)
    (['mem'], ['dist'], [])
    >>> grid_edges(1.0, 0.0, [(m, 0.0) for m in (0.5, 1.0)])
    []
    """
    from npuweave.schedule.aimt import MAX_DIST

    out = []
    for name, v, axis, limit in (("mem", mem, [g[0] for g in grid], 1.0),
                                 ("dist", dist, [g[1] for g in grid], MAX_DIST)):
        if len(set(axis)) > 1 and v == max(axis) < limit:
            out.append(name)
    return out


def check_seq_lens(spec: str | Sequence[int]) -> list[int]:
    """``"8,16,32"`` or a list -> validated sequence lengths (integers >= 1, no repeats).

    Examples
    --------
    >>> check_seq_lens("8, 16,32")
    [8, 16, 32]
    """
    items: list[Any] = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[int] = []
    for item in items:
        text = str(item).strip()
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(f"--seq-len-sweep takes integers >= 1 separated by commas, got "
                              f"{item!r}; use e.g. 8,16,32,64,128")
        if int(text) not in out:
            out.append(int(text))
    if not out:
        raise ConfigError("--seq-len-sweep is empty; give e.g. 8,16,32,64,128")
    return out


def sweep_seq_len(
    seq_lens: Sequence[int],
    pairs: str | Iterable[str] | None = None,
    scenarios: Sequence[str] = tuple(SCENARIOS),
    schedulers: Sequence[str] = SCHEDULERS,
    requests: int = 10,
    scheduler_opts: dict[str, dict[str, Any]] | None = None,
    seed: int = 0,
    cost_model: str | None = None,
    config: str = "thesis",
    ncf: str = "tables",
    jobs: int = 1,
    dask: str | None = None,
    on_step: Step | None = None,
) -> list[dict[str, Any]]:
    """Headline numbers per (sequence length, scenario): one row each, thesis values beside.

    Examples
    --------
    >>> rows = sweep_seq_len([16, 32], pairs="RN+BB")   # doctest: +SKIP
    >>> [(r["seq_len"], r["scenario"]) for r in rows]   # doctest: +SKIP
    [(16, 'single-batch'), (16, 'multi-batch'), (32, 'single-batch'), (32, 'multi-batch')]
    """
    lens = check_seq_lens(seq_lens)
    model, _ = resolve_physics(config, cost_model, None)
    tasks = []
    for n in lens:
        chosen, names = check_options(pairs, scenarios, schedulers, requests, model, n, ncf,
                                      jobs)
        tasks += make_tasks(chosen, scenarios, names, requests, Physics(model, n, ncf, seed),
                            scheduler_opts)
    rows = run_tasks(tasks, jobs, on_step, dask)
    out = []
    for n in lens:
        mine = [r for t, r in zip(tasks, rows, strict=True) if t.phys.seq_len == n]
        for scenario, values in headline(mine).items():
            out.append({"seq_len": n, "scenario": scenario, "cost_model": model, **values})
    return out


def aimt_label(opts: Mapping[str, float] | None = None) -> str:
    """``"AI-MT mem=0.5, dist=0.01"``: AI-MT's thresholds as run (its defaults when not given).

    Examples
    --------
    >>> aimt_label({"mem": 0.5, "dist": 0.01})
    'AI-MT mem=0.5, dist=0.01'
    """
    from npuweave.schedule.aimt import AIMT

    given: dict[str, Any] = dict(opts or {})
    p = AIMT(**given)
    merge = "" if "merge" not in (opts or {}) else f", merge={p.merge:g}"
    return f"AI-MT mem={p.mem:g}, dist={p.dist:g}{merge}"


def plot_seq_len_sweep(rows: Sequence[dict[str, Any]], path: str,
                       aimt: Mapping[str, float] | None = None) -> str:
    """PNG of the headline STP gains against the sequence length, thesis values as lines; the
    legend names AI-MT's thresholds (``aimt``: its options as run)."""
    from npuweave.report import curves_png

    series, refs = {}, {}
    for key, label in (("stp_gain_vs_baselines", "vs baselines"),
                       ("stp_gain_vs_aimt", f"vs {aimt_label(aimt)}")):
        for scenario in dict.fromkeys(r["scenario"] for r in rows):
            pts = [(r["seq_len"], 100 * r[key]) for r in rows
                   if r["scenario"] == scenario and key in r]
            if pts:
                series[f"{scenario}, {label}"] = pts
                refs[f"thesis {scenario}, {label.split(' mem=')[0]}"] = 100 * THESIS[scenario][key]
    return curves_png(path, series, refs, xlabel="tokens per request (BB, BL, XL)",
                      ylabel="Layerweaver STP gain (%)", title="Layerweaver gain vs sequence length")
