"""Cross-check ``systolic-ws`` compute cycles against SCALE-Sim v3 (not a test; needs a venv).

SCALE-Sim is not a dependency of npuweave. Install it on the side and point this script at it::

    python -m venv /tmp/scalesim-venv
    /tmp/scalesim-venv/bin/pip install scalesim==3.0.0 'numpy<2.4'
    python benchmarks/scalesim_crosscheck.py --scalesim-python /tmp/scalesim-venv/bin/python

It writes SCALE-Sim configurations (weight-stationary, SRAMs and bandwidth large enough that
nothing stalls), GEMM and convolution topologies, runs SCALE-Sim once per array shape, and
compares its ``Total Cycles`` per layer with ``npuweave.cost.systolic``. Convolutions go through
SCALE-Sim's conv front end (unpadded, so the input is given pre-padded) to check that the
lowering ``m = OH*OW, k = C*KH*KW, n = Cout`` is the one SCALE-Sim uses.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

from npuweave.cost.systolic import ws_gemm_cycles

ARRAYS = [(4, 4), (8, 4), (4, 8), (16, 16), (32, 8), (32, 32)]
# GEMM topology rows: (name, M, N, K)
GEMMS = [("g_small", 1, 3, 2), ("g_fold", 10, 6, 9), ("g_ragged", 49, 29, 61),
         ("fc_like", 1, 100, 300), ("batch16_fc", 16, 40, 200), ("tall", 300, 20, 40)]
# conv rows: (name, H_padded, W_padded, KH, KW, C, Cout, stride)
CONVS = [("conv3x3", 16, 16, 3, 3, 8, 12, 1), ("conv1x1_s2", 15, 15, 1, 1, 20, 9, 2),
         ("conv5x5", 12, 12, 5, 5, 3, 16, 1)]

CONFIG = """[general]
run_name = xcheck_{r}x{c}_{mode}

[architecture_presets]
ArrayHeight: {r}
ArrayWidth: {c}
IfmapSramSzkB: 65536
FilterSramSzkB: 65536
OfmapSramSzkB: 65536
IfmapOffset: 0
FilterOffset: 10000000
OfmapOffset: 20000000
Bandwidth: 10000
Dataflow: ws
MemoryBanks: 1
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport: false
SparseRep: ellpack_block
OptimizedMapping: false
BlockSize: 8
RandomNumberGeneratorSeed: 40

[run_presets]
InterfaceBandwidth: USER
UseRamulatorTrace: False
"""


def conv_gemm(h: int, w: int, kh: int, kw: int, c: int, cout: int, s: int) -> tuple[int, ...]:
    """(m, k, n) of an unpadded conv as npuweave lowers it."""
    oh, ow = (h - kh) // s + 1, (w - kw) // s + 1
    return oh * ow, c * kh * kw, cout


def write_inputs(tmp: Path) -> None:
    rows = ["Layer, M, N, K,"] + [f"{n}, {m}, {nn}, {k}," for n, m, nn, k in GEMMS]
    (tmp / "gemm.csv").write_text("\n".join(rows) + "\n")
    rows = ["Layer, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
            "Num Filter, Strides,"]
    rows += [", ".join(map(str, row)) + "," for row in CONVS]
    (tmp / "conv.csv").write_text("\n".join(rows) + "\n")
    (tmp / "layout.csv").write_text("Layer name, x,\n")


def run_scalesim(python: str, tmp: Path, r: int, c: int, mode: str) -> list[int]:
    cfg = tmp / f"cfg_{r}x{c}_{mode}.cfg"
    cfg.write_text(CONFIG.format(r=r, c=c, mode=mode))
    out = tmp / "out"
    subprocess.run([python, "-m", "scalesim.scale", "-c", str(cfg), "-t", str(tmp / f"{mode}.csv"),
                    "-l", str(tmp / "layout.csv"), "-i", mode, "-p", str(out), "-s", "N"],
                   check=True, capture_output=True, cwd=tmp)
    report = out / f"xcheck_{r}x{c}_{mode}" / "COMPUTE_REPORT.csv"
    with report.open() as f:
        rows = list(csv.reader(f))[1:]
    stalls = [int(row[3]) for row in rows]
    assert not any(stalls), f"SCALE-Sim stalled ({stalls}); enlarge SRAM/bandwidth"
    return [int(row[2]) for row in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scalesim-python", default="/tmp/scalesim-venv/bin/python")
    args = parser.parse_args()
    shapes = [(n, m, k, nn) for n, m, nn, k in GEMMS]
    shapes += [(row[0], *conv_gemm(*row[1:])) for row in CONVS]
    mismatches = 0
    print(f"{'array':>6} {'layer':<12} {'m':>5} {'k':>5} {'n':>5} {'scalesim':>9} {'npuweave':>9}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        write_inputs(tmp)
        for r, c in ARRAYS:
            got = (run_scalesim(args.scalesim_python, tmp, r, c, "gemm")
                   + run_scalesim(args.scalesim_python, tmp, r, c, "conv"))
            for (name, m, k, n), ref in zip(shapes, got, strict=True):
                ours = ws_gemm_cycles(m, k, n, r, c)
                mismatches += ours != ref
                flag = "" if ours == ref else "  MISMATCH"
                print(f"{r:>3}x{c:<2} {name:<12} {m:>5} {k:>5} {n:>5} {ref:>9} {ours:>9}{flag}")
    total = len(ARRAYS) * len(shapes)
    print(f"\n{total - mismatches}/{total} layer runs equal")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
