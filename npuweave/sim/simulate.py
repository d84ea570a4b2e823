"""``simulate(spec)``: the one front door to every simulation path.

A ``SimSpec`` names the models, the NPU, how requests arrive (a ``ClosedLoop`` or open-loop
``Arrivals``), the scheduler and the options. ``simulate`` runs the path that fits and says in
the result which one ran and why (no silent fallback):

* closed loop -> the closed-loop fast path (``sim.fastloop``: the policy planned on the
  predicted state, compiled when numba is there) where it is valid, else the event engine
  (``sim.streams.run_tenants``). Result: ``SimResult``; ``path`` says which and why.
* open-loop arrivals -> the compiled serving loop (``sim.lwkernel.serve_auto``) where it gives
  the engine's outcome (a layer-wise ``sequential``/``layerweaver``/``layerweaver-plus``
  policy, no batching, activations on chip (``traffic=False``), no DRAM latency, one
  deadline per model, no intervals or per-request records asked for), else the event engine
  (``sim.serving.serve``). Result: ``ServeResult``; its first note says which and why.

``path="engine"`` always runs the event engine (the reference every fast path is tested
against); ``path="fast"`` insists on the fast path and raises ``ConfigError`` saying why
where it is not valid.

Examples
--------
>>> from npuweave.cost import toy_models
>>> from npuweave.hardware import toy_npu
>>> cnn, _ = toy_models()  # 3 layers of 4 s of compute and 10 weight bytes
>>> r = simulate(SimSpec([cnn], toy_npu(), ClosedLoop(requests=2), "sequential"))
>>> r.makespan_s, r.path.split(":")[0]   # fetch 1 s at 10 B/s, then 6 x 4 s of compute
(25.0, 'closed-loop fast path')
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np

from npuweave.errors import ConfigError
from npuweave.fileio.flags import Batching
from npuweave.hardware.npu import NPU
from npuweave.sim.arrival_processes import ClosedLoop
from npuweave.sim.arrivals import Arrivals
from npuweave.sim.serve import MAX_EVENTS
from npuweave.sim.simspec_checks import check_spec
from npuweave.sim.tenants import ModelSpec

PATHS = ("auto", "engine", "fast")
#: Schedulers the compiled (predictor-only) serving loop runs.
SERVING_LOOP_SCHEDULERS = ("sequential", "layerweaver", "layerweaver-plus", "aimt")


@dataclass(frozen=True, slots=True)
class SimSpec:
    """One simulation: what runs, where, how requests arrive, who decides, and the options.

    Attributes
    ----------
    models : zoo names, ONNX paths or ``(label, [LayerCost, ...])`` pairs.
    npu : the NPU (or a preset name or NPU file, resolved with ``hardware.get_npu``).
    arrivals : ``ClosedLoop(requests=...)`` / ``ClosedLoop(window_s=...)`` (one stream per
        model) or open-loop ``Arrivals`` (``sim.arrivals.poisson``, ``loadgen_server``,
        ``sim.traces.from_trace``, or ``make_arrivals``), whose model indices refer to ``models``.
    scheduler : a registered name (``npuweave.schedule.schedulers()``).
    scheduler_opts : options for the scheduler's constructor.
    batch : closed loop: one batch size for every stream or one per stream.
    batching : open loop: Triton-style dynamic batching (None: every request alone).
    traffic : open loop: move activation spills and pay DRAM latency per transfer.
    cost_model, seed, max_events : as in ``serve`` and ``run_streams``.
    log, records : open loop: keep busy intervals / per-request records.
    path : ``"auto"`` (the fastest valid path), ``"engine"`` or ``"fast"``.
    progress : open loop, engine: called with the simulated time now and then.
    """

    models: Sequence[ModelSpec]
    npu: NPU
    arrivals: ClosedLoop | Arrivals = ClosedLoop(requests=10)
    scheduler: str = "layerweaver"
    scheduler_opts: Mapping[str, object] = field(default_factory=dict)
    batch: int | Sequence[int] = 1
    batching: Batching | None = None
    traffic: bool = True
    cost_model: str = "systolic-ws"
    seed: int = 0
    max_events: int = MAX_EVENTS
    log: bool = False
    records: bool = False
    path: str = "auto"
    progress: Callable[[float], None] | None = None


def simulate(spec: SimSpec) -> Any:
    """Run ``spec`` on the path that fits; the result says which path ran and why.

    Returns a ``SimResult`` for a closed loop (``result.path``) and a ``ServeResult`` for
    open-loop arrivals (``result.notes[0]``).

    Raises
    ------
    ConfigError, UnknownNameError
        Before any work, for a bad field of ``spec``; the one-line message names the field
        and what to give (``npuweave.sim.simspec_checks``). ``path="fast"`` where no fast
        path gives the engine's outcome raises ``ConfigError`` with the reason.

    Examples
    --------
    >>> simulate(SimSpec(["resnet50"], "memory-centric", ClosedLoop(requests=0)))
    Traceback (most recent call last):
    ...
    npuweave.errors.ConfigError: simulate: arrivals.requests = 0; give an integer >= 1 (or a window_s)
    """
    if spec.path not in PATHS:
        raise ConfigError(f"simulate: path {spec.path!r}; choose one of {', '.join(PATHS)}")
    check_spec(spec)
    if not isinstance(spec.npu, (NPU, str, os.PathLike)):
        raise ConfigError(f"simulate: npu = {spec.npu!r:.80}; give an NPU, a preset name "
                          "(npuweave.hardware.presets) or an NPU YAML path")
    if not isinstance(spec.npu, NPU):
        from npuweave.hardware.resolve import get_npu

        spec = replace(spec, npu=get_npu(spec.npu))  # a preset name or a file
    if isinstance(spec.arrivals, ClosedLoop):
        return _closed(spec, spec.arrivals)
    if isinstance(spec.arrivals, Arrivals):
        return _open(spec, spec.arrivals)
    raise ConfigError(f"simulate: arrivals must be a ClosedLoop or Arrivals, got "
                      f"{type(spec.arrivals).__name__}")


def _closed(spec: SimSpec, loop: ClosedLoop) -> Any:
    from npuweave.sim.streams import costed_tenants, run_tenants

    tenants = costed_tenants(list(spec.models), spec.npu, _batch(spec.batch), spec.cost_model)
    fast = {"auto": None, "engine": False, "fast": True}[spec.path]
    return run_tenants(tenants, spec.npu.weight_buffer, spec.npu.dram_bw, spec.scheduler,
                       loop.requests or 0, loop.window_s, spec.seed, spec.max_events, fast,
                       **spec.scheduler_opts)


def _batch(batch: int | Sequence[int]) -> int | list[int]:
    return batch if isinstance(batch, int) else list(batch)


def serving_loop_refusal(spec: SimSpec) -> str | None:
    """Why the compiled serving loop would not give the engine's outcome for ``spec`` (an
    open-loop spec), or None where it does."""
    arr = spec.arrivals
    assert isinstance(arr, Arrivals)
    checks = (
        (spec.scheduler not in SERVING_LOOP_SCHEDULERS,
         f"it runs only {', '.join(SERVING_LOOP_SCHEDULERS)} (not {spec.scheduler})"),
        (spec.batching is not None, "it does not batch"),
        (spec.traffic, "it needs traffic=False (activations on chip)"),
        (spec.npu.dram_latency_s != 0, "it needs a DRAM latency of 0"),
        (spec.log or spec.records, "it keeps no intervals or per-request records"),
        (bool(spec.scheduler_opts), "it takes no scheduler options"),
        (not _one_deadline_per_model(arr), "it takes one deadline per model"),
    )
    why = [w for bad, w in checks if bad]
    return "; ".join(why) if why else None


def _one_deadline_per_model(arr: Arrivals) -> bool:
    for k in range(len(arr.models)):
        d = arr.deadline_s[arr.model == k]
        if d.size and not np.all(d == d[0]):
            return False
    return True


def _open(spec: SimSpec, arr: Arrivals) -> Any:
    if len(arr) == 0:
        raise ConfigError("simulate: no request arrives; raise the rate or the duration")
    why = "path='engine' asked for" if spec.path == "engine" else serving_loop_refusal(spec)
    if why is None:
        return _serving_loop(spec, arr)
    if spec.path == "fast":
        raise ConfigError(f"the compiled serving loop cannot run this: {why}; use "
                          "path='engine' or 'auto'")
    from npuweave.sim.serving import serve

    opts: dict[str, Any] = dict(spec.scheduler_opts)
    res = serve(list(spec.models), spec.npu, arr, spec.scheduler, batching=spec.batching,
                traffic=spec.traffic, cost_model=spec.cost_model, seed=spec.seed,
                log=spec.log, max_events=spec.max_events, progress=spec.progress,
                records=spec.records, **opts)
    return replace(res, notes=(f"path: event engine ({_why_engine(why)})", *res.notes))


def _serving_loop(spec: SimSpec, arr: Arrivals) -> Any:
    """The compiled serving loop, summarized as ``serve`` summarizes the engine's run."""
    from npuweave.metrics.requests import request_table
    from npuweave.metrics.serving import summarize
    from npuweave.schedule.protocol import LayerBase
    from npuweave.schedule.registry import get_scheduler
    from npuweave.sim.lwkernel import serve_auto
    from npuweave.sim.serving import ServeResult, isolated_time
    from npuweave.sim.tenants import costed_tenants

    n = len(arr.models)
    if len(spec.models) != n:
        raise ConfigError(f"simulate: {len(spec.models)} models but the arrivals name {n}; "
                          "give one model per arrival model")
    tenants, feet = costed_tenants(list(spec.models), spec.npu, [(k, 1) for k in range(n)],
                                   spec.cost_model)
    deadline = [float(arr.deadline_s[arr.model == k][0]) if np.any(arr.model == k)
                else math.inf for k in range(n)]
    policy = get_scheduler(spec.scheduler, seed=spec.seed)
    out = serve_auto([[t] for t in tenants], spec.npu.weight_buffer, spec.npu.dram_bw,
                     arr.time_s, arr.model, deadline, cast(LayerBase, policy))  # layer-wise
    iso = [isolated_time(tenants[k], feet[k], spec.npu, False) for k in range(n)]
    table = request_table(arr.models, arr.model, arr.time_s, out.finish_s, np.array(iso),
                          priority=arr.priority, deadline_s=arr.deadline_abs_s)
    span = max(float(np.nanmax(out.finish_s)), float(arr.time_s[-1]))
    # every request fetches each of its units' weights once (traffic off, no latency)
    fetch_s = np.array([sum(t.weight_bytes) / spec.npu.dram_bw for t in tenants])
    dram_busy = float(np.sum(fetch_s[arr.model]))
    rows = summarize(table, span_s=span if span > 0 else 1.0, pe_busy_s=out.pe_busy_s,
                     dram_busy_s=dram_busy)
    loop = out.notes[-1].removeprefix("path: ")
    notes = (f"path: {loop} (valid here: a layer-wise policy, no batching, traffic off, no "
             "DRAM latency; busy times summed per request, equal to the engine's up to "
             "rounding)", *out.notes[:-1])
    return ServeResult(table, rows, span, out.pe_busy_s, dram_busy, out.decisions,
                       policy.name, notes)


def _why_engine(why: str) -> str:
    return why if why.startswith("path=") else f"not the layer-wise serving loop: {why}"
