"""Cross-check layer energy against ZigZag 3 with the same per-access energies (not a test).

ZigZag (``zigzag-dse``) is not a dependency of npuweave. Install it on the side (it imports
``six`` without declaring it)::

    python -m venv /tmp/zigzag-venv
    /tmp/zigzag-venv/bin/pip install zigzag-dse six
    PYTHONPATH=. python benchmarks/zigzag_energy_crosscheck.py --zigzag-python /tmp/zigzag-venv/bin/python

The accelerator it writes for ZigZag is npuweave's weight-stationary array: an ``R x C`` array
(``D1`` unrolls the output dimension K over the columns, ``D2`` the reduction C over the rows),
one weight register and one output register per PE (free: 0 pJ), one SRAM per operand with
npuweave's per-access energies (pJ per 16-bit word = 2 x pJ/B) and a DRAM. Every port moves one
16-bit word per access, so ZigZag's access counts are element counts. The mapping is fixed:
spatial ``K x C``, temporal loops ``B`` (streamed rows, innermost), then the ``C`` folds, then
the ``K`` folds; the temporal ordering is given, so LOMA only places the loops in memories.

It prints, per layer, operand and memory level, ZigZag's energy beside npuweave's
(``layer_energy`` with ``dram_counts: traffic``), and the ratio. The differences it is expected
to show, each explained in ``docs/ENERGY.md``: ZigZag reads partial sums back from the ofmap
SRAM to accumulate across row folds (SCALE-Sim and npuweave count writes only), and ZigZag's
single-layer evaluation reads the input and writes the output to DRAM once, while npuweave's
time and traffic model keeps activations on chip and fetches only the weights.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from npuweave.cost import layer_cost
from npuweave.cost.energy import layer_accesses, layer_energy
from npuweave.hardware import NPU
from npuweave.hardware.energy import EnergySpec
from npuweave.workload.layer import Layer, LayerKind

R = C = 4
SPEC = EnergySpec(mac_pj=1.0, ifmap_sram_read_pj_per_byte=1.0, ifmap_sram_write_pj_per_byte=1.5,
                  filter_sram_read_pj_per_byte=2.5, filter_sram_write_pj_per_byte=3.5,
                  ofmap_sram_read_pj_per_byte=5.5, ofmap_sram_write_pj_per_byte=6.5,
                  dram_pj_per_byte=50.0)
LAYERS = [("g_small", 8, 8, 8), ("g_tall", 64, 16, 8), ("g_wide", 16, 32, 64), ("fc_like", 1, 256, 64)]
DRIVER = """import json, sys, logging
logging.disable(logging.CRITICAL)
from zigzag.api import get_hardware_performance_zigzag
_, _, cmes = get_hardware_performance_zigzag(sys.argv[1], sys.argv[2], sys.argv[3], opt="energy",
    dump_folder=sys.argv[4], loma_show_progress_bar=False)
out = []
for cme, _ in cmes[0][1]:
    acc = {str(op): [{str(k): int(v) for k, v in a.data.items()} for a in lst]
           for op, lst in cme.memory_word_access.items()}
    out.append({"mac_j": cme.mac_energy * 1e-12,
                "levels": {str(op): [e * 1e-12 for e in lst]
                           for op, lst in cme.mem_energy_breakdown.items()},
                "accesses": acc})
print(json.dumps(out))
"""


def _port(name: str, kind: str, allocation: list[str]) -> str:
    lines = "\n".join(f"          - {a}" for a in allocation)
    return (f"      - name: {name}\n        type: {kind}\n        bandwidth_min: 16\n"
            f"        bandwidth_max: 16\n        allocation:\n{lines}\n")


def _memory(name: str, operands: list[str], r_cost: float, w_cost: float, size: int,
            served: str, reads: list[str], writes: list[str]) -> str:
    ports = (_port("r_port_1", "read", reads) + _port("w_port_1", "write", writes)
             if writes else _port("rw_port_1", "read_write", reads))
    return (f"  {name}:\n    size: {size}\n    r_cost: {r_cost}\n    w_cost: {w_cost}\n"
            f"    area: 0\n    latency: 1\n    operands: [{', '.join(operands)}]\n"
            f"    ports:\n{ports}    served_dimensions: {served}\n")


def accelerator_yaml() -> str:
    big = 1 << 30
    word = 2  # bytes per 16-bit access
    mems = [
        _memory("w_reg", ["I2"], 0, 0, 16, "[]", ["I2, tl"], ["I2, fh"]),
        _memory("o_reg", ["O"], 0, 0, 16, "[D2]", ["O, tl", "O, th"], ["O, fh", "O, fl"]),
        _memory("ifmap_sram", ["I1"], word * SPEC.ifmap_sram_read_pj_per_byte,
                word * SPEC.ifmap_sram_write_pj_per_byte, big, "[D1, D2]", ["I1, tl"], ["I1, fh"]),
        _memory("filter_sram", ["I2"], word * SPEC.filter_sram_read_pj_per_byte,
                word * SPEC.filter_sram_write_pj_per_byte, big, "[D1, D2]", ["I2, tl"],
                ["I2, fh"]),
        _memory("ofmap_sram", ["O"], word * SPEC.ofmap_sram_read_pj_per_byte,
                word * SPEC.ofmap_sram_write_pj_per_byte, big, "[D1, D2]", ["O, tl", "O, th"],
                ["O, fh", "O, fl"]),
        _memory("dram", ["I1", "I2", "O"], word * SPEC.dram_pj_per_byte,
                word * SPEC.dram_pj_per_byte, 1 << 40, "[D1, D2]",
                ["I1, fh", "I1, tl", "I2, fh", "I2, tl", "O, fh", "O, tl", "O, fl", "O, th"], []),
    ]
    return ("name: ws_array\nmemories:\n" + "".join(mems)
            + f"operational_array:\n  unit_energy: {SPEC.mac_pj}\n  unit_area: 1\n"
            f"  dimensions: [D1, D2]\n  sizes: [{C}, {R}]\n")


def workload_yaml(m: int, k: int, n: int) -> str:
    return ("- id: 0\n  name: g\n  operator_type: Gemm\n"
            "  equation: O[b][k]+=I[b][c]*W[c][k]\n  loop_dims: [B, C, K]\n"
            f"  loop_sizes: [{m}, {k}, {n}]\n"
            "  operand_precision:\n    W: 16\n    I: 16\n    O: 16\n    O_final: 16\n"
            "  operand_source:\n    I: 0\n")


def mapping_yaml(m: int, k: int, n: int) -> str:
    loops = [("B", m), ("C", k // R), ("K", n // C)]
    order = "".join(f"    - [{d}, {s}]\n" for d, s in loops if s > 1)
    return (f"- name: default\n  spatial_mapping:\n    D1:\n      - K, {C}\n    D2:\n"
            f"      - C, {R}\n  temporal_ordering:\n{order}"
            "  memory_operand_links:\n    O: O\n    W: I2\n    I: I1\n")


def ours(m: int, k: int, n: int) -> dict[str, float]:
    npu = NPU("ws", R, C, 1e9, 32e9, weight_buffer=1 << 30, act_buffer=1 << 30, energy=SPEC)
    layer = Layer("g", LayerKind.GEMM, ("Gemm",), (1, m, k, n), m * k * n, 0, k * n, m * k, m * n)
    acc = layer_accesses(layer, npu)
    e = layer_energy(layer, layer_cost(layer, npu), acc, npu, SPEC)
    w = 2e-12
    return {"mac": e.compute_j,
            "I sram": acc.ifmap_sram_reads * w * SPEC.ifmap_sram_read_pj_per_byte,
            "W sram": acc.filter_sram_reads * w * SPEC.filter_sram_read_pj_per_byte
            + k * n * w * SPEC.filter_sram_write_pj_per_byte,
            "O sram": acc.ofmap_sram_writes * w * SPEC.ofmap_sram_write_pj_per_byte,
            "I dram": 0.0, "W dram": e.dram_j, "O dram": 0.0}


def theirs(doc: dict) -> dict[str, float]:
    lv = doc["levels"]  # per operand: [register, sram, dram] for W and O; [sram, dram] for I
    return {"mac": doc["mac_j"], "I sram": lv["I"][0], "W sram": lv["W"][1],
            "O sram": lv["O"][1], "I dram": lv["I"][1], "W dram": lv["W"][2],
            "O dram": lv["O"][2]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zigzag-python", default="/tmp/zigzag-venv/bin/python")
    args = parser.parse_args()
    print(f"{'layer':<9} {'part':<7} {'zigzag pJ':>12} {'npuweave pJ':>12} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "accel.yaml").write_text(accelerator_yaml())
        (tmp / "drive.py").write_text(DRIVER)
        for label, m, k, n in LAYERS:
            (tmp / "w.yaml").write_text(workload_yaml(m, k, n))
            (tmp / "m.yaml").write_text(mapping_yaml(m, k, n))
            done = subprocess.run([args.zigzag_python, str(tmp / "drive.py"), str(tmp / "w.yaml"),
                                   str(tmp / "accel.yaml"), str(tmp / "m.yaml"), str(tmp / "out")],
                                  capture_output=True, text=True, check=True, cwd=tmp)
            zz = theirs(json.loads(done.stdout.strip().splitlines()[-1])[0])
            us = ours(m, k, n)
            for part in us:
                ratio = us[part] / zz[part] if zz[part] else float("nan")
                print(f"{label:<9} {part:<7} {zz[part] * 1e12:>12.1f} {us[part] * 1e12:>12.1f}"
                      f" {ratio:>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
