"""The stable JSON form of a ``GroupPlan`` (format ``npuweave.layergroup/1``).

The format is documented in ``docs/LAYERGROUP.md``; add keys, never rename or remove them
without bumping the version.
"""

from __future__ import annotations

from typing import Any

from npuweave.compile.layergroup.model import Buffer, GroupPlan, LayerGroup

FORMAT = "npuweave.layergroup/1"


def _buffer(b: Buffer, bank: int) -> dict[str, Any]:
    return {
        "id": b.id, "name": b.name, "kind": b.kind.value, "bytes": b.bytes,
        "address": b.address, "start": b.start, "end": b.end, "uses": list(b.uses),
        "banks": [b.address // bank, (b.end_address - 1) // bank],
    }


def group_to_dict(g: LayerGroup, index: int, clock_hz: float, bank: int) -> dict[str, Any]:
    return {
        "index": index, "status": g.status.value, "reason": g.reason,
        "first": g.first, "layers": list(g.layers),
        "n_slices": g.n_slices, "n_per_slice": g.n_per_slice, "h_slices": g.h_slices,
        "timesteps": g.timesteps, "lmem_peak_bytes": g.lmem_peak,
        "inputs": list(g.inputs), "outputs": list(g.outputs),
        "dram_bytes": g.dram_bytes, "baseline_dram_bytes": g.baseline_dram_bytes,
        "dram_bytes_saved": g.dram_saved,
        "cycles": round(g.seconds * clock_hz),
        "baseline_cycles": round(g.baseline_seconds * clock_hz),
        "buffers": [_buffer(b, bank) for b in g.buffers],
    }


def plan_to_dict(plan: GroupPlan) -> dict[str, Any]:
    """The plan as plain JSON-ready data (see ``docs/LAYERGROUP.md`` for every key)."""
    bank = max(plan.lmem_bytes // plan.lmem_banks, 1)
    groups = [group_to_dict(g, k, plan.clock_hz, bank) for k, g in enumerate(plan.groups)]
    return {
        "format": FORMAT,
        "model": plan.model, "npu": plan.npu, "batch": plan.batch, "method": plan.method,
        "lmem_bytes": plan.lmem_bytes, "lmem_banks": plan.lmem_banks, "clock_hz": plan.clock_hz,
        "totals": {
            "layers": sum(len(g.layers) for g in plan.groups),
            "groups": sum(1 for g in groups if g["status"] == "grouped"),
            "ungrouped_layers": [g.layers[0] for g in plan.ungrouped],
            "dram_bytes": plan.dram_bytes, "baseline_dram_bytes": plan.baseline_dram_bytes,
            "cycles": plan.cycles, "baseline_cycles": plan.baseline_cycles,
        },
        "groups": groups,
    }
