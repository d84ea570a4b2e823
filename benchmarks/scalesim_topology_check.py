"""Run SCALE-Sim v3 itself on a topology and config written by npuweave and compare cycles.

Not a test (SCALE-Sim is not a dependency); install it on the side like
``benchmarks/scalesim_crosscheck.py`` says, then::

    python benchmarks/scalesim_topology_check.py --scalesim-python /tmp/scalesim-venv/bin/python

It builds a small model that has every kind of row the SCALE-Sim writer emits (a padded conv, a
strided depthwise conv, a 1x1 conv, an FC, a batched attention matmul as a ``DP`` row, a
multi-row GEMM), writes it with ``write_topology`` (plus two hand-written rows whose stride
leaves a ragged last window), lets SCALE-Sim parse and run it
(weight stationary, nothing stalls), and compares each layer's "Total Cycles" (summed over the
channel layers SCALE-Sim makes of a ``DP`` row) with ``compute_cycles`` of
``profile_model(topology.csv, config.cfg)``, i.e. npuweave reading the same two files.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scalesim_crosscheck import CONFIG  # noqa: E402  (the same non-stalling configuration)

from npuweave.cost import profile_model  # noqa: E402
from npuweave.hardware.scalesim import load_scalesim_cfg  # noqa: E402
from npuweave.workload import lower  # noqa: E402
from npuweave.workload.scalesim import TopologyRow, topology_rows, topology_text  # noqa: E402
from npuweave.workload.zoo.builder import GraphBuilder  # noqa: E402


def mini_graph():
    b = GraphBuilder("mini")
    x = b.input("x", (1, 4, 12, 12))
    h = b.relu(b.conv(x, 6, 3, stride=1, name="c1"))
    h = b.conv(h, 6, 3, stride=2, groups=6, name="dw")
    h = b.conv(h, 8, 1, name="pw")
    f = b.gemm(b.flatten(b.gap(h)), 7, name="fc")
    att = b.matmul(b.input("q", (1, 3, 4, 6)), b.input("k", (1, 3, 6, 5)))
    proj = b.linear(b.input("s", (1, 5, 20)), 9, bias=False, name="proj")
    return b.finish([f, att, proj])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scalesim-python", default="/tmp/scalesim-venv/bin/python")
    parser.add_argument("--array", type=int, nargs=2, default=(4, 4), metavar=("R", "C"))
    args = parser.parse_args()
    r, c = args.array
    graph = mini_graph()
    rows, _ = topology_rows(lower(graph), graph)
    # rows as users write them, where the stride leaves a ragged last window (SCALE-Sim counts it)
    rows += [TopologyRow("ragged_DP", 14, 14, 3, 3, 6, 1, 2), TopologyRow("ragged", 16, 15, 3, 2, 4, 5, 2)]
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "topo.csv").write_text(topology_text(rows))
        (tmp / "layout.csv").write_text("")
        cfg = tmp / "x.cfg"
        cfg.write_text(CONFIG.format(r=r, c=c, mode="conv"))
        subprocess.run([args.scalesim_python, "-m", "scalesim.scale", "-c", str(cfg), "-t",
                        str(tmp / "topo.csv"), "-l", str(tmp / "layout.csv"), "-i", "conv",
                        "-p", str(tmp / "out"), "-s", "N"], check=True, capture_output=True,
                       cwd=tmp)
        report = tmp / "out" / f"xcheck_{r}x{c}_conv" / "COMPUTE_REPORT.csv"
        with report.open() as fh:
            totals = [int(row[2]) for row in list(csv.reader(fh))[1:]]
        prof = profile_model(str(tmp / "topo.csv"), load_scalesim_cfg(cfg))
    ours = [round(cost.compute_s * prof.npu.clock_hz) for cost in prof.costs]
    print(f"{'row':<48} {'scalesim':>9} {'npuweave':>9}")
    i, bad = 0, 0
    for row, mine in zip(rows, ours, strict=True):
        n = row.channels if row.depthwise else 1
        theirs = sum(totals[i:i + n])
        i += n
        bad += theirs != mine
        print(f"{', '.join(row.cells()):<48} {theirs:>9} {mine:>9}")
    print(f"{len(rows) - bad}/{len(rows)} rows equal on a {r}x{c} array")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
