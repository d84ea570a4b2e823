"""``roofline``: the sanity bound, ``max(MACs / peak, bytes / bandwidth)`` per layer.

Compute time is the layer's MACs at the NPU's peak MAC rate plus its vector operations at the
vector unit's peak rate (the same serial rule as ``systolic-ws``, at 100 % efficiency). Memory
time is the shared DRAM traffic (see ``npuweave.cost.traffic``) over the bandwidth, with no
latency. Every other model's ``time_s`` is at least this model's.
"""

from __future__ import annotations

from npuweave.cost.traffic import act_bytes, spill_bytes, weight_traffic
from npuweave.cost.types import LayerCost
from npuweave.hardware.npu import NPU
from npuweave.workload.layer import Layer


def roofline(layer: Layer, npu: NPU, batch: int, weight_bits: int) -> LayerCost:
    """Peak-rate cost of ``layer``: no fill, skew, edge folds or DRAM latency.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> from npuweave.workload.layer import toy_fc
    >>> fc = toy_fc()  # 256 -> 10 GEMM: 2560 MACs, 2570 weights
    >>> c = roofline(fc, preset("prema"), 1, 16)
    >>> round(c.memory_s * 1e9, 2)  # 2570 weights x 2 bytes at 358 GB/s
    14.36
    """
    macs = layer.macs * batch
    cycles = macs / npu.macs_per_cycle + batch * layer.vector_ops / npu.lanes
    wbytes, _ = weight_traffic(layer, npu, batch, weight_bits)
    spill = spill_bytes(layer, npu, batch)
    return LayerCost(
        compute_s=cycles / npu.clock_hz,
        memory_s=(wbytes + spill) / npu.dram_bw,
        dram_bytes=wbytes + spill,
        weight_bytes=wbytes,
        spill_bytes=spill,
        act_bytes=act_bytes(layer, npu, batch),
        macs=macs,
        utilization=min(1.0, macs / (npu.macs_per_cycle * cycles)) if macs else 0.0,
    )
