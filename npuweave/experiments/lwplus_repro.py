"""Reproduction of the Layerweaver+ evaluation (thesis V.3, Figures V.5-V.7) on ``lwplus``.

The default setup is the thesis's (docs/REPRODUCTION.md): ``maestro`` costs and the NLP models
at MLPerf BERT's 384 tokens (``SEQ_LEN``); ``systolic-ws`` is a sensitivity study. A ratio is
always written in the order of the pair it belongs to: ``RN+BB`` at ``1:4`` is one RN request
for four BB requests (vision : NLP on Figure V.5's pairs, NLP : vision on V.7's ``BB+RN``).

* Figure V.5: maximum sustainable STP of Layerweaver, Layerweaver+ (approx, precise)
  normalized to the baseline's, for the pairs {IC, MN, RN} x {BB, BL, XL} at arrival ratios
  (vision : NLP) from 1:64 to 64:1, 2x per step (``fig5``).
* Figure V.6: per-model latency distributions at fixed loads (RN 800 + BB 200 QPS,
  MN 7530 + BL 470 QPS), 60 s of arrivals each (MLPerf's server minimum), with the share of
  requests past the deadline; and the same at our operating point, Layerweaver+ (approx)'s
  capacity at the same pair and ratio (figure ``"V.6-ours"``, with ``load_ratio``).
* Figure V.7: the capacity of each scheduler as one deadline varies, normalized to the
  baseline at the default deadlines (``fig7``).

Every point is a pure function of its arguments and a ``ServeSetup``; ``run_tasks`` maps them
over a process pool (``jobs``) and reports each finished point to a callback (progress bars).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
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
#: tokens per NLP request: MLPerf's BERT server query (SQuAD v1.1 at 384), docs/REPRODUCTION.md
SEQ_LEN = 384
#: vision : NLP arrival ratios of Figure V.5, left (NLP-heavy, the thesis's 64:1 tick) to right.
RATIOS = tuple((2.0 ** k, 1.0) if k >= 0 else (1.0, 2.0 ** -k) for k in range(-6, 7))
FIG6 = (("RN", "BB", (800.0, 200.0)), ("MN", "BL", (7530.0, 470.0)))
#: seconds of arrivals per Figure V.6 run: MLPerf's minimum server-scenario run
FIG6_DURATION_S = 60.0
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


def parse_ratios(spec: str | None, flag: str = "--vision-nlp-ratios",
                 order: str = "vision:NLP") -> list[tuple[float, float]]:
    """``"1:64..64:1"`` (2x steps, either direction) or a comma list ``"1:4,1:1"``, each
    ``A:B`` in ``order`` (the pair's: vision first for ``RN+BB``).

    Examples
    --------
    >>> parse_ratios("1:2..4:1")
    [(1.0, 2.0), (1.0, 1.0), (2.0, 1.0), (4.0, 1.0)]
    """
    from functools import partial

    from npuweave.experiments.lwplus import parse_ratio as parse_one

    parse_ratio = partial(parse_one, flag=flag, order=order)
    if spec is None or spec == "all":
        return list(RATIOS)
    if ".." in spec:
        lo_text, hi_text = spec.split("..", 1)
        a, b = parse_ratio(lo_text)
        c, d = parse_ratio(hi_text)
        k0, k1 = math.log2(a / b), math.log2(c / d)
        if abs(k0 - round(k0)) > 1e-9 or abs(k1 - round(k1)) > 1e-9:
            raise ConfigError(f"{flag}: {spec!r}; a range needs powers of two (1:64..64:1)")
        step = -1 if k1 < k0 else 1
        ks = range(round(k0), round(k1) + step, step)
        return [(2.0 ** k, 1.0) if k >= 0 else (1.0, 2.0 ** -k) for k in ks]
    return [parse_ratio(s) for s in spec.split(",") if s.strip()]


def nlp_first(ratios: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The old ``--ratios`` (NLP : vision) as vision : NLP: ``[(4, 1)] -> [(1, 4)]``."""
    return [(b, a) for a, b in ratios]


def specs(v: str, n: str, seq_len: int = SEQ_LEN) -> tuple[str, str]:
    """Zoo specs of a pair: ``("RN", "BB") -> ("resnet50", "bert-base:seq_len=384")``."""
    return VISION[v], f"{NLP[n]}:seq_len={seq_len}"


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
               schedulers: Sequence[str], setup: ServeSetup, seq_len: int = SEQ_LEN,
               deadlines: tuple[float, float] = (DEADLINE_VISION_S, DEADLINE_NLP_S)
               ) -> list[Task]:
    """Capacity searches of Figure V.5; ``ratios`` are vision : NLP."""
    tasks = []
    for v, n in pairs:
        for vis_share, nlp_share in ratios:
            for s in schedulers:
                tasks.append(("capacity", {
                    "figure": "V.5", "pair": f"{v}+{n}", "models": specs(v, n, seq_len),
                    "ratio": (vis_share, nlp_share), "label": f"{vis_share:g}:{nlp_share:g}",
                    "deadlines": deadlines, "scheduler": s, "setup": setup}))
    return tasks


def fig7_tasks(schedulers: Sequence[str], setup: ServeSetup,
               cases: Sequence[tuple[str, str, tuple[float, float]]] = FIG7_CASES,
               seq_len: int = SEQ_LEN) -> list[Task]:
    tasks = []
    for v, n, (nlp_share, vis_share) in cases:
        sweeps = [(d, DEADLINE_NLP_S, "vision") for d in FIG7_VISION_S]
        sweeps += [(DEADLINE_VISION_S, d, "nlp") for d in FIG7_NLP_S if d != DEADLINE_NLP_S]
        for dv, dn, which in sweeps:
            for s in schedulers:
                tasks.append(("capacity", {
                    "figure": "V.7", "pair": f"{n}+{v}", "models": specs(v, n, seq_len),
                    "ratio": (vis_share, nlp_share), "label": f"{nlp_share:g}:{vis_share:g}",
                    "deadlines": (dv, dn), "varied": which, "scheduler": s, "setup": setup}))
    return tasks


def fig6_tasks(schedulers: Sequence[str], setup: ServeSetup, seq_len: int = SEQ_LEN,
               deadlines: tuple[float, float] = (DEADLINE_VISION_S, DEADLINE_NLP_S),
               ours: bool = True) -> list[Task]:
    """Fixed-load runs at the thesis's loads (``"V.6"``) and, with ``ours``, at our operating
    point (``"V.6-ours"``), each ``FIG6_DURATION_S`` of arrivals."""
    kinds = ("fixed", "ours") if ours else ("fixed",)
    return [(kind, {"figure": "V.6" if kind == "fixed" else "V.6-ours", "pair": f"{v}+{n}",
                    "models": specs(v, n, seq_len), "qps": qps, "deadlines": deadlines,
                    "scheduler": s, "setup": setup})
            for kind in kinds for v, n, qps in FIG6 for s in schedulers]


def _fixed(a: dict[str, Any], qps: tuple[float, float]) -> dict[str, Any]:
    setup = replace(a["setup"], requests=max(100, math.ceil(FIG6_DURATION_S * sum(qps))))
    if a["scheduler"] == "baseline":
        return best_baseline_fixed(a["models"], qps, a["deadlines"], setup)
    return serve_fixed(a["models"], qps, a["deadlines"], a["scheduler"], setup)


def _meta(a: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in a.items() if k not in ("setup", "models")}
    meta["deadlines"] = "/".join(f"{d * 1e3:g}ms" for d in a["deadlines"])
    return meta


def _search(a: dict[str, Any]) -> dict[str, Any]:
    """The capacity search of a task's arguments, without its figure's labels; an unreachable
    load becomes ``qps = 0`` and the reason."""
    try:
        row = capacity_row(a["models"], a["ratio"], a["deadlines"], a["scheduler"], a["setup"])
    except InfeasibleError as err:
        row = {"qps": 0.0, "stp": 0.0, "note": str(err)}
    row.pop("ratio", None)
    return row


def _op_args(a: dict[str, Any]) -> dict[str, Any]:
    """The search behind an ``"ours"`` task: Layerweaver+ (approx) at the thesis's mix."""
    return {"models": a["models"], "ratio": a["qps"], "deadlines": a["deadlines"],
            "scheduler": "lwplus-approx", "setup": a["setup"]}


def _ours(a: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    """The ``"ours"`` row: the fixed-load run at the operating point ``op`` (a search row)."""
    meta, thesis = _meta(a), sum(a["qps"])
    if not op["qps"] > 0:
        return {**meta, "qps": "0+0", "load_ratio": 0.0, "note": op.get("note", "")}
    total = op["qps"]
    qps = (total * a["qps"][0] / thesis, total * a["qps"][1] / thesis)
    row = _fixed(a, qps)
    return {**meta, **row, "qps": "+".join(f"{q:.0f}" for q in qps),
            "thesis_qps": "+".join(f"{q:g}" for q in a["qps"]), "load_ratio": total / thesis}


def run_task(task: Task) -> dict[str, Any]:
    """One point; an unreachable load becomes a row with ``qps = 0`` and the reason."""
    kind, a = task
    if kind == "fixed":
        row = _fixed(a, a["qps"])
        return {**_meta(a), **row, "qps": "+".join(f"{q:g}" for q in a["qps"])}
    if kind == "ours":
        return _ours(a, _search(_op_args(a)))
    return {**_meta(a), **_search(a), "ratio": a["label"]}


def _fixed_task(item: tuple[Task, dict[str, Any] | None]) -> dict[str, Any]:
    task, op = item
    return run_task(task) if op is None else _ours(task[1], op)


def search_key(a: dict[str, Any]) -> tuple[Any, ...]:
    """What a capacity search depends on: two tasks with the same key give the same row
    (the shares are computed as ``capacity_row`` computes them, so 800:200 and 4:1 match)."""
    r0, r1 = a["ratio"]
    total = r0 + r1
    return (a["models"], (r0 / total, r1 / total), a["deadlines"], a["scheduler"],
            a["setup"])


def _dearness(a: dict[str, Any]) -> float:
    """A rough relative CPU cost of a search, to start the dearest first (measured: a
    baseline point costs ~2.5x the others per window pair, BL ~2x and XL ~3x BB)."""
    nlp = a["models"][1]
    weight = 3.0 if nlp.startswith("xlnet") else 2.0 if nlp.startswith("bert-large") else 1.0
    if a["scheduler"] == "baseline":
        weight *= 1.25 * len(a["setup"].baseline_windows_s)
    return weight


def _prewarm(tasks: Sequence[Task]) -> None:
    """Cost tables, standalone times and the compiled kernels, once in this process: forked
    workers inherit them instead of each building its own."""
    from npuweave.experiments.lwplus import isolated_s, model_costs
    from npuweave.schedule import kernel

    compiled = False
    for _, a in tasks:
        s = a["setup"]
        compiled |= s.compiled
        for m in a["models"]:
            model_costs(m, s.npu, s.max_batch, s.cost_model)
            isolated_s(m, s.npu, s.cost_model)
    if compiled:
        kernel.load()


def run_tasks(tasks: Sequence[Task], jobs: int = 1,
              done: Callable[[dict[str, Any]], None] | None = None,
              dask: str | None = None) -> list[dict[str, Any]]:
    """Every task's row, in task order; ``jobs > 1`` uses that many worker processes and
    ``dask`` a Dask cluster (``npuweave.experiments.executor``).

    Two phases. First every distinct capacity search, once (Figure V.7 at the default
    deadlines is Figure V.5's search, and an operating point of ``"ours"`` is Layerweaver+'s
    search at that mix: ``search_key``), the dearest first so the workers finish together;
    a row that reuses another figure's search says so (``search_of``). Then the fixed-load
    runs (Figure V.6), ``"ours"`` at the operating point found."""
    from npuweave.experiments.executor import run_map

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"--jobs: {jobs!r}; give an integer >= 1")
    searches: dict[tuple[Any, ...], dict[str, Any]] = {}
    users: dict[tuple[Any, ...], list[int]] = {}
    for i, (kind, a) in enumerate(tasks):
        args = a if kind == "capacity" else _op_args(a) if kind == "ours" else None
        if args is not None:
            key = search_key(args)
            searches.setdefault(key, args)
            users.setdefault(key, []).append(i)
    if dask is None:
        _prewarm(tasks)
    keys = sorted(searches, key=lambda k: -_dearness(searches[k]))
    rows: list[dict[str, Any] | None] = [None] * len(tasks)
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    first: dict[tuple[Any, ...], str] = {}

    def searched(args: dict[str, Any], row: dict[str, Any]) -> None:
        key = search_key(args)
        found[key] = row
        for i in users[key]:
            kind, a = tasks[i]
            if kind != "capacity":
                continue
            label = f"{a['figure']} {a['pair']} {a['label']}"
            out = {**_meta(a), **row, "ratio": a["label"]}
            if key in first:
                out["search_of"] = first[key]
            else:
                first[key] = label
            rows[i] = out
            if done is not None:
                done(out)

    run_map(_search, [searches[k] for k in keys], jobs, searched, dask=dask)
    rest = [i for i, (kind, _) in enumerate(tasks) if kind != "capacity"]
    items = [(tasks[i], found[search_key(_op_args(tasks[i][1]))]
              if tasks[i][0] == "ours" else None) for i in rest]

    def fixed_done(item: tuple[Task, Any], row: dict[str, Any]) -> None:
        if done is not None:
            done(row)

    for i, row in zip(rest, run_map(_fixed_task, items, jobs, fixed_done, dask=dask)):
        rows[i] = row
    assert all(r is not None for r in rows)
    return [r for r in rows if r is not None]


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
