"""LayerGroup compiler: run runs of layers slice by slice out of a small local memory (LMEM).

Given layers and an NPU with a global memory (DRAM) and a banked LMEM, ``compile_groups``
partitions the layer sequence into groups whose intermediate activations never leave LMEM.
Each group is sliced along N (batch) first, then H; backward H gives every layer's input rows
per slice; buffers get timestep lifetimes and are packed into LMEM addresses; a greedy or a
dynamic-programming search picks the groups. See ``docs/LAYERGROUP.md``.

Examples
--------
>>> from npuweave.compile.layergroup import compile_groups
>>> from npuweave.hardware import preset
>>> from npuweave.workload import load_layers
>>> plan = compile_groups(load_layers("resnet50"), preset("lmem-16m"), method="dp")  # doctest: +SKIP
>>> len(plan.groups), plan.dram_bytes / plan.baseline_dram_bytes                   # doctest: +SKIP
"""

from npuweave.compile.layergroup.allocate import allocate, peak_live
from npuweave.compile.layergroup.backward import (
    conv_input_rows,
    duplicated_rows,
    propagate_ranges,
)
from npuweave.compile.layergroup.compiler import check_npu, compile_groups
from npuweave.compile.layergroup.model import (
    Buffer,
    BufferKind,
    GroupPlan,
    GroupStatus,
    LayerGroup,
)
from npuweave.compile.layergroup.report import plan_to_dict
from npuweave.compile.layergroup.search import SEARCHES
from npuweave.compile.layergroup.tensors import analyze_layers

__all__ = [
    "SEARCHES", "Buffer", "BufferKind", "GroupPlan", "GroupStatus", "LayerGroup", "allocate",
    "analyze_layers", "check_npu", "compile_groups", "conv_input_rows", "duplicated_rows",
    "peak_live", "plan_to_dict", "propagate_ranges",
]
