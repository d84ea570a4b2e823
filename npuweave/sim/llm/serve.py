"""The front door of LLM serving: requests with lengths, the KV pool, one run, its metrics.

``serve_llm(spec)`` runs one ``LLMServeSpec`` (frozen, so sweeps and capacity searches can
hash and repeat it) and returns an ``LLMResult``: the summary row, one record per request, KV
occupancy over time and PE/DRAM utilization per phase.

Examples
--------
>>> spec = LLMServeSpec(model="llm-tiny", npu="tpuv5e-like", qps=50.0, duration_s=0.2,
...                     prompt=Lengths("fixed", 32), output=Lengths("fixed", 4))
>>> res = serve_llm(spec)
>>> res.row["requests"] == len(res.records["ttft_s"])
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npuweave.errors import ConfigError
from npuweave.fileio.values import MAX_TIME_S
from npuweave.hardware import NPU, get_npu
from npuweave.metrics.llm import SLO, llm_summary
from npuweave.sim.arrivals import poisson
from npuweave.sim.llm.costs import DEFAULT_COST_MODEL, StepCosts, step_costs
from npuweave.sim.llm.loop import PHASES, Trace, run
from npuweave.sim.llm.policies import LLMScheduler, parse_llm_scheduler
from npuweave.sim.llm.state import LLMState
from npuweave.sim.records import Interval
from npuweave.workload.llm import MAX_TOKENS, LLMConfig, check_tokens, get_llm

MAX_REQUESTS = 5_000_000
DEFAULT_BLOCK = 16  # KV block (page) size in tokens


@dataclass(frozen=True, slots=True)
class Lengths:
    """A token-length distribution: ``fixed`` (``mean``), ``uniform`` (``lo``..``hi``) or
    ``lognormal`` whose mean is ``mean`` and whose log has standard deviation ``sigma``
    (``mu = ln(mean) - sigma^2 / 2``). Samples are rounded and at least 1."""

    kind: str
    mean: float
    sigma: float = 0.0
    lo: int = 1
    hi: int = 1

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.kind == "fixed":
            x = np.full(n, self.mean)
        elif self.kind == "uniform":
            x = rng.integers(self.lo, self.hi + 1, n).astype(float)
        else:
            mu = math.log(self.mean) - self.sigma ** 2 / 2
            x = rng.lognormal(mu, self.sigma, n)
        # clipped before the cast: a far lognormal tail would wrap around int64
        return np.clip(np.rint(x), 1, MAX_TOKENS).astype(np.int64)


@dataclass(frozen=True, slots=True)
class LLMServeSpec:
    """One LLM serving run (see ``serve_llm``); ``scheduler`` is parsed by
    ``parse_llm_scheduler``. Requests beyond the model's context are clamped: the prompt to
    ``max_context - 1`` and the output to what remains (as Vidur does)."""

    model: str | LLMConfig
    npu: str | NPU
    qps: float
    duration_s: float
    prompt: Lengths
    output: Lengths
    scheduler: str = "sarathi:chunk=512"
    seed: int = 0
    preempt: str = "recompute"
    swap_bw: float = 32e9
    kv_link_bw: float = 50e9
    max_tokens: int = 4096
    max_seqs: int = 256
    block: int = DEFAULT_BLOCK
    cost_model: str = DEFAULT_COST_MODEL
    weights: str | None = None
    kv: str | None = None
    slo: SLO = field(default_factory=SLO)
    log: bool = False
    #: explicit requests ``(arrival s, prompt, output)`` (a trace); ``qps``, ``duration_s``,
    #: ``prompt`` and ``output`` are then unused
    requests: tuple[tuple[float, int, int], ...] | None = None


@dataclass(slots=True)
class LLMResult:
    """``row`` (summary), ``records`` (per request columns), ``trace`` and run facts."""

    row: dict[str, Any]
    records: dict[str, np.ndarray]
    trace: Trace
    kv_total_blocks: int
    notes: list[str]

    def intervals(self) -> list[Interval]:
        """PE and DRAM busy time per iteration (``log=True`` runs), tenant = phase, for
        ``report.write_trace`` and ``report.plot_timeline``. Within an iteration the two
        overlap from its start (the cost model's overlap), so a lane shows how busy it was."""
        out: list[Interval] = []
        for i, (start, _, phase, pe, dram) in enumerate(self.trace.iters or ()):
            out.append(Interval("PE", phase, i, f"iter{i}", start, start + pe))
            out.append(Interval("DRAM", phase, i, f"iter{i}", start, start + dram))
        return out

    def request_rows(self) -> list[dict[str, Any]]:
        keys = list(self.records)
        return [{k: self.records[k][i].item() for k in keys}
                for i in range(len(self.records["id"]))]


def kv_capacity_blocks(cfg: LLMConfig, npu: NPU, weight_bits: int, kv_bits: int,
                       block: int) -> int:
    """KV blocks that fit in the NPU's DRAM beside the weights: ``(DRAM - weights) //
    (block * KV bytes per token)``; an NPU without a DRAM size, or too small, is refused."""
    if npu.global_mem_bytes <= 0:
        raise ConfigError(f"NPU {npu.name!r} has no global_mem_bytes (DRAM size); LLM serving "
                          f"needs it for the KV cache: add it to the NPU YAML")
    free = npu.global_mem_bytes - cfg.weight_bytes(weight_bits)
    blocks = free // (block * cfg.kv_bytes_per_token(kv_bits)) if free > 0 else 0
    if blocks < 1:
        raise ConfigError(f"{cfg.name} weights ({cfg.weight_bytes(weight_bits) / 2**30:.1f} GiB"
                          f") leave no room for a KV cache in {npu.name}'s "
                          f"{npu.global_mem_bytes / 2**30:.1f} GiB; use a larger NPU or "
                          f"smaller weights (e.g. :weights=int8)")
    return int(blocks)


def check_kv_fits(cfg: LLMConfig, npu: NPU, weight_bits: int, kv_bits: int,
                  contexts: list[int], what: str, block: int = DEFAULT_BLOCK) -> None:
    """Refuse requests of ``contexts`` tokens whose KV blocks cannot all be in DRAM beside the
    weights at once (``kv_capacity_blocks``; a serving run refuses one request that cannot
    fit). ``what`` names the batch in the message.

    Examples
    --------
    >>> check_kv_fits(get_llm("llama-3-8b"), get_npu("tpuv5e-like"), 16, 16, [2048] * 4, "x")
    """
    have = kv_capacity_blocks(cfg, npu, weight_bits, kv_bits, block)
    need = sum(-(-c // block) for c in contexts)
    if need > have:
        per = block * cfg.kv_bytes_per_token(kv_bits)
        free = npu.global_mem_bytes - cfg.weight_bytes(weight_bits)
        raise ConfigError(
            f"{what}: its KV cache needs {need * per:,} B ({need} blocks of {block} tokens) but "
            f"{npu.name}'s {npu.global_mem_bytes:,} B of DRAM leave {free:,} B ({have} blocks) "
            f"beside the {cfg.weight_bytes(weight_bits):,} B of weights; lower batch= or "
            "context=, store the cache in fewer bits (:kv=int8), or use an NPU with more DRAM")


def make_requests(spec: LLMServeSpec, cfg: LLMConfig) -> tuple[np.ndarray, ...]:
    """Poisson arrival times and clamped prompt and output lengths (their own seeded stream),
    or the spec's explicit requests."""
    if spec.requests is not None:
        return _trace_requests(spec.requests, cfg)
    arrivals = poisson((cfg.name,), (spec.qps,), spec.duration_s, spec.seed)
    n = len(arrivals)
    if n > MAX_REQUESTS:
        raise ConfigError(f"{n} requests are over the limit {MAX_REQUESTS}; lower --qps or "
                          f"--duration")
    rng = np.random.default_rng(np.random.SeedSequence([spec.seed, 27]))
    prompt = np.minimum(spec.prompt.sample(rng, n), cfg.max_context - 1)
    output = np.minimum(spec.output.sample(rng, n), cfg.max_context - prompt)
    return arrivals.time_s, prompt, output


def _trace_requests(reqs: tuple[tuple[float, int, int], ...],
                    cfg: LLMConfig) -> tuple[np.ndarray, ...]:
    """Validate a trace: times finite, >= 0 and sorted; lengths >= 1 within the context."""
    if len(reqs) > MAX_REQUESTS:
        raise ConfigError(f"trace: {len(reqs)} requests are over the limit {MAX_REQUESTS}")
    times = np.array([r[0] for r in reqs], dtype=np.float64)
    prompt = np.array([r[1] for r in reqs], dtype=np.int64)
    output = np.array([r[2] for r in reqs], dtype=np.int64)
    bad = np.flatnonzero(~(times >= 0) | (times > MAX_TIME_S) | (prompt < 1) | (output < 1)
                         | (prompt + output > cfg.max_context))
    if len(bad):
        i = int(bad[0])
        raise ConfigError(f"trace request {i} (row {i + 1}): time {reqs[i][0]}, prompt "
                          f"{reqs[i][1]}, output {reqs[i][2]}: need a time from 0 to "
                          f"{MAX_TIME_S:g} s and lengths >= 1 with prompt + output <= "
                          f"{cfg.name}'s maximum context {cfg.max_context}")
    if np.any(np.diff(times) < 0):
        raise ConfigError("trace: arrival times must be non-decreasing; sort the file by time")
    return times, prompt, output


def check_spec(spec: LLMServeSpec) -> tuple[LLMConfig, NPU, LLMScheduler]:
    """Resolve and validate a spec before any work; raises ``ConfigError`` naming the field."""
    cfg, npu, sched = get_llm(spec.model), get_npu(spec.npu), parse_llm_scheduler(spec.scheduler)
    if not (math.isfinite(spec.qps) and spec.qps > 0):
        raise ConfigError(f"qps must be a positive number, got {spec.qps}")
    if not (math.isfinite(spec.duration_s) and spec.duration_s > 0):
        raise ConfigError(f"duration must be positive, got {spec.duration_s} s")
    if spec.requests is None and spec.qps * spec.duration_s > MAX_REQUESTS:
        raise ConfigError(f"qps {spec.qps:g} over {spec.duration_s:g} s is about "
                          f"{spec.qps * spec.duration_s:.3g} requests, over the limit "
                          f"{MAX_REQUESTS}; lower --qps or --duration")
    if spec.preempt not in ("recompute", "swap"):
        raise ConfigError(f"preempt must be recompute or swap, got {spec.preempt!r}")
    for name in ("max_tokens", "max_seqs", "block"):
        check_tokens(getattr(spec, name), name)
    longest = [x.mean if x.kind == "fixed" else x.hi if x.kind == "uniform" else 0
               for x in (spec.prompt, spec.output)]
    # a fixed or uniform length bounds every draw: one that cannot fit is an error, not a clamp
    # (lognormal tails are clamped, as the spec's docstring says)
    if longest[0] >= cfg.max_context or longest[1] >= cfg.max_context or (
            all(longest) and sum(longest) > cfg.max_context):
        shown = [f"{x:g}" if x else "lognormal" for x in longest]
        raise ConfigError(f"prompt {shown[0]} + output {shown[1]} tokens cannot fit {cfg.name}'s maximum "
                          f"context {cfg.max_context}; give at most {cfg.max_context} tokens "
                          "in all (prompt at most one less)")
    for name in ("swap_bw", "kv_link_bw"):
        if not getattr(spec, name) > 0:
            raise ConfigError(f"{name} must be a positive bandwidth, got {getattr(spec, name)}")
    return cfg, npu, sched


def serve_llm(spec: LLMServeSpec) -> LLMResult:
    """Run ``spec`` to the last token of every request (see the module docstring)."""
    cfg, npu, sched = check_spec(spec)
    costs = step_costs(cfg, npu, spec.cost_model, spec.weights, spec.kv, spec.block)
    blocks = kv_capacity_blocks(cfg, npu, costs.weight_bits, costs.kv_bits, spec.block)
    times, prompt, output = make_requests(spec, cfg)
    if len(times) == 0:
        raise ConfigError("no request arrives in this run; raise --qps or --duration")
    if sched.name == "disagg":
        from npuweave.sim.llm.disagg import run_disagg

        st, trace = run_disagg(times, prompt, output, costs, blocks, sched, spec)
    else:
        st = LLMState(times, prompt, output, blocks, spec.block, spec.max_seqs)
        trace = run(st, costs, sched, spec.max_tokens, spec.preempt == "swap", spec.swap_bw,
                    spec.log)
    return _result(st, trace, blocks, spec, sched, costs)


def _result(st: LLMState, trace: Trace, blocks: int, spec: LLMServeSpec, sched: LLMScheduler,
            costs: StepCosts) -> LLMResult:
    gaps = trace.tbt()
    row: dict[str, Any] = {"model": costs.cfg.name, "scheduler": sched.label}
    row.update(llm_summary(st.arrival_s, st.first_s, st.finish_s, st.gen, st.max_gap, gaps,
                           trace.span_s, spec.slo))
    row["iterations"] = trace.iterations
    row["preemptions"] = int(st.preemptions.sum())
    kv = np.asarray(trace.kv_blocks, dtype=float)
    row["kv_peak"] = float(kv.max() / blocks) if len(kv) else 0.0
    for p in PHASES:
        wall, pe, dram, n = trace.phase[p]
        row[f"{p}_pe_util"] = pe / wall if wall else None
        row[f"{p}_dram_util"] = dram / wall if wall else None
    records = {"id": np.arange(st.n), "arrival_s": st.arrival_s, "prompt": st.prompt,
               "output": st.output, "ttft_s": st.first_s - st.arrival_s,
               "e2e_s": st.finish_s - st.arrival_s, "max_tbt_s": st.max_gap,
               "preemptions": st.preemptions}
    notes = [f"KV cache: {blocks} blocks of {spec.block} tokens "
             f"({blocks * spec.block} tokens) beside the weights"]
    return LLMResult(row, records, trace, blocks, notes)
