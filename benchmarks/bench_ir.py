"""Benchmark: load + validate (and summarize, simulate) the published Gemini IR files.

Prints a table of medians over repeats; the baseline is ``json.load`` of the same file,
measured in the same run. Target: load + validate of ResNet-34 under 0.5 s.

    python benchmarks/bench_ir.py [--repeats 15] [FILE ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _timing import median_seconds

from npuweave.compile import gemini

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "gemini-ir"
TARGET_S = 0.5


def bench(path: Path, repeats: int) -> list[tuple[str, float]]:
    ir = gemini.load(path)
    return [
        ("json.load (baseline)", median_seconds(lambda: json.loads(path.read_bytes()), repeats)),
        ("load", median_seconds(lambda: gemini.load(path), repeats)),
        ("validate", median_seconds(lambda: gemini.validate(ir), repeats)),
        ("load + validate", median_seconds(lambda: gemini.validate(gemini.load(path)), repeats)),
        ("summarize", median_seconds(lambda: gemini.summarize(ir), repeats)),
        ("simulate 16GB/s", median_seconds(lambda: gemini.simulate(ir, 16e9), repeats)),
        ("dumps", median_seconds(lambda: gemini.dumps(ir), repeats)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    files = args.files or sorted(DATA.glob("*.json"))
    if not files:
        raise SystemExit(f"no IR files given and none in {DATA}")
    print("| file | step | median (ms) | x json.load |")
    print("|---|---|---:|---:|")
    worst = 0.0
    for path in files:
        rows = bench(path, args.repeats)
        base = rows[0][1]
        name = path.name.split(".sim_")[-1][:22]
        for step, t in rows:
            print(f"| {name} | {step} | {t * 1e3:.2f} | {t / base:.2f} |")
            if step == "load + validate":
                worst = max(worst, t)
    verdict = "meets" if worst < TARGET_S else "MISSES"
    print(f"\nworst load + validate {worst * 1e3:.1f} ms: {verdict} the {TARGET_S:g} s target "
          f"(median of {args.repeats})")


if __name__ == "__main__":
    main()
