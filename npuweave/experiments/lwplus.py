"""Maximum sustainable STP under deadlines (thesis V.3): one pair, one ratio, one scheduler.

Setup (``ServeSetup``): the ``lwplus`` NPU, two models under seeded Poisson arrivals at a fixed
ratio, per-model relative deadlines (15 ms vision, 130 ms NLP by default), ``requests``
requests per run. Schedulers (``SCHEDULERS``):

* ``baseline``: Triton-style serving, one batch at a time first come first served
  (``sequential`` on batches), dynamic batching per model with ``max_batch`` and a window
  swept over ``baseline_windows``; the best window is reported (the baseline at its best);
* ``layerweaver``: chapter IV on the same open-loop load, deadline-blind, with its failsafe
  (``setup.failsafe``; under the default ``maestro`` costs every vision model is
  compute-intensive and every 384-token NLP model memory-intensive at batch 1, so it never
  fires on the thesis's pairs); batches form as in chapter IV's CheckEnd (window 0, up to
  ``max_batch``);
* ``lwplus-approx`` / ``lwplus-precise``: Layerweaver+ with either estimate, batched likewise;
  ``setup.grouping="per-request"`` lets up to ``setup.max_inflight`` batches of one model be
  in service at once, each a separate candidate (the baseline and Layerweaver stay per-model
  FIFO); ``setup.inherit`` gives a batch in service the deadline of the queue behind it.

The capacity is the largest total QPS with fewer than ``budget`` of the requests missing their
deadline (``npuweave.experiments.capacity.search_capacity``). STP at that load weighs every
request by the cold standalone time of one batch-1 request of its model (thesis IV.5.C: a query
counts its own standalone time, however it was batched), summed and divided by the arrival
window (``stp``: the load that was sustained; at a fixed mix it is proportional to the QPS), or
by the time until the last finish (``stp_span``, the serving metrics' form, which also charges
the drain after the last arrival: a scheduler that finishes loose-deadline work late scores
lower on a finite run).
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npuweave.errors import ConfigError, InfeasibleError
from npuweave.experiments.capacity import Capacity, Trial, poisson_trace, search_capacity
from npuweave.schedule.base import Tenant
from npuweave.schedule.layerweaver import Layerweaver
from npuweave.schedule.layerweaver_plus import LayerweaverPlus
from npuweave.schedule.protocol import LayerBase
from npuweave.schedule.sequential import Sequential
from npuweave.schedule.standalone import replay_alone
from npuweave.sim.lwkernel import serve_auto
from npuweave.sim.lwserve import Batching, Served
from npuweave.workload import parse_model_spec

SCHEDULERS = ("baseline", "layerweaver", "lwplus-approx", "lwplus-precise")


@dataclass(frozen=True, slots=True)
class ServeSetup:
    """Everything a capacity search needs besides the models, ratio and deadlines."""

    npu: str = "lwplus"
    max_batch: int = 16
    lw_window_s: float = 0.0
    baseline_windows_s: tuple[float, ...] = (0.0, 1e-3, 2e-3, 5e-3)
    requests: int = 4000
    seeds: tuple[int, ...] = (0,)
    budget: float = 0.01
    rel_tol: float = 0.03
    #: the thesis's cost model (V.3.A: an extended MAESTRO); ``systolic-ws`` is a sensitivity
    cost_model: str = "maestro"
    #: chapter IV's failsafe for the deadline-blind ``layerweaver`` (Layerweaver+ never uses it)
    failsafe: bool = True
    #: Layerweaver+ only: how requests of one model enter the candidate group, and the cap on
    #: batches of one model in service with ``"per-request"`` (``npuweave.sim.batcher``)
    grouping: str = "per-model-fifo"
    max_inflight: int = 4
    #: Layerweaver+ only: a batch in service inherits the deadline of the queue behind it
    inherit: bool = False
    #: Layerweaver+ only: Mode 1's reading of IV.4 (``"printed"``, as the ``layerweaver`` rows
    #: run, or ``"npuweave"``, the reading Mode 1 used before issue 22's third round)
    lwplus_reading: str = "printed"
    compiled: bool = True  # the compiled serving loop (lwkernel) when numba is installed


@functools.cache
def model_costs(model: str, npu_name: str, max_batch: int,
                cost_model: str = "systolic-ws") -> tuple[Tenant, ...]:
    """The model as scheduling units at batch 1..``max_batch`` on the preset ``npu_name``."""
    from npuweave.hardware import get_npu
    from npuweave.sim.tenants import tenants_for

    npu = get_npu(npu_name)
    out = tuple(tenants_for([model], npu, b, cost_model)[0] for b in range(1, max_batch + 1))
    names = {t.units for t in out}
    if len(names) != 1:
        raise InfeasibleError(f"model {model!r} tiles differently at different batch sizes on "
                              f"{npu_name!r}; use a smaller --max-batch")
    return out


@functools.cache
def isolated_s(model: str, npu_name: str, cost_model: str = "systolic-ws") -> float:
    """Cold standalone seconds of one batch-1 request (empty buffer, engine-exact replay)."""
    from npuweave.hardware import get_npu

    npu = get_npu(npu_name)
    t = model_costs(model, npu_name, 1, cost_model)[0]
    return replay_alone(t, 0, npu.weight_buffer, npu.dram_bw)


#: the largest ratio between two rates (the thesis sweeps 1:64 to 64:1)
MAX_RATIO = 1e4


def parse_ratio(text: str, flag: str = "--ratio",
                order: str = "in --models order") -> tuple[float, float]:
    """``"4:1"`` -> ``(4.0, 1.0)``; both parts finite and > 0.

    Examples
    --------
    >>> parse_ratio("1:64")
    (1.0, 64.0)
    """
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*:\s*([0-9.eE+-]+)\s*", str(text))
    try:
        a, b = (float(m.group(1)), float(m.group(2))) if m else (math.nan, math.nan)
    except ValueError:
        a = b = math.nan
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        raise ConfigError(f"{flag}: {text!r}; write two rates > 0 as A:B (e.g. 4:1), {order}")
    if max(a, b) / min(a, b) > MAX_RATIO:
        # 1e300:1 ran and reported a second rate of 1e-298 QPS: no request of that model
        raise ConfigError(f"{flag}: {text!r}; the two rates may differ by at most "
                          f"{MAX_RATIO:g}x, {order}")
    return a, b


def policy_for(name: str, grouping: str = "per-model-fifo", max_inflight: int = 4,
               inherit: bool = False, failsafe: bool = True,
               reading: str = "printed") -> tuple[Callable[[], LayerBase], bool]:
    """``(factory, baseline?)`` for a scheduler of ``SCHEDULERS`` (``grouping``,
    ``max_inflight``, ``inherit`` and ``reading`` apply to Layerweaver+ only, ``failsafe`` to
    Layerweaver)."""
    if name == "baseline":
        return Sequential, True
    if name == "layerweaver":
        return lambda: Layerweaver(failsafe=failsafe), False
    opts: dict[str, Any] = {"grouping": grouping, "max_inflight": max_inflight,
                            "inherit": inherit, "reading": reading}
    LayerweaverPlus("approx", **opts)  # check the options now
    if name in ("lwplus-approx", "layerweaver-plus"):
        return lambda: LayerweaverPlus("approx", **opts), False
    if name == "lwplus-precise":
        return lambda: LayerweaverPlus("precise", **opts), False
    raise ConfigError(f"unknown scheduler {name!r}; choose one of: {', '.join(SCHEDULERS)}")


@dataclass
class _Runner:
    """``run(load, seed)`` for the capacity search; keeps each run's outcome for STP."""

    models: tuple[str, str]
    share: tuple[float, float]
    deadlines: tuple[float, float]
    factory: Callable[[], LayerBase]
    batching: Batching
    setup: ServeSetup
    stop: bool = True
    runs: dict[tuple[float, int], tuple[Served, np.ndarray, np.ndarray]] = field(
        default_factory=dict)

    def trace(self, load: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
        return poisson_trace([load * s for s in self.share], self.setup.requests, seed)

    def serve(self, load: float, seed: int, stop: bool) -> Served:
        from npuweave.hardware import get_npu

        npu = get_npu(self.setup.npu)
        costs = [model_costs(m, self.setup.npu, self.setup.max_batch, self.setup.cost_model)
                 for m in self.models]
        times, models = self.trace(load, seed)
        # a failing run stops at twice the budget: enough for a failure to be told from 1%
        limit = math.ceil(2 * self.setup.budget * len(times)) if stop else None
        args = (costs, npu.weight_buffer, npu.dram_bw, times, models, self.deadlines,
                self.factory(), self.batching, limit)
        out = serve_auto(*args, compiled=self.setup.compiled)
        self.runs[load, seed] = (out, times, models)
        return out

    def __call__(self, load: float, seed: int) -> tuple[int, int]:
        out = self.serve(load, seed, self.stop)
        return out.missed, len(out.finish_s)

    def stp(self, load: float) -> tuple[float, float]:
        """``(offered, span)`` STP of the runs at ``load``: standalone seconds of the requests
        per second of arrivals (what was sustained), and per second until the last finish
        (the serving metrics' span form, which also counts the drain after the last arrival)."""
        iso = np.array([isolated_s(m, self.setup.npu, self.setup.cost_model)
                        for m in self.models])
        work = span = window = 0.0
        for seed in self.setup.seeds:
            out, times, models = self.runs[load, seed]
            work += float(iso[models].sum())
            window += float(times[-1])
            span += max(float(np.nanmax(out.finish_s)), float(times[-1]))
        return work / window, work / span


def capacity_row(models: tuple[str, str], ratio: tuple[float, float],
                 deadlines: tuple[float, float], scheduler: str, setup: ServeSetup = ServeSetup(),
                 progress: Callable[[Trial], None] | None = None) -> dict[str, Any]:
    """Maximum sustainable load and STP of one scheduler on one pair at one ratio.

    ``ratio`` is in ``models`` order. For the baseline every window of
    ``setup.baseline_windows_s`` is searched and the best (highest load) is kept.
    """
    for d in deadlines:
        if not d > 0:
            raise ConfigError(f"--deadline: {d!r} s; a deadline must be > 0")
    factory, baseline = policy_for(scheduler, setup.grouping, setup.max_inflight,
                                   setup.inherit, setup.failsafe, setup.lwplus_reading)
    total = ratio[0] + ratio[1]
    share = (ratio[0] / total, ratio[1] / total)
    iso = [isolated_s(m, setup.npu, setup.cost_model) for m in models]
    start = 1.0 / (share[0] * iso[0] + share[1] * iso[1])  # the NPU busy alone at batch 1
    windows = setup.baseline_windows_s if baseline else (setup.lw_window_s,)
    best: tuple[Capacity, _Runner, float] | None = None
    t0, c0 = time.perf_counter(), time.process_time()
    for w in windows:
        runner = _Runner(models, share, deadlines, factory, Batching(w, setup.max_batch), setup)
        cap = search_capacity(runner, start, setup.seeds, setup.budget, setup.rel_tol,
                              progress=progress)
        if best is None or cap.load > best[0].load:
            best = (cap, runner, w)
    assert best is not None
    cap, runner, window = best
    out, _, _ = runner.runs[cap.load, setup.seeds[0]]
    stp = runner.stp(cap.load)
    return {
        "models": "+".join(models), "ratio": f"{ratio[0]:g}:{ratio[1]:g}",
        "scheduler": scheduler, "window_s": window, "max_batch": setup.max_batch,
        "qps": cap.load, "qps_a": cap.load * share[0], "qps_b": cap.load * share[1],
        "stp": stp[0], "stp_span": stp[1], "missed": cap.missed, "requests": cap.requests,
        "miss_rate": cap.rate, "miss_ci_low": cap.low, "miss_ci_high": cap.high,
        "straddles": cap.straddles, "failed_qps": cap.failed_load,
        "first_crossing_qps": cap.first_crossing, "first_failed_qps": cap.first_failed,
        "qps_sure": cap.sure_load,
        "qps_fail_sure": cap.fail_sure_load, "monotone": cap.monotone,
        "trials": len(cap.trials), "cost_model": setup.cost_model,
        "urgent_share": out.urgent / out.decisions if out.decisions else 0.0,
        "policy_s_per_decision": out.policy_s / out.decisions if out.decisions else 0.0,
        "time_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
    }


def serve_fixed(models: tuple[str, str], qps: tuple[float, float],
                deadlines: tuple[float, float], scheduler: str, setup: ServeSetup = ServeSetup(),
                window_s: float | None = None, seed: int = 0) -> dict[str, Any]:
    """One run at fixed QPS: per-model latencies (s) and miss rates (Figure V.6)."""
    factory, baseline = policy_for(scheduler, setup.grouping, setup.max_inflight,
                                   setup.inherit, setup.failsafe, setup.lwplus_reading)
    total = qps[0] + qps[1]
    w = (setup.baseline_windows_s[0] if window_s is None else window_s) if baseline \
        else setup.lw_window_s
    runner = _Runner(models, (qps[0] / total, qps[1] / total), deadlines, factory,
                     Batching(w, setup.max_batch), setup, stop=False)
    out = runner.serve(total, seed, stop=False)
    _, times, ids = runner.runs[total, seed]
    lat = out.finish_s - times
    row: dict[str, Any] = {"scheduler": scheduler, "window_s": w, "qps": qps,
                           "requests": len(times), "cost_model": setup.cost_model,
                           "urgent_share": out.urgent / max(out.decisions, 1)}
    for i, spec in enumerate(models):
        m = parse_model_spec(spec)[0]  # "bert-base:seq_len=384" -> miss_bert-base
        li = lat[ids == i]
        row[f"latency_{m}"] = li
        row[f"miss_{m}"] = float(np.mean(li > deadlines[i])) if li.size else 0.0
    row["miss_all"] = float(np.mean(lat > np.asarray(deadlines)[ids]))
    return row


def best_baseline_fixed(models: tuple[str, str], qps: tuple[float, float],
                        deadlines: tuple[float, float], setup: ServeSetup,
                        seed: int = 0) -> dict[str, Any]:
    """``serve_fixed`` for the baseline at the window that misses least."""
    rows = [serve_fixed(models, qps, deadlines, "baseline", setup, w, seed)
            for w in setup.baseline_windows_s]
    return min(rows, key=lambda r: r["miss_all"])
