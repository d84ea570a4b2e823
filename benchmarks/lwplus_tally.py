"""Tally a Layerweaver+ reproduction CSV: the counts docs/REPRODUCTION.md reports.

Per Figure V.5 point (pair, ratio) and V.7 point (case, deadlines): Layerweaver+ (approx, and
precise where present) against the baseline and against Layerweaver: above / equal / below by
load, and "surely" above (its ``qps_sure`` exceeds the other's ``qps_fail_sure``) or below (its
``qps_fail_sure`` is under the other's ``qps_sure``); the median and range of the ratio to the
baseline; approx against precise. Run from the repository root::

    python benchmarks/lwplus_tally.py docs/results/lwplus/lwplus.csv [--old OLD.csv]
    python benchmarks/lwplus_tally.py docs/results/lwplus/lwplus.csv --markdown

With ``--old``, also how many rows' capacities moved between the two files, per scheduler.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import defaultdict
from typing import Any


def _rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _points(rows: list[dict[str, str]], fig: str) -> dict[tuple[str, ...], dict[str, dict]]:
    pts: dict[tuple[str, ...], dict[str, dict]] = defaultdict(dict)
    for r in rows:
        if r["figure"] == fig:
            pts[r["pair"], r["ratio"], r["deadlines"]][r["scheduler"]] = r
    return pts


def _cmp(a: dict[str, str], b: dict[str, str]) -> tuple[int, bool, bool]:
    """(sign of a's load vs b's, surely above, surely below)."""
    qa, qb = float(a["qps"]), float(b["qps"])
    sign = 0 if abs(qa / qb - 1) < 1e-9 else (1 if qa > qb else -1)
    above = float(a["qps_sure"]) > float(b["qps_fail_sure"])
    below = float(a["qps_fail_sure"]) < float(b["qps_sure"])
    return sign, above, below


def tally(rows: list[dict[str, str]], fig: str, who: str, ref: str) -> str:
    pts = [p for p in _points(rows, fig).values() if who in p and ref in p]
    if not pts:
        return f"{fig} {who} vs {ref}: no points"
    c = [_cmp(p[who], p[ref]) for p in pts]
    ratios = [float(p[who]["qps"]) / float(p[ref]["qps"]) for p in pts]
    below = sorted(f"{p[who]['pair']} {p[who]['ratio']} {p[who]['deadlines']} "
                   f"{float(p[who]['qps']) / float(p[ref]['qps']):.2f}"
                   for p, x in zip(pts, c) if x[0] < 0)
    return (f"{fig} {who} vs {ref}: {len(pts)} points; above {sum(x[0] > 0 for x in c)}, "
            f"equal {sum(x[0] == 0 for x in c)}, below {sum(x[0] < 0 for x in c)}; surely "
            f"above {sum(x[1] for x in c)}, surely below {sum(x[2] for x in c)}; ratio median "
            f"{statistics.median(ratios):.2f}, {min(ratios):.2f} to {max(ratios):.2f}\n"
            f"  below: {'; '.join(below) or '-'}")


def moved(new: list[dict[str, str]], old: list[dict[str, str]]) -> str:
    key = ("figure", "pair", "ratio", "deadlines", "scheduler")
    was = {tuple(r[k] for k in key): r for r in old if r["figure"] in ("V.5", "V.7")}
    out = defaultdict(lambda: [0, 0, 0, 0])  # rows, down, up, same
    for r in new:
        o = was.get(tuple(r[k] for k in key))
        if o is None:
            continue
        q, qo = float(r["qps"]), float(o["qps"])
        s = out[r["scheduler"]]
        s[0] += 1
        s[1 if q < qo * (1 - 1e-9) else 2 if q > qo * (1 + 1e-9) else 3] += 1
    return "\n".join(f"moved {k}: {v[0]} rows, down {v[1]}, up {v[2]}, same {v[3]}"
                     for k, v in sorted(out.items()))


RATIOS = ("1:64", "1:32", "1:16", "1:8", "1:4", "1:2", "1:1", "2:1", "4:1", "8:1", "16:1",
          "32:1", "64:1")
PAIRS = ("IC+BB", "IC+BL", "IC+XL", "MN+BB", "MN+BL", "MN+XL", "RN+BB", "RN+BL", "RN+XL")


def _norm_cell(p: dict[str, dict], who: str, alt: str | None) -> str:
    if who not in p or "baseline" not in p:
        return "-"
    base = float(p["baseline"]["qps"])
    x = float(p[who]["qps"]) / base
    _, up, down = _cmp(p[who], p["baseline"])
    cell = f"{x:.2f}"
    if alt and alt in p:
        y = float(p[alt]["qps"]) / base
        cell += f" ({y:.2f})" if f"{y:.2f}" != f"{x:.2f}" else ""
    return f"**{cell}**" if up else f"*{cell}*" if down else cell


def _q(v: str) -> str:
    return f"{float(v):,.0f}"


def v5_table(rows: list[dict[str, str]], who: str, alt: str | None = None) -> str:
    """Markdown: ``who``'s V.5 capacity over the baseline's (bold/italics: surely
    above/below; ``alt`` in parentheses where its two decimals differ), or with
    ``who="baseline"`` the baseline's QPS and bracket."""
    pts = _points(rows, "V.5")
    out = ["| pair | " + " | ".join(RATIOS) + " |", "|---" * (len(RATIOS) + 1) + "|"]
    for pair in PAIRS:
        cells = []
        for ratio in RATIOS:
            p = pts.get((pair, ratio, "15ms/130ms"), {})
            if who == "baseline":
                b = p.get("baseline")
                cells.append("-" if b is None else f"{_q(b['qps'])} ({_q(b['qps_sure'])}-"
                             f"{_q(b['qps_fail_sure'])})")
            else:
                cells.append(_norm_cell(p, who, alt))
        out.append(f"| {pair} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def v7_table(rows: list[dict[str, str]]) -> str:
    """Markdown: V.7 per case and deadlines, each scheduler's load over the baseline's at
    15 / 130 ms, then its QPS and bracket; Layerweaver+'s Mode 2 share."""
    pts = _points(rows, "V.7")
    out = ["| case (NLP : vision) | vision / NLP deadline | baseline | Layerweaver | "
           "Layerweaver+ approx | Layerweaver+ Mode 2 share |", "|---|---|---|---|---|---|"]
    def order(kv: tuple[tuple[str, ...], dict[str, dict]]) -> tuple[Any, ...]:
        (pair, ratio, dl), p = kv
        varied = next(iter(p.values())).get("varied") == "nlp"
        v, n = (float(x) for x in dl.replace("ms", "").split("/"))
        return pair, -float(ratio.split(":")[0]), varied, v, n

    for (pair, ratio, dl), p in sorted(pts.items(), key=order):
        ref = pts.get((pair, ratio, "15ms/130ms"), {}).get("baseline")
        cells = []
        for s in ("baseline", "layerweaver", "lwplus-approx"):
            r = p.get(s)
            if r is None or ref is None:
                cells.append("-")
                continue
            cells.append(f"{float(r['qps']) / float(ref['qps']):.2f} ({_q(r['qps'])}; "
                         f"{_q(r['qps_sure'])}-{_q(r['qps_fail_sure'])})")
        share = p.get("lwplus-approx", {}).get("urgent_share")
        cells.append("-" if share in (None, "") else f"{100 * float(share):.2f}%")
        v, n = dl.replace("ms", "").split("/")
        out.append(f"| {pair} {ratio} | {v} / {n} ms | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--old")
    ap.add_argument("--markdown", action="store_true", help="the docs' V.5 and V.7 tables")
    a = ap.parse_args()
    rows = _rows(a.csv)
    if a.markdown:
        print(v5_table(rows, "lwplus-approx", "lwplus-precise"), "", v5_table(rows, "layerweaver"),
              "", v5_table(rows, "baseline"), "", v7_table(rows), sep="\n")
        return 0
    for fig in ("V.5", "V.7"):
        for who, ref in (("lwplus-approx", "baseline"), ("lwplus-precise", "baseline"),
                         ("lwplus-approx", "layerweaver"), ("lwplus-precise", "layerweaver"),
                         ("lwplus-approx", "lwplus-precise"), ("layerweaver", "baseline")):
            print(tally(rows, fig, who, ref))
    if a.old:
        print(moved(rows, _rows(a.old)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
