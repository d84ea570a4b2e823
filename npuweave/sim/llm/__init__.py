"""LLM serving on one NPU (or a prefill/decode pair): iteration-level batching over the
per-layer cost model. ``serve_llm(LLMServeSpec(...))`` is the front door; policies are listed
by ``llm_schedulers()``. Formulas and assumptions: ``docs/LLM_SERVING.md``."""

from npuweave.sim.llm.costs import StepCost, StepCosts
from npuweave.sim.llm.policies import LLMScheduler, llm_schedulers, parse_llm_scheduler
from npuweave.sim.llm.serve import Lengths, LLMResult, LLMServeSpec, kv_capacity_blocks, serve_llm

__all__ = ["LLMResult", "LLMScheduler", "LLMServeSpec", "Lengths", "StepCost", "StepCosts",
           "kv_capacity_blocks", "llm_schedulers", "parse_llm_scheduler", "serve_llm"]
