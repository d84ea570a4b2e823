"""LLM serving capacity: the largest Poisson load whose run meets the SLOs at their percentiles.

A load is tried by one ``serve_llm`` run of the spec at that ``qps``. The search doubles from
``start_qps`` until a load fails (or halves until one passes), then bisects for ``steps``
rounds; the answer is the largest load seen to pass. Each probe is one row (``probes``).

Examples
--------
>>> from npuweave.metrics.llm import SLO
>>> from npuweave.sim.llm import Lengths, LLMServeSpec
>>> spec = LLMServeSpec("llm-tiny", "tpuv5e-like", 10.0, 0.5, Lengths("fixed", 64),
...                     Lengths("fixed", 8), slo=SLO(tbt_s=1e-3, tbt_pct=99))
>>> capacity_llm(spec, steps=2)["capacity_qps"] > 0
True
"""

from __future__ import annotations

import dataclasses
from typing import Any

from npuweave.errors import ConfigError
from npuweave.metrics.llm import slo_met
from npuweave.sim.llm.serve import MAX_REQUESTS, LLMServeSpec, serve_llm

#: the fewest requests a probe is expected to hold when the search halves the load
MIN_REQUESTS = 10


def _probe(spec: LLMServeSpec, qps: float, probes: list[dict[str, Any]]) -> bool:
    row = serve_llm(dataclasses.replace(spec, qps=qps)).row
    ok = slo_met(row, spec.slo)
    probes.append({"qps": qps, "meets_slo": ok, **row})
    return ok


def capacity_llm(spec: LLMServeSpec, start_qps: float | None = None, steps: int = 6,
                 max_doublings: int = 12) -> dict[str, Any]:
    """``{"capacity_qps", "probes"}``: the largest load found meeting ``spec.slo``."""
    if spec.slo.tbt_pct is None and spec.slo.ttft_pct is None:
        raise ConfigError("capacity needs a percentile on an SLO, e.g. --slo "
                          "ttft=1s,tbt=100ms:p99")
    probes: list[dict[str, Any]] = []
    lo, hi = 0.0, start_qps or spec.qps
    if spec.requests is None and hi * spec.duration_s < 1:
        raise ConfigError(f"start load {hi:g}/s over a {spec.duration_s:g} s probe expects "
                          f"{hi * spec.duration_s:.3g} requests; raise --start-qps or "
                          "--probe-duration")
    for _ in range(max_doublings):
        if spec.requests is None and hi * spec.duration_s > MAX_REQUESTS:
            return {"capacity_qps": lo, "probes": probes,
                    "note": "stopped: the next load is over the request limit"}
        if not _probe(spec, hi, probes):
            break
        lo, hi = hi, 2 * hi
    else:
        return {"capacity_qps": lo, "probes": probes, "note": "still met at the last doubling"}
    if lo == 0.0:
        for _ in range(max_doublings):
            hi /= 2
            if spec.requests is None and hi * spec.duration_s < MIN_REQUESTS:
                return {"capacity_qps": 0.0, "probes": probes,
                        "note": f"no load met the SLO (stopped below {2 * hi:g}/s, where a "
                                f"probe expects fewer than {MIN_REQUESTS} requests)"}
            if _probe(spec, hi, probes):
                lo = hi
                hi *= 2
                break
        else:
            return {"capacity_qps": 0.0, "probes": probes, "note": "no load met the SLO"}
    for _ in range(steps):
        mid = (lo + hi) / 2
        if _probe(spec, mid, probes):
            lo = mid
        else:
            hi = mid
    return {"capacity_qps": lo, "probes": probes, "note": ""}
