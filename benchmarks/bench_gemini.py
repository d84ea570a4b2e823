"""Benchmark: Gemini IR emit + validate, validate of the largest published file, CLI costs.

Prints one markdown table of medians over repeats, each with its baseline measured in the
same run (the machine is shared and noisy: compare ratios, not absolute times):

* emit: plan + emit + validate ResNet-50 at batch 4 on 4 cores (target < 2 s); baseline:
  the layer-group compiler alone (``compile_groups``, greedy), the first pass of the plan;
* validate: load + validate of the largest published IR file (target < 0.5 s); baseline:
  ``json.load`` of the same file;
* CLI: ``npuweave ir validate`` and ``ir timeline`` as subprocesses; baseline: ``npuweave
  --help`` (interpreter and CLI start-up).

    python benchmarks/bench_gemini.py [--repeats 7] [--cli-repeats 3] [FILE ...]

FILE defaults to the published files in ``$GEMINI_IR_DIR`` and ``../shared/data/gemini-ir``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from _timing import median_seconds

from npuweave.compile import gemini
from npuweave.compile.gemini.multicore import compile_multicore, multicore_npu
from npuweave.compile.layergroup import compile_groups
from npuweave.hardware import preset
from npuweave.workload import load_layers

ROOT = Path(__file__).resolve().parents[1]
DIRS = [Path(os.environ.get("GEMINI_IR_DIR", "/nonexistent")),
        ROOT.parent / "shared" / "data" / "gemini-ir",
        ROOT.parent.parent / "shared" / "data" / "gemini-ir"]


def _files(given: list[Path]) -> list[Path]:
    if given:
        return given
    found = [p for d in DIRS if d.is_dir() for p in d.glob("*_stschedule.json")
             if p.stat().st_size > 0]
    return sorted(found, key=lambda p: p.stat().st_size)


def bench_emit(repeats: int) -> list[tuple[str, str, float, float]]:
    npu = multicore_npu(preset("gemini-like"), 4, (2, 2))
    layers = load_layers("resnet50")
    core = replace(npu, cores=1, mesh=(1, 1), lmem_bytes=npu.l2_bytes)
    base = median_seconds(lambda: compile_groups(layers, core, batch=4, method="greedy"),
                          repeats)
    ir = compile_multicore(layers, npu, batch=4, check=False)
    rows = [("resnet50 b4 c4", "compile_groups (baseline)", base, 1.0)]
    for step, fn in (("plan + emit + validate", lambda: compile_multicore(layers, npu, batch=4)),
                     ("plan + emit", lambda: compile_multicore(layers, npu, batch=4,
                                                               check=False)),
                     ("validate", lambda: gemini.validate(ir)),
                     ("replay (mesh 32 GB/s)", lambda: gemini.simulate(ir, 16e9, 1e9, 32e9, 10))):
        t = median_seconds(fn, repeats)
        rows.append(("resnet50 b4 c4", step, t, t / base))
    return rows


def bench_validate(path: Path, repeats: int) -> list[tuple[str, str, float, float]]:
    name = path.name.split(".sim_")[-1][:20]
    base = median_seconds(lambda: json.loads(path.read_bytes()), repeats)
    ir = gemini.load(path)
    rows = [(name, "json.load (baseline)", base, 1.0)]
    for step, fn in (("load", lambda: gemini.load(path)), ("validate", lambda: gemini.validate(ir)),
                     ("load + validate", lambda: gemini.validate(gemini.load(path)))):
        t = median_seconds(fn, repeats)
        rows.append((name, step, t, t / base))
    return rows


def _cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "npuweave", *args], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})


def bench_cli(path: Path, repeats: int) -> list[tuple[str, str, float, float]]:
    name = "CLI " + path.name.split(".sim_")[-1][:20]
    base = median_seconds(lambda: _cli("--help"), repeats)
    rows = [(name, "npuweave --help (baseline)", base, 1.0)]
    with tempfile.TemporaryDirectory() as tmp:
        png = str(Path(tmp) / "t.png")
        for step, args in (("ir validate", ("ir", "validate", str(path))),
                           ("ir timeline", ("ir", "timeline", str(path), "-o", png))):
            t = median_seconds(lambda a=args: _cli(*a), repeats)
            rows.append((name, step, t, t / base))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--cli-repeats", type=int, default=3)
    args = ap.parse_args()
    files = _files(args.files)
    rows = bench_emit(args.repeats)
    if files:
        rows += bench_validate(files[-1], args.repeats)
        rows += bench_cli(files[-1], args.cli_repeats)
    print("| case | step | median (ms) | x baseline |")
    print("|---|---|---:|---:|")
    for case, step, t, ratio in rows:
        print(f"| {case} | {step} | {t * 1e3:.1f} | {ratio:.2f} |")
    emit = next(t for c, s, t, _ in rows if s == "plan + emit + validate")
    print(f"\nemit + validate ResNet-50 b4 on 4 cores: {emit:.2f} s "
          f"({'meets' if emit < 2 else 'MISSES'} the 2 s target)")
    lv = [t for c, s, t, _ in rows if s == "load + validate"]
    if lv:
        print(f"load + validate of {files[-1].name}: {lv[0]:.3f} s "
              f"({'meets' if lv[0] < 0.5 else 'MISSES'} the 0.5 s target)")


if __name__ == "__main__":
    main()
