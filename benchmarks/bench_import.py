"""Benchmark: import + lower every ONNX light model, build + lower every zoo model.

Prints a markdown table of medians over repeats. The baseline for an ONNX file is
``onnx.load`` of the same file, measured in the same run (``x load`` = import + lower time
over it); ``us/op`` (lowering time per graph op) shows that ``lower`` stays linear.

    python benchmarks/bench_import.py [--repeats 7] [--only NAME ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import onnx
from _timing import median_seconds

from npuweave.workload import zoo
from npuweave.workload.lower import lower
from npuweave.workload.onnx_import import import_onnx

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def bench_onnx(path: Path, repeats: int) -> dict:
    graph = import_onnx(path)
    load = median_seconds(lambda: onnx.load(str(path)), repeats)
    imp = median_seconds(lambda: import_onnx(path), repeats)
    low = median_seconds(lambda: lower(graph), repeats)
    total = median_seconds(lambda: lower(import_onnx(path)), repeats)
    return {"model": path.stem.removeprefix("light_"), "source": "onnx light",
            "ops": len(graph.ops), "layers": len(lower(graph)), "base": load, "make": imp,
            "lower": low, "total": total}


def bench_zoo(name: str, repeats: int) -> dict:
    graph = zoo.build(name)
    build = median_seconds(lambda: zoo.build(name), repeats)
    low = median_seconds(lambda: lower(graph), repeats)
    total = median_seconds(lambda: lower(zoo.build(name)), repeats)
    return {"model": name, "source": "zoo", "ops": len(graph.ops), "layers": len(lower(graph)),
            "base": None, "make": build, "lower": low, "total": total}


def row(r: dict) -> str:
    ratio = f"{r['total'] / r['base']:.1f}" if r["base"] else "-"
    base = f"{r['base'] * 1e3:.2f}" if r["base"] else "-"
    per_op = r["lower"] / max(r["ops"], 1) * 1e6
    return (f"| {r['model']} | {r['source']} | {r['ops']} | {r['layers']} | {base} | "
            f"{r['make'] * 1e3:.2f} | {r['lower'] * 1e3:.2f} | {r['total'] * 1e3:.2f} | "
            f"{ratio} | {per_op:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", nargs="*", default=None, help="model names to run")
    args = ap.parse_args()
    files = sorted(LIGHT.glob("light_*.onnx"))
    wanted = set(args.only) if args.only else None
    print("| model | source | ops | layers | onnx.load (ms) | import / build (ms) | lower (ms) "
          "| total (ms) | x load | lower us/op |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for path in files:
        if wanted is None or path.stem.removeprefix("light_") in wanted:
            rows.append(bench_onnx(path, args.repeats))
            print(row(rows[-1]), flush=True)
    for name in zoo.names():
        if wanted is None or name in wanted:
            rows.append(bench_zoo(name, args.repeats))
            print(row(rows[-1]), flush=True)
    total = sum(r["total"] for r in rows)
    print(f"\nall {len(rows)} models, import/build + lower: {total * 1e3:.1f} ms "
          f"(sum of medians, {args.repeats} repeats)")


if __name__ == "__main__":
    main()
