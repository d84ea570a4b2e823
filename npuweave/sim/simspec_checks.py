"""Checks of a ``SimSpec`` before any work: each bad field is a one-line ``ConfigError`` (or
``UnknownNameError``) naming the field and what to give instead.

``npuweave.simulate`` calls ``check_spec`` first; the arrival processes check their own
arguments (``sim.arrivals``), and ``ClosedLoop`` values are checked here because the closed
loop's own class lives in ``schedule`` (which checks them only when it runs).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import numpy as np

from npuweave.errors import ConfigError, unknown_name
from npuweave.fileio.flags import Batching
from npuweave.fileio.values import MAX_BATCH
from npuweave.sim.arrival_processes import ClosedLoop
from npuweave.sim.arrivals import MAX_ARRIVALS, Arrivals

MODELS_HELP = "give a list of model names (zoo), ONNX paths or (label, [LayerCost, ...]) pairs"


def _fail(field: str, value: object, what: str) -> ConfigError:
    return ConfigError(f"simulate: {field} = {value!r:.80}; {what}")


def _is_int(x: object) -> TypeGuard[int]:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def check_models(models: object) -> None:
    """``models``: a non-empty list of names, paths or ``(label, costs)`` pairs."""
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence) or not models:
        raise _fail("models", models, MODELS_HELP)
    from npuweave.cost import LayerCost

    for i, m in enumerate(models):
        if isinstance(m, (str, os.PathLike)):
            continue
        if not (isinstance(m, tuple) and len(m) == 2 and isinstance(m[0], str)
                and isinstance(m[1], Sequence) and all(isinstance(c, LayerCost) for c in m[1])):
            raise _fail(f"models[{i}]", m, MODELS_HELP)


def check_batch(batch: object, closed: bool) -> None:
    """``batch``: an integer 1..MAX_BATCH or a list of them, and only for a closed loop."""
    sizes = [batch] if not isinstance(batch, Sequence) or isinstance(batch, str) else batch
    if not sizes or any(not (_is_int(b) and 1 <= b <= MAX_BATCH) for b in sizes):
        raise _fail("batch", batch, f"give an integer from 1 to {MAX_BATCH} (or one per model)")
    if not closed and batch != 1:
        raise _fail("batch", batch, "open-loop arrivals batch with batching=Batching(...)")


def check_closed_loop(loop: ClosedLoop, n_models: int) -> None:
    """A ``ClosedLoop``: ``requests`` an integer >= 1 (bounded) or ``window_s`` > 0."""
    if loop.window_s is not None:
        w = loop.window_s
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not (math.isfinite(w)
                                                                          and w > 0):
            raise _fail("arrivals.window_s", w, "give a finite number of seconds > 0")
        return
    r = loop.requests
    if not (_is_int(r) and r >= 1):
        raise _fail("arrivals.requests", r, "give an integer >= 1 (or a window_s)")
    if r * n_models > MAX_ARRIVALS:
        raise _fail("arrivals.requests", r, f"{r} x {n_models} streams is more than "
                    f"{MAX_ARRIVALS} requests; lower it")


def check_options(spec: Any, closed: bool) -> None:
    """The scalar options: scheduler, scheduler_opts, batching, cost_model, seed, max_events,
    traffic, log, records, progress."""
    from npuweave.cost.registry import cost_models

    if not isinstance(spec.scheduler, str):
        raise _fail("scheduler", spec.scheduler, "give a name (npuweave.schedule.schedulers())")
    if not isinstance(spec.scheduler_opts, Mapping):
        raise _fail("scheduler_opts", spec.scheduler_opts, "give a dict of option: value")
    if spec.batching is not None and (closed or not isinstance(spec.batching, Batching)):
        raise _fail("batching", spec.batching, "give a fileio.flags.Batching, for open-loop "
                    "arrivals only (closed loops take batch=)")
    if spec.cost_model not in cost_models():
        raise unknown_name("cost model", str(spec.cost_model), sorted(cost_models()))
    if not (_is_int(spec.seed) and 0 <= spec.seed < 2**63):
        raise _fail("seed", spec.seed, "give a whole number >= 0")
    if not (_is_int(spec.max_events) and spec.max_events >= 1):
        raise _fail("max_events", spec.max_events, "give an integer >= 1")
    for name in ("traffic", "log", "records"):
        if not isinstance(getattr(spec, name), bool):
            raise _fail(name, getattr(spec, name), "give True or False")
    if closed and (spec.log or spec.records):
        raise _fail("log/records", True, "they are open-loop options; a closed loop's "
                    "result always has its records")
    if spec.progress is not None and not callable(spec.progress):
        raise _fail("progress", spec.progress, "give a function of the simulated time, or None")


def check_spec(spec: Any) -> None:
    """Every field of a ``SimSpec`` (its ``path`` and ``npu`` are checked by ``simulate``)."""
    check_models(spec.models)
    closed = isinstance(spec.arrivals, ClosedLoop)
    if not closed and not isinstance(spec.arrivals, Arrivals):
        raise _fail("arrivals", spec.arrivals, "give a ClosedLoop or Arrivals "
                    "(ClosedLoop(requests=...), npuweave.sim.arrivals.poisson(...), ...)")
    check_options(spec, closed)
    check_batch(spec.batch, closed)
    if isinstance(spec.arrivals, ClosedLoop):
        check_closed_loop(spec.arrivals, len(spec.models))
