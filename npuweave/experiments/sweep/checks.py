"""Checks of sweep settings: each returns ``None`` for a good value or a one-line problem.

The per-flag parsers of ``npuweave serve`` (``npuweave.fileio.flags``) and the registries
(models, presets, schedulers, cost models) decide; nothing is run here but cheap validation
(a model is loaded once, cached, to prove it exists).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from npuweave.errors import NpuweaveError

Checker = Callable[[Any], str | None]


def int_at_least(low: int, high: int = 10**9) -> Checker:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
            return f"must be an integer in [{low}, {high:,}], got {v!r}"
        return None
    return check


def optional_seconds(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not (0 < v < math.inf):
        return f"must be a finite number of seconds > 0 (or null), got {v!r}"
    return None


def models(v: Any) -> str | None:
    names = split_models(v)
    if not names:
        return "must name at least one model (a comma list or a list of zoo names/ONNX paths)"
    for n in names:
        msg = model_problem(n)
        if msg:
            return msg
    return None


@cache
def model_problem(name: str) -> str | None:
    from npuweave.workload import load_layers

    try:
        load_layers(name)  # cached: the run loads the same layers again for free
    except NpuweaveError as exc:
        return str(exc)
    return None


def close(name: str, valid: list[str] | tuple[str, ...]) -> str:
    import difflib

    hits = difflib.get_close_matches(name, list(valid), n=1)
    return f" (did you mean {hits[0]!r}?)" if hits else ""


def one_of(names: Callable[[], list[str]], what: str) -> Checker:
    def check(v: Any) -> str | None:
        valid = names()
        if not isinstance(v, str) or v not in valid:
            return f"unknown {what} {v!r}{close(str(v), valid)}; choose one of: {', '.join(valid)}"
        return None
    return check


def npu(v: Any) -> str | None:
    from pathlib import Path

    from npuweave.hardware import preset_names

    if not isinstance(v, str):
        return f"must be a preset name or a YAML path, got {v!r}"
    if v.endswith((".yaml", ".yml")) or "/" in v:
        return None if Path(v).is_file() else f"NPU file {v!r} does not exist"
    return None if v in preset_names() else (
        f"unknown NPU preset {v!r}{close(v, preset_names())}; see 'npuweave npus'")


def mapping(v: Any) -> str | None:
    return None if isinstance(v, dict | tuple) else f"must be a mapping, got {v!r}"


def split_models(v: Any) -> list[str]:
    if isinstance(v, str):
        return [s.strip() for s in v.split(",") if s.strip()]
    if isinstance(v, list | tuple) and all(isinstance(s, str) for s in v):
        return [s.strip() for s in v if s.strip()]
    return []


def schedulers() -> list[str]:
    from npuweave.schedule import schedulers

    return list(schedulers())


def all_schedulers() -> list[str]:
    from npuweave.schedule import schedulers

    return list(schedulers("all"))


def text_list(v: Any) -> str:
    """``[300, 80]``, ``(300, 80)``, ``300`` or ``"300,80"`` as the CLI's comma text."""
    if isinstance(v, list | tuple):
        return ",".join(str(x) for x in v)
    return str(v)


def parsed(parse: Callable[[str, int], Any]) -> Checker:
    """Check each comma item alone (the per-model count is checked once models are known)."""
    def check(v: Any) -> str | None:
        if v is None:
            return None
        items = text_list(v).split(",")
        try:
            for item in items:
                parse(item, 1)
        except NpuweaveError as exc:
            return str(exc)
        return None
    return check


def option(parse: Callable[[str], Any]) -> Checker:
    def check(v: Any) -> str | None:
        try:
            parse(str(v))
        except NpuweaveError as exc:
            return str(exc)
        return None
    return check


def serve_arrivals(v: Any) -> str | None:
    if v not in ("poisson", "loadgen-server"):
        return (f"must be 'poisson' or 'loadgen-server', got {v!r} (traces and closed loops "
                "are other kinds of run)")
    return None


def cost_models() -> list[str]:
    from npuweave.cost.registry import cost_models

    return list(cost_models())


def qps_item(text: str, n: int) -> Any:
    from npuweave.fileio.flags import parse_qps

    return parse_qps(text, n)


def deadline_item(text: str, n: int) -> Any:
    from npuweave.fileio.flags import parse_deadlines

    return parse_deadlines(text, n)


def priority_item(text: str, n: int) -> Any:
    from npuweave.fileio.flags import parse_priorities

    return parse_priorities(text, n)


def duration(text: str) -> Any:
    from npuweave.fileio.flags import parse_duration

    return parse_duration(text)


def batching(text: str) -> Any:
    from npuweave.fileio.flags import parse_batching

    return parse_batching(text)


def capacity_schedulers() -> list[str]:
    from npuweave.experiments.lwplus import SCHEDULERS

    return list(SCHEDULERS)


def ratio(v: Any) -> str | None:
    from npuweave.experiments.lwplus import parse_ratio

    try:
        parse_ratio(str(v), "ratio")
    except NpuweaveError as exc:
        return str(exc)
    return None


def fraction(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < 1:
        return f"must be a fraction in (0, 1), e.g. 0.01, got {v!r}"
    return None


def npu_field_problem(name: str, value: Any) -> str | None:
    from npuweave.hardware import preset
    from npuweave.hardware.loader import npu_from_dict

    raw = {k: (list(v) if isinstance(v, tuple) else v)
           for k, v in preset("memory-centric").to_dict().items()}
    raw[name] = list(value) if isinstance(value, tuple) else value
    try:
        npu_from_dict(raw, "npu")
    except NpuweaveError as exc:
        return str(exc).split("invalid NPU spec: ", 1)[-1]
    return None


def hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, hashable(x)) for k, x in v.items()))
    return v


def policy(p: Mapping[str, Any]) -> None:
    """The point's policy built once with its options (an unknown option is an error)."""
    from npuweave.schedule import get_scheduler

    opts = dict(p.get("options") or ())
    if "seed" in opts:
        raise NpuweaveError("setting 'options': 'seed' is the point's own 'seed' setting; "
                            "give it there")
    get_scheduler(p["scheduler"], seed=p["seed"], **opts)


def serve_point(p: Mapping[str, Any], n: int) -> None:
    """A serve point's policy, PREMA priorities and load (requests and the least events
    against the memory and event limits), as ``npuweave serve`` checks them before a run."""
    from npuweave.fileio import flags
    from npuweave.schedule.prema.registry import check_priorities
    from npuweave.sim.arrivals import check_request_budget
    from npuweave.sim.serve import MAX_EVENTS
    from npuweave.sim.serving import check_work, least_units

    policy(p)
    check_priorities(p["scheduler"], None if p["priority"] is None else text_list(p["priority"]))
    load = sum(flags.parse_qps(text_list(p["qps"]), n)) * flags.parse_duration(str(p["duration"]))
    batch = flags.parse_batching(str(p["batching"]))
    check_work(least_units(list(p["models"])), load, batch.max_batch if batch else 1,
               MAX_EVENTS, False)  # first, as serve checks them
    check_request_budget(load, "qps x duration")
