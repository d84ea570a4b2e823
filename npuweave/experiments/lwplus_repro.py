"""Reproduction of the Layerweaver+ evaluation (thesis V.3, Figures V.5-V.7) on ``lwplus``.

* Figure V.5: maximum sustainable STP of Layerweaver, Layerweaver+ (approx, precise)
  normalized to the baseline's, for the pairs {IC, MN, RN} x {BB, BL, XL} at arrival ratios
  (NLP : vision) from 64:1 to 1:64, 2x per step (``fig5``).
* Figure V.6: per-model latency distributions at fixed loads (RN 800 + BB 200 QPS,
  MN 7530 + BL 470 QPS), with the share of requests past the deadline (``fig6``).
* Figure V.7: the capacity of each scheduler as one deadline varies, normalized to the
  baseline at the default deadlines (``fig7``).

Every point is a pure function of its arguments and a ``ServeSetup``; ``run_tasks`` maps them
over a process pool (``jobs``) and reports each finished point to a callback (progress bars).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from npuweave.errors import ConfigError, InfeasibleError, unknown_name
from npuweave.experiments.lwplus import (
    SCHEDULERS,
    ServeSetup,
    best_baseline_fixed,
    capacity_row,
    serve_fixed,
)

VISION = {"IC": "inceptionv3", "MN": "mobilenetv2", "RN": "resnet50"}
NLP = {"BB": "bert-base", "BL": "bert-large", "XL": "xlnet"}
DEADLINE_VISION_S = 15e-3
DEADLINE_NLP_S = 130e-3
#: NLP : vision arrival ratios of Figure V.5, left (NLP-heavy) to right.
RATIOS = tuple((2.0 ** k, 1.0) if k >= 0 else (1.0, 2.0 ** -k) for k in range(6, -7, -1))
FIG6 = (("RN", "BB", (800.0, 200.0)), ("MN", "BL", (7530.0, 470.0)))
#: Figure V.7's cases: (vision, NLP, NLP : vision ratio), as the thesis labels them.
FIG7_CASES = (("RN", "BB", (4.0, 1.0)), ("RN", "BB", (1.0, 1.0)), ("MN", "BL", (1.0, 4.0)))
FIG7_VISION_S = (5e-3, 10e-3, 15e-3, 20e-3, 30e-3)
FIG7_NLP_S = (50e-3, 90e-3, 130e-3, 170e-3, 250e-3)

#: What the thesis states (V.3.B), beside which our numbers are shown.
THESIS = {
    "fig5": "Layerweaver+ sustains a higher STP than the baseline for every pair and ratio, "
            "more than Layerweaver in some cases; approx is close to precise",
    "fig6a": "RN 800 + BB 200 QPS: the baseline misses ~80% of RN and ~50% of BB requests; "
             "Layerweaver misses ~10% of RN; Layerweaver+ meets 99%+",
    "fig6b": "MN 7530 + BL 470 QPS: a similar behaviour",
    "fig7": "a looser deadline raises STP in some cases; Layerweaver+ gains where it leaves "
            "Mode 2 less often (BB+RN 1:1, BL+MN 1:4)",
}


def parse_pairs(spec: str | None) -> list[tuple[str, str]]:
    """``None``/``"all"`` or ``"RN+BB,MN+BL"`` -> ``[("RN", "BB"), ...]`` (vision first)."""
    if spec is None or spec == "all":
        return [(v, n) for v in VISION for n in NLP]
    out = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        parts = [p.strip().upper() for p in item.split("+")]
        if len(parts) != 2:
            raise ConfigError(f"--pairs: {item!r}; write pairs like RN+BB,MN+BL")
        v = [p for p in parts if p in VISION]
        n = [p for p in parts if p in NLP]
        for p in parts:
            if p not in VISION and p not in NLP:
                raise unknown_name("model abbreviation", p, [*VISION, *NLP])
        if len(v) != 1 or len(n) != 1:
            raise ConfigError(f"--pairs: {item!r} must join one vision model ({', '.join(VISION)})"
                              f" and one NLP model ({', '.join(NLP)})")
        out.append((v[0], n[0]))
    if not out:
        raise ConfigError("--pairs: no pair given; e.g. --pairs RN+BB")
    return out


def parse_ratios(spec: str | None) -> list[tuple[float, float]]:
    """``"64:1..1:64"`` (2x steps, either direction) or a comma list ``"4:1,1:1"``.

    Ratios are NLP : vision, as on Figure V.5's axis.

    Examples
    --------
    >>> parse_ratios("4:1..1:2")
    [(4.0, 1.0), (2.0, 1.0), (1.0, 1.0), (1.0, 2.0)]
    """
    from functools import partial

    from npuweave.experiments.lwplus import parse_ratio as parse_one

    parse_ratio = partial(parse_one, flag="--ratios", order="NLP:vision")
    if spec is None or spec == "all":
        return list(RATIOS)
    if ".." in spec:
        lo_text, hi_text = spec.split("..", 1)
        a, b = parse_ratio(lo_text)
        c, d = parse_ratio(hi_text)
        k0, k1 = math.log2(a / b), math.log2(c / d)
        if abs(k0 - round(k0)) > 1e-9 or abs(k1 - round(k1)) > 1e-9:
            raise ConfigError(f"--ratios: {spec!r}; a range needs powers of two (64:1..1:64)")
        step = -1 if k1 < k0 else 1
        ks = range(round(k0), round(k1) + step, step)
        return [(2.0 ** k, 1.0) if k >= 0 else (1.0, 2.0 ** -k) for k in ks]
    return [parse_ratio(s) for s in spec.split(",") if s.strip()]


def check_schedulers(names: Iterable[str]) -> list[str]:
    out = list(names)
    for n in out:
        if n not in SCHEDULERS:
            raise unknown_name("scheduler", n, list(SCHEDULERS))
    if "baseline" not in out:
        out.insert(0, "baseline")  # everything is normalized to it
    return out


Task = tuple[str, dict[str, Any]]


def fig5_tasks(pairs: Sequence[tuple[str, str]], ratios: Sequence[tuple[float, float]],
               schedulers: Sequence[str], setup: ServeSetup) -> list[Task]:
    tasks = []
    for v, n in pairs:
        for nlp_share, vis_share in ratios:
            for s in schedulers:
                tasks.append(("capacity", {
                    "figure": "V.5", "pair": f"{v}+{n}", "models": (VISION[v], NLP[n]),
                    "ratio": (vis_share, nlp_share), "label": f"{nlp_share:g}:{vis_share:g}",
                    "deadlines": (DEADLINE_VISION_S, DEADLINE_NLP_S), "scheduler": s,
                    "setup": setup}))
    return tasks


def fig7_tasks(schedulers: Sequence[str], setup: ServeSetup,
               cases: Sequence[tuple[str, str, tuple[float, float]]] = FIG7_CASES) -> list[Task]:
    tasks = []
    for v, n, (nlp_share, vis_share) in cases:
        sweeps = [(d, DEADLINE_NLP_S, "vision") for d in FIG7_VISION_S]
        sweeps += [(DEADLINE_VISION_S, d, "nlp") for d in FIG7_NLP_S if d != DEADLINE_NLP_S]
        for dv, dn, which in sweeps:
            for s in schedulers:
                tasks.append(("capacity", {
                    "figure": "V.7", "pair": f"{n}+{v}", "models": (VISION[v], NLP[n]),
                    "ratio": (vis_share, nlp_share), "label": f"{nlp_share:g}:{vis_share:g}",
                    "deadlines": (dv, dn), "varied": which, "scheduler": s, "setup": setup}))
    return tasks


def fig6_tasks(schedulers: Sequence[str], setup: ServeSetup) -> list[Task]:
    return [("fixed", {"figure": "V.6", "pair": f"{v}+{n}", "models": (VISION[v], NLP[n]),
                       "qps": qps, "deadlines": (DEADLINE_VISION_S, DEADLINE_NLP_S),
                       "scheduler": s, "setup": setup})
            for v, n, qps in FIG6 for s in schedulers]


def run_task(task: Task) -> dict[str, Any]:
    """One point; an unreachable load becomes a row with ``qps = 0`` and the reason."""
    kind, a = task
    meta = {k: v for k, v in a.items() if k not in ("setup", "models")}
    meta["deadlines"] = "/".join(f"{d * 1e3:g}ms" for d in a["deadlines"])
    if kind == "fixed":
        fn = best_baseline_fixed if a["scheduler"] == "baseline" else None
        if fn is not None:
            row = fn(a["models"], a["qps"], a["deadlines"], a["setup"])
        else:
            row = serve_fixed(a["models"], a["qps"], a["deadlines"], a["scheduler"], a["setup"])
        return {**meta, **row, "qps": "+".join(f"{q:g}" for q in a["qps"])}
    try:
        row = capacity_row(a["models"], a["ratio"], a["deadlines"], a["scheduler"], a["setup"])
    except InfeasibleError as err:
        row = {"qps": 0.0, "stp": 0.0, "note": str(err)}
    row.pop("ratio", None)
    return {**meta, **row, "ratio": a["label"]}


def run_tasks(tasks: Sequence[Task], jobs: int = 1,
              done: Callable[[dict[str, Any]], None] | None = None,
              dask: str | None = None) -> list[dict[str, Any]]:
    """Every task's row, in task order; ``jobs > 1`` uses that many worker processes and
    ``dask`` a Dask cluster (``npuweave.experiments.executor``)."""
    from npuweave.experiments.executor import run_map

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"--jobs: {jobs!r}; give an integer >= 1")
    return run_map(run_task, tasks, jobs,
                   None if done is None else (lambda _t, row: done(row)), dask=dask)


def normalize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add ``stp_norm``: STP over the baseline's at the same figure, pair and ratio (V.7: at
    the default deadlines when present, else at the same deadlines)."""
    base: dict[tuple[Any, ...], float] = {}
    default = f"{DEADLINE_VISION_S * 1e3:g}ms/{DEADLINE_NLP_S * 1e3:g}ms"
    for r in rows:
        if r.get("scheduler") == "baseline" and "stp" in r:
            base[r["figure"], r["pair"], r["ratio"], r["deadlines"]] = r["stp"]
    for r in rows:
        if "stp" not in r:
            continue
        key = (r["figure"], r["pair"], r["ratio"],
               default if r["figure"] == "V.7" else r["deadlines"])
        b = base.get(key) or base.get((r["figure"], r["pair"], r["ratio"], r["deadlines"]))
        r["stp_norm"] = r["stp"] / b if b else None
    return rows
