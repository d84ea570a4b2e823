"""Cross-check the access counters of ``systolic-ws`` against SCALE-Sim v3 (not a test; needs a venv).

SCALE-Sim is not a dependency of npuweave. Install it on the side::

    python -m venv /tmp/scalesim-venv
    /tmp/scalesim-venv/bin/pip install scalesim==3.0.0 'numpy<2.4'
    python benchmarks/scalesim_energy_crosscheck.py --scalesim-python /tmp/scalesim-venv/bin/python

It writes the distinct SCALE-Sim rows of the zoo's ResNet-50 and BERT-base (``topology_rows``),
a 128x128 weight-stationary config (8 MiB per SRAM so that every operand's prefetch stream fits,
160 words per cycle of DRAM; SCALE-Sim v3 takes the ifmap and filter DRAM line from
``[layout] IfmapSRAMBankBandwidth`` / ``FilterSRAMBankBandwidth`` and the ofmap one from
``Bandwidth``, so all three are 160), runs SCALE-Sim once per row (traces off: ``save_disk_space``) and
compares the six counters of its ``DETAILED_ACCESS_REPORT.csv`` (summed over the channel layers
SCALE-Sim makes of a ``DP`` row) with ``Profile.accesses()`` of npuweave reading the same two
files. SCALE-Sim simulates every access in Python: the big early ResNet-50 layers take many
minutes each; ``--rows`` picks a subset, ``--timeout`` skips a row that runs too long.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

from npuweave.cost import profile_model
from npuweave.hardware import NPU
from npuweave.hardware.scalesim import scalesim_cfg_text
from npuweave.workload import load_graph, lower
from npuweave.workload.scalesim import TopologyRow, topology_rows, topology_text

#: The NPU the config describes: 128x128, 8 MiB per SRAM, 160 one-byte words per cycle of DRAM.
NPU_SPEC = NPU("x", 128, 128, clock_hz=1e9, dram_bw=160e9, weight_buffer=8 << 20,
               act_buffer=16 << 20, precision_bits=8)


def config_text() -> str:
    """npuweave's own SCALE-Sim writer, with the SRAM-bank bandwidth (SCALE-Sim v3's DRAM line
    for ifmap and filter) set to the DRAM words per cycle, as npuweave counts lines."""
    text = scalesim_cfg_text(NPU_SPEC)
    for operand in ("Ifmap", "Filter"):
        text = text.replace(f"{operand}SRAMBankBandwidth: 10\n", f"{operand}SRAMBankBandwidth: 160\n")
    return text


DRIVER = """import sys
from scalesim.scale_sim import scalesim
s = scalesim(save_disk_space=True, verbose=False, config=sys.argv[1], topology=sys.argv[2],
             layout=sys.argv[3], input_type_gemm=False)
s.run_scale(top_path=sys.argv[4])
"""
COUNTERS = ("ifmap_sram_reads", "filter_sram_reads", "ofmap_sram_writes", "dram_ifmap_reads",
            "dram_filter_reads", "dram_ofmap_writes")
REPORT_COLUMNS = (3, 6, 9, 12, 15, 18)  # of DETAILED_ACCESS_REPORT.csv, in COUNTERS order


def zoo_rows() -> list[TopologyRow]:
    """Distinct SCALE-Sim rows of ResNet-50 and BERT-base, in model order."""
    seen, out = set(), []
    for model in ("resnet50", "bert-base"):
        graph = load_graph(model)
        rows, _ = topology_rows(lower(graph), graph)
        for row in rows:
            if tuple(row.cells()[1:]) not in seen:
                seen.add(tuple(row.cells()[1:]))
                out.append(row)
    return out


def run_row(python: str, tmp: Path, i: int, row: TopologyRow, timeout: float) -> list[int] | None:
    topo = tmp / f"row{i}.csv"
    topo.write_text(topology_text([row]))
    out = tmp / f"out{i}"
    try:
        subprocess.run([python, str(tmp / "drive.py"), str(tmp / "x.cfg"), str(topo),
                        str(tmp / "layout.csv"), str(out)], check=True, capture_output=True,
                       cwd=tmp, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    with (out / "x" / "DETAILED_ACCESS_REPORT.csv").open() as fh:
        lines = list(csv.reader(fh))[1:]
    return [sum(int(float(line[c])) for line in lines) for c in REPORT_COLUMNS]


def ours(tmp: Path, i: int) -> list[int]:
    prof = profile_model(str(tmp / f"row{i}.csv"), str(tmp / "x.cfg"))
    total = prof.accesses()
    acc = total[0]
    for more in total[1:]:
        acc = acc + more
    return [getattr(acc, name) for name in COUNTERS]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scalesim-python", default="/tmp/scalesim-venv/bin/python")
    parser.add_argument("--rows", default=None, help="comma list of row names (default: all)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per row")
    args = parser.parse_args()
    rows = zoo_rows()
    if args.rows:
        wanted = set(args.rows.split(","))
        rows = [r for r in rows if r.name in wanted]
    equal = ran = 0
    print(f"{'row':<22} {'counter':<18} {'scalesim':>10} {'npuweave':>10}")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "x.cfg").write_text(config_text())
        (tmp / "layout.csv").write_text("Layer name, x,\n")
        (tmp / "drive.py").write_text(DRIVER)
        for i, row in enumerate(rows):
            theirs = run_row(args.scalesim_python, tmp, i, row, args.timeout)
            if theirs is None:
                print(f"{row.name:<22} skipped: SCALE-Sim ran past {args.timeout:g} s")
                continue
            mine = ours(tmp, i)
            ran += 1
            equal += mine == theirs
            for counter, t, m in zip(COUNTERS, theirs, mine, strict=True):
                flag = "" if t == m else "  MISMATCH"
                print(f"{row.name:<22} {counter:<18} {t:>10} {m:>10}{flag}")
    print(f"\n{equal}/{ran} rows equal on all six counters ({len(rows) - ran} skipped)")
    return 0 if equal == ran else 1


if __name__ == "__main__":
    sys.exit(main())
