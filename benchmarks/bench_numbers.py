"""Quantization throughput: 10 M float32 values per family and rounding mode, one core.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_numbers.py [--n 10000000] [--repeats 5]``
Prints the median of the repeats in M values/s, with a plain ``np.rint`` pass and
``astype(float16)`` measured in the same run as references. Target (issue 4): >= 100 M values/s
for FLOAT and FIXED nearest-even.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _timing import median_seconds
from rich.console import Console
from rich.table import Table

from npuweave.numbers import EXP, FIXED, FLOAT, quantize


def _median_warm(fn, repeats: int) -> float:
    return median_seconds(fn, repeats, warmup=True)  # page in the output buffers first


CASES = [
    ("FLOAT 16 (e5m10)", FLOAT(16), "nearest-even", "log"),
    ("FLOAT 8 (e4m3)", FLOAT(8), "nearest-even", "log"),
    ("FLOAT 16 ieee, overflow->inf", FLOAT(16, specials="ieee", saturate=False),
     "nearest-even", "log"),
    ("FIXED 8 bias 2", FIXED(8, 2), "nearest-even", "log"),
    ("FIXED 16 bias 0", FIXED(16, 0), "nearest-even", "log"),
    ("EXP 5 (log domain)", EXP(5), "nearest-even", "log"),
    ("EXP 5 (linear domain)", EXP(5), "nearest-even", "linear"),
    ("FLOAT 8 (e4m3)", FLOAT(8), "nearest-away", "log"),
    ("FIXED 8 bias 2", FIXED(8, 2), "nearest-away", "log"),
    ("FLOAT 8 (e4m3)", FLOAT(8), "stochastic", "log"),
    ("FIXED 8 bias 2", FIXED(8, 2), "stochastic", "log"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    x = np.random.default_rng(0).standard_normal(args.n).astype(np.float32)
    rng = np.random.default_rng(1)
    ref_rint = _median_warm(lambda: np.rint(x), args.repeats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_f16 = _median_warm(lambda: x.astype(np.float16), args.repeats)
    table = Table(title=f"quantize() throughput, {args.n / 1e6:g} M float32 values, "
                        f"median of {args.repeats}")
    for col in ("format", "rounding", "ms", "M values/s", "x np.rint"):
        table.add_column(col, justify="left" if col in ("format", "rounding") else "right")
    table.add_row("reference: np.rint", "-", f"{ref_rint * 1e3:.1f}",
                  f"{args.n / ref_rint / 1e6:.0f}", "1.00")
    table.add_row("reference: astype(float16)", "-", f"{ref_f16 * 1e3:.1f}",
                  f"{args.n / ref_f16 / 1e6:.0f}", f"{ref_f16 / ref_rint:.2f}")
    for name, fmt, rounding, domain in CASES:
        t = _median_warm(lambda f=fmt, r=rounding, d=domain: quantize(
            x, f, r, rng=rng, exp_domain=d), args.repeats)
        table.add_row(name, rounding, f"{t * 1e3:.1f}", f"{args.n / t / 1e6:.0f}",
                      f"{t / ref_rint:.2f}")
    Console(width=110).print(table)


if __name__ == "__main__":
    main()
