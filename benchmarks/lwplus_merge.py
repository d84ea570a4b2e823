"""Re-run some schedulers of the Layerweaver+ reproduction and merge them into its CSV.

A change to Layerweaver+ alone leaves the baseline's and Layerweaver's rows as they were (the
same code computes them), so after one only the Layerweaver+ searches need to run again. This
runs the default setup of ``npuweave reproduce layerweaver-plus`` (``maestro``, 384 tokens,
seeds 0-2 x 4,000 requests, baseline windows 0 and 2 ms) for ``--schedulers`` on Figures V.5
and V.7, and, with ``--figures`` containing 6, the whole of Figure V.6 (every scheduler: its
fixed-load runs are cheap and its plot needs their latencies). Rows of the old CSV with the
same figure, pair, ratio, deadlines and scheduler are replaced in place, ``stp_norm`` is
recomputed, and the plots are drawn from the merged rows. Run from the repository root::

    PYTHONPATH=$PWD python benchmarks/lwplus_merge.py docs/results/lwplus/lwplus.csv \\
        --schedulers lwplus-approx --figures 5,6,7 --jobs 2 --csv new.csv --plots figs
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

from npuweave.experiments import lwplus_repro as rp
from npuweave.experiments.lwplus import SCHEDULERS, ServeSetup
from npuweave.fileio import write_csv

KEY = ("figure", "pair", "ratio", "deadlines", "scheduler")


def _value(text: str) -> Any:
    if text in ("", "None"):
        return None if text == "None" else ""
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):  # as written: 16 stays 16, 0.0 stays 0.0
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("old_csv")
    ap.add_argument("--schedulers", default="lwplus-approx,lwplus-precise")
    ap.add_argument("--figures", default="5,6,7")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--plots")
    ap.add_argument("--pairs", default=None, help="Figure V.5's pairs (default: all)")
    ap.add_argument("--vision-nlp-ratios", dest="ratios", default=None)
    ap.add_argument("--requests", type=int, default=4000, help="per seed (a smoke test)")
    args = ap.parse_args()
    names = [s for s in args.schedulers.split(",") if s]
    figs = set(args.figures.split(","))
    setup = ServeSetup(baseline_windows_s=(0.0, 2e-3), seeds=(0, 1, 2), requests=args.requests)
    tasks: list[rp.Task] = []
    if "5" in figs:
        tasks += rp.fig5_tasks(rp.parse_pairs(args.pairs), rp.parse_ratios(args.ratios), names,
                               setup)
    if "6" in figs:
        tasks += rp.fig6_tasks(list(SCHEDULERS), setup)
    if "7" in figs:
        tasks += rp.fig7_tasks([n for n in names if n != "lwplus-precise"], setup)
    t0, c0 = time.perf_counter(), time.process_time()
    new = rp.run_tasks(tasks, args.jobs)
    print(f"{len(tasks)} tasks: {time.perf_counter() - t0:.0f} s wall, "
          f"{time.process_time() - c0:.0f} s CPU in this process (workers: see their rows)")
    with open(args.old_csv, newline="") as f:
        old = [{k: _value(v) for k, v in r.items()} for r in csv.DictReader(f)]
    fresh = {tuple(str(r.get(k)) for k in KEY): r for r in new}
    redo6 = "6" in figs
    merged: list[dict[str, Any]] = []
    for r in old:
        if redo6 and r["figure"] in ("V.6", "V.6-ours"):
            continue
        merged.append(fresh.pop(tuple(str(r.get(k)) for k in KEY), r))
    merged += fresh.values()  # rows the old file did not have (Figure V.6 when re-run)
    merged = rp.normalize(merged)
    write_csv(args.csv, [{k: v for k, v in r.items() if not k.startswith("latency_")}
                         for r in merged])
    if args.plots:
        from npuweave.report.lwplus_plots import plot_fig5, plot_fig6, plot_fig7

        Path(args.plots).mkdir(parents=True, exist_ok=True)
        plot_fig5(merged, Path(args.plots) / "fig5.png")
        plot_fig7(merged, Path(args.plots) / "fig7.png")
        if redo6:
            plot_fig6(merged, Path(args.plots) / "fig6.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
