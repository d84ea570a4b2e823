"""``reproduce sarathi``: Sarathi-Serve's capacity gain over vLLM-style scheduling, in direction.

Sarathi-Serve (Agrawal et al., OSDI 2024) reports that chunked prefills raise the serving
capacity of Mistral-7B on one A100 under a strict P99 TBT SLO about 2.6x over vLLM. We run
the same comparison on ``a100-like`` (an NPU with the A100's peak and bandwidth, so the same
compute-to-bandwidth ratio). Every assumption is in ``docs/LLM_SERVING.md`` ("Sarathi-Serve
reproduction"), written before the first run; nothing here is tuned to the published number.
"""

from __future__ import annotations

from typing import Any

from npuweave.experiments.llm_capacity import capacity_llm
from npuweave.metrics.llm import SLO
from npuweave.sim.llm.serve import Lengths, LLMServeSpec

PUBLISHED_RATIO = 2.6
#: the assumptions of docs/LLM_SERVING.md, as data
MODEL, NPU = "mistral-7b", "a100-like"
PROMPT = Lengths("lognormal", 1730.0, 1.0)
OUTPUT = Lengths("lognormal", 415.0, 1.0)
STRICT = SLO(ttft_s=2.0, tbt_s=0.1, ttft_pct=50.0, tbt_pct=99.0)
SCHEDULERS = ("vllm", "sarathi:chunk=512")
START_QPS = 0.5  # the first load of each search (requests/s)


def reproduce_sarathi(duration_s: float = 60.0, seed: int = 0, steps: int = 5,
                      start_qps: float = START_QPS) -> list[dict[str, Any]]:
    """One row per scheduler: capacity (requests/s) under the strict SLO, and the ratio."""
    rows: list[dict[str, Any]] = []
    for sched in SCHEDULERS:
        spec = LLMServeSpec(MODEL, NPU, start_qps, duration_s, PROMPT, OUTPUT, sched, seed,
                            slo=STRICT)
        out = capacity_llm(spec, start_qps=start_qps, steps=steps)
        rows.append({"scheduler": sched, "capacity_qps": out["capacity_qps"],
                     "probes": len(out["probes"])})
    base = rows[0]["capacity_qps"]
    for r in rows:
        r["ours_x_vllm"] = r["capacity_qps"] / base if base else None
        r["paper_x_vllm"] = PUBLISHED_RATIO if r["scheduler"].startswith("sarathi") else 1.0
    return rows
