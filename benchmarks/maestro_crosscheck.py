"""Cross-check the ``maestro`` cost model against MAESTRO itself (not a test; builds MAESTRO).

MAESTRO is not a dependency of npuweave. This script compiles it from a source checkout in a
scratch directory and runs it on every distinct layer of the zoo::

    apt-get install g++ libboost-program-options-dev libboost-system-dev
    git clone https://github.com/maestro-project/maestro /tmp/maestro-src   # or any checkout
    python benchmarks/maestro_crosscheck.py --maestro-src /tmp/maestro-src
    python benchmarks/maestro_crosscheck.py --maestro-src /tmp/maestro-src --noc-bw 0,1,4,16,64,256

The build is one ``g++`` line (no scons). MAESTRO's CSV writer links Boost.Filesystem; when only
the runtime library is installed (no ``-dev`` package) the script links that ``.so`` directly.

For each zoo model, batch (1 and 16) and preset (``memory-centric``, ``compute-centric``) the
script turns every layer into MAESTRO run(s) with ``npuweave.cost.maestro.maestro_dims``, writes
a one-layer mapping file with the ``kcp_ws`` dataflow (cluster size = the array's rows; the
MobileNetV2 ``DSCONV`` mapping for depthwise layers), a hardware file with that many PEs, the
NoC bandwidth of ``--noc-bw`` (elements per cycle, one run per value; 0: unconstrained, written
as a bandwidth above any step's traffic) and an unconstrained off-chip bandwidth, and compares
MAESTRO's "Runtime" with ``kcp_ws_cycles``. Distinct dimension sets are run once per bandwidth.
Exit status 1 on any difference.
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from npuweave.cost.maestro import MaestroDims, kcp_ws_cycles, maestro_dims
from npuweave.hardware import preset
from npuweave.workload import load_layers, zoo_names

PRESETS = ("memory-centric", "compute-centric")
BATCHES = (1, 16)
KCP_WS = """SpatialMap(1,1) K;
TemporalMap({p},{p}) C;
TemporalMap(Sz(R),Sz(R)) R;
TemporalMap(Sz(S),Sz(S)) S;
TemporalMap(Sz(R),1) Y;
TemporalMap(Sz(S),1) X;
Cluster({p}, P);
SpatialMap(1,1) C;
TemporalMap(Sz(R),1) Y;
TemporalMap(Sz(S),1) X;
TemporalMap(Sz(R),Sz(R)) R;
TemporalMap(Sz(S),Sz(S)) S;"""
DSCONV = """SpatialMap(1,1) C;
TemporalMap(Sz(R),1) Y;
TemporalMap(Sz(S),1) X;
TemporalMap(Sz(R),Sz(R)) R;
TemporalMap(Sz(S),Sz(S)) S;"""
BIG = 1_000_000_000  # "unconstrained": larger than any per-step traffic of the zoo


def build(src: Path, work: Path) -> Path:
    """Compile MAESTRO from ``src`` into ``work/maestro`` with one g++ call."""
    inc = ["", "/cost-model/include"] + [f"/cost-model/include/{d}" for d in (
        "base", "tools", "user-api", "dataflow-analysis", "dataflow-specification-language",
        "design-space-exploration", "cost-analysis", "abstract-hardware-model")]
    fs = sorted(glob.glob("/usr/lib/*/libboost_filesystem.so*") +
                glob.glob("/usr/lib/libboost_filesystem.so*"))
    link = ["-lboost_filesystem"] if any(f.endswith(".so") for f in fs) else fs[-1:]
    exe = work / "maestro"
    cmd = (["g++", "-O2", "-std=c++17"] + [f"-I{src}{d}" for d in inc] +
           [str(src / "maestro-top.cpp"), str(src / "cost-model/src/BASE_base-objects.cpp"),
            "-o", str(exe), "-lboost_program_options", "-lboost_system"] + link)
    subprocess.run(cmd, check=True)
    return exe


def mapping(d: MaestroDims, cluster: int) -> str:
    kind = "DSCONV" if d.depthwise else "CONV"
    flow = DSCONV if d.depthwise else KCP_WS.format(p=cluster)
    dims = f"N: {d.n}, K: {d.k}, C: {d.c}, R: {d.r}, S: {d.s}, Y: {d.y}, X: {d.x}"
    return (f"Network x {{\nLayer L {{\nType: {kind}\nStride {{ X: {d.stride[1]}, Y: "
            f"{d.stride[0]} }}\nDimensions {{ {dims} }}\nDataflow {{\n{flow}\n}}\n}}\n}}\n")


def run_maestro(exe: Path, work: Path, d: MaestroDims, cluster: int, pes: int,
                noc_bw: int = 0) -> int:
    (work / "m.m").write_text(mapping(d, cluster))
    (work / "hw.m").write_text(f"num_pes: {pes}\nl1_size_cstr: {BIG}\nl2_size_cstr: {BIG}\n"
                               f"noc_bw_cstr: {noc_bw or BIG}\noffchip_bw_cstr: {BIG}\n")
    out = subprocess.run([str(exe), f"--HW_file={work / 'hw.m'}", f"--Mapping_file={work / 'm.m'}",
                          "--print_res=true", "--print_res_csv_file=false",
                          "--print_log_file=false"], capture_output=True, text=True,
                         cwd=work).stdout
    found = re.search(r"Runtime: (\d+) cycles", out)
    return int(found.group(1)) if found else -1


@dataclass(frozen=True, slots=True)
class Case:
    """One distinct MAESTRO run and the first zoo layer that needs it."""

    model: str
    layer: str
    kind: str
    preset: str
    batch: int
    dims: MaestroDims
    cluster: int
    pes: int


def collect(models: list[str]) -> dict[tuple[str, int, str], Case]:
    """Distinct (preset, batch, dims) -> the first zoo layer that needs it."""
    cases: dict[tuple[str, int, str], Case] = {}
    for name in models:
        for layer in load_layers(name):
            for p in PRESETS:
                npu = preset(p)
                pes = npu.pe_rows * npu.pe_cols * npu.arrays * npu.cores
                for b in BATCHES:
                    d = maestro_dims(layer, b)
                    if d is None:
                        continue
                    key = (p, b, repr(d))
                    cases.setdefault(key, Case(name, layer.name, str(layer.kind), p, b, d,
                                               npu.pe_rows, pes))
    return cases


def report(rows: list[dict[str, object]]) -> None:
    """Equal / total per NoC bandwidth and layer kind, then every difference."""
    counts: dict[tuple[object, str], list[int]] = {}
    for r in rows:
        kind = f"{r['kind']}{' dw' if 'depthwise=True' in str(r['dims']) else ''}"
        counts.setdefault((r["noc_bw"], kind), [0, 0])[int(r["npuweave"] == r["maestro"])] += 1
    print(f"{'noc_bw':>8}  {'layer kind':<14}{'runs':>6}{'equal':>7}")
    for (bw, kind), (diff, same) in sorted(counts.items(), key=lambda kv: (int(str(kv[0][0])),
                                                                          kv[0][1])):
        print(f"{bw or 'unconstr':>8}  {kind:<14}{diff + same:>6}{same:>7}")
    for r in rows:
        if r["npuweave"] != r["maestro"]:
            print(f"DIFF noc_bw={r['noc_bw']} {r['model']}/{r['layer']} {r['preset']} "
                  f"b{r['batch']} {r['dims']}: npuweave {r['npuweave']} maestro {r['maestro']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--maestro-src", type=Path, help="a MAESTRO source checkout to build")
    ap.add_argument("--maestro-bin", type=Path, help="an already built maestro executable")
    ap.add_argument("--models", default=",".join(zoo_names()))
    ap.add_argument("--noc-bw", default="0",
                    help="NoC bandwidths in elements/cycle, comma-separated (0: unconstrained)")
    ap.add_argument("--json", type=Path, help="write every compared case here")
    args = ap.parse_args()
    bandwidths = [int(b) for b in args.noc_bw.split(",")]
    with tempfile.TemporaryDirectory(prefix="maestro-xcheck-") as tmp:
        work = Path(tmp)
        exe = args.maestro_bin or build(args.maestro_src, work)
        cases = collect(args.models.split(","))
        rows: list[dict[str, object]] = []
        bad = 0
        for bw in bandwidths:
            for c in cases.values():
                ours = kcp_ws_cycles(c.dims, c.cluster, c.pes, bw)
                theirs = run_maestro(exe, work, c.dims, c.cluster, c.pes, bw)
                bad += ours != theirs
                rows.append({**asdict(c), "dims": repr(c.dims), "noc_bw": bw, "npuweave": ours,
                             "maestro": theirs})
    report(rows)
    print(f"{len(rows)} distinct MAESTRO runs, {len(rows) - bad} equal, {bad} different")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
