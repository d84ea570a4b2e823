"""Cost models: what each layer costs on an NPU, as pure cacheable functions.

``profile(layers, npu, batch, formats, model)`` gives one ``LayerCost`` per layer. Models are
registered by name (``cost_models()``): ``systolic-ws`` (default; SCALE-Sim v3 weight-stationary
cycles), ``maestro`` (MAESTRO's kcp_ws runtime), ``prema`` (PREMA's Algorithm 1) and
``roofline`` (the peak-rate lower bound). All share
one DRAM traffic model (``npuweave.cost.traffic``). Formulas: ``docs/COST_MODEL.md``.

Examples
--------
>>> from npuweave.cost import profile
>>> from npuweave.hardware import preset
>>> from npuweave.workload.layer import toy_fc
>>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
>>> total = sum(profile([fc], preset("prema"), batch=1))
>>> total.bound
'compute'
"""

from npuweave.cost.profiles import Profile, profile_model
from npuweave.cost.registry import (
    CostModel,
    clear_cache,
    cost_models,
    get_cost_model,
    layer_cost,
    profile,
    register_cost_model,
    unschedulable,
)
from npuweave.cost.types import LayerCost, toy_models

__all__ = [
    "Profile", "profile_model",
    "CostModel", "LayerCost", "clear_cache", "cost_models", "get_cost_model", "layer_cost", "profile",
    "register_cost_model", "toy_models", "unschedulable",
]
