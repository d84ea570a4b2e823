"""``npuweave numbers``: libnumber from the command line (quantize, tune, demo, info)."""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
from pathlib import Path

import click
import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from npuweave.cli._console import console
from npuweave.errors import ConfigError
from npuweave.fileio import atomic_open


def _fmt(spec: str):
    from npuweave.numbers import parse_format

    return parse_format(spec)


@click.group(name="numbers")
def numbers() -> None:
    """libnumber: number formats, quantization and the per-layer auto-tuner.

    \b
    Example:
      npuweave numbers info FIXED 8 2
    """


@numbers.command()
@click.argument("spec", nargs=-1, required=True)
def info(spec: tuple[str, ...]) -> None:
    """Show a format's 4-tuple and range.

    \b
    Examples:
      npuweave numbers info FIXED 8 2
      npuweave numbers info FLOAT 16
    """
    fmt = _fmt(" ".join(spec))
    t = Table(title=fmt.describe(), show_header=False)
    for key, value in (
        ("<n_s, n_e, n_f, B>", str(fmt.canonical)),
        ("bits", fmt.bits),
        ("largest value", fmt.max_value),
        ("most negative value", fmt.min_value),
        ("smallest positive", fmt.min_positive),
        ("dynamic range (binades)", f"{fmt.dynamic_range:.2f}"),
        ("specials / saturate", f"{fmt.specials.value} / {fmt.saturate}"),
    ):
        t.add_row(key, str(value))
    console().print(t)


@numbers.command()
@click.argument("source", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "-f", "spec", required=True, help='Format, e.g. "FIXED 8 2".')
@click.option("--rounding", type=click.Choice(["nearest-even", "nearest-away", "stochastic"]),
              default="nearest-even", show_default=True)
@click.option("--exp-domain", type=click.Choice(["log", "linear"]), default="log",
              show_default=True, help="Where EXP rounds.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="For stochastic rounding (>= 0).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the quantized array here (.npy).")
def quantize(source: Path, spec: str, rounding: str, exp_domain: str, seed: int,
             out: Path | None) -> None:
    """Quantize a .npy array through a format and print the error statistics.

    \b
    Example:
      python -c "import numpy; numpy.save('w.npy', numpy.random.randn(1000))"
      npuweave numbers quantize w.npy -f "EXP 5" -o w_q.npy
    """
    from npuweave.numbers import quantization_error
    from npuweave.numbers import quantize as q

    try:
        fmt = _fmt(spec)
    except ConfigError as err:
        raise ConfigError(f"--format {spec!r}: {err}") from None
    x = _load_npy(source)
    y = q(x, fmt, rounding, seed=seed, exp_domain=exp_domain)
    stats = quantization_error(x, y, fmt)
    t = Table(title=f"{source.name} -> {fmt.describe()} ({rounding})")
    t.add_column("statistic")
    t.add_column("value", justify="right")
    for key, value in stats.items():
        t.add_row(key, f"{value:.6g}" if math.isfinite(value) else str(value))
    console().print(t)
    if out is not None:
        with atomic_open(out, "wb") as fh:
            np.save(fh, y)
        console().print(f"wrote {out}")


@numbers.command()
@click.option("--network", "-n", "network_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path), help="Network descriptor.")
@click.option("--platform", "-p", "platform_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Platform descriptor (.yaml; a .py file is EXECUTED).")
@click.option("--evaluate", "evaluate_ref", default=None,
              help="module:function evaluate(config, subset) instead of the shell commands.")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("opt_conf.txt"), show_default=True, help="Best configuration file.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("tune_log.csv"), show_default=True, help="CSV of every configuration.")
@click.option("--max-evaluations", type=click.IntRange(min=2), default=5000,
              show_default=True)
@click.option("--baseline", type=click.Choice(["libnumber", "ristretto", "stripes"]),
              default="libnumber", show_default=True, help="Search algorithm.")
@click.option("--eval-timeout", "eval_timeout", type=click.FloatRange(min=0, min_open=True,
              max=86400), default=None,
              help="Seconds one evaluation command may run (default: the descriptor's "
                   "eval_timeout_s, 600).")
def tune(network_path: Path, platform_path: Path, evaluate_ref: str | None, out: Path,
         log_path: Path, max_evaluations: int, baseline: str,
         eval_timeout: float | None) -> None:
    """Auto-tune per-layer formats; write the best configuration file.

    The network descriptor names the layers and the evaluation command (it must print
    "Accuracy: <number>", higher is better); the platform descriptor lists the formats.
    Descriptors are YAML. A .py descriptor (the thesis's form) is EXECUTED as Python code
    with your permissions, as is an --evaluate module: use only files you trust.

    \b
    Example (complete descriptors and evaluation script in docs/examples/numbers/):
      npuweave numbers tune -n net.yaml -p fpga.yaml -o opt_conf.txt --log tune_log.csv
    """
    from npuweave.numbers import write_config
    from npuweave.numbers.baselines import ristretto, stripes
    from npuweave.numbers.descriptors import load_network, load_platform
    from npuweave.numbers.tuner import tune as run_tune

    net = load_network(network_path)
    if eval_timeout is not None:
        net = dataclasses.replace(net, eval_timeout_s=eval_timeout)
    platform = load_platform(platform_path)
    evaluate = _import_callable(evaluate_ref) if evaluate_ref else None
    if baseline != "libnumber" and evaluate is None:
        from npuweave.numbers.evaluation import ShellEvaluator

        evaluate = ShellEvaluator.from_network(net)
    with _progress() as (bar, task):
        def show(row: dict) -> None:
            bar.update(task, advance=1, description=f"{row['phase']:<11} acc {row['accuracy']:.4f}")

        if baseline == "ristretto":
            assert evaluate is not None  # set above for every baseline but libnumber
            res = ristretto(net, evaluate, log_path=log_path, progress=show)
        elif baseline == "stripes":
            assert evaluate is not None
            res = stripes(net, evaluate, log_path=log_path, progress=show)
        else:
            res = run_tune(net, platform, evaluate, log_path=log_path, progress=show,
                           max_evaluations=max_evaluations)
    header = (f"{baseline} on {net.source}: accuracy {res.accuracy:.6g} "
              f"(baseline {res.baseline_accuracy:.6g}, threshold {res.threshold:.6g}), "
              f"objective {res.objective:g} ({res.reduction:.2f}x smaller), "
              f"{res.iterations} configurations tried")
    write_config(res.config, out, header=header)
    console().print(header)
    if res.stopped_early:
        console().print(f"[yellow]stopped after {max_evaluations} evaluations[/yellow]")
    console().print(f"wrote {out} and {log_path}")


@numbers.command()
@click.option("--margin", "margins", type=float, multiple=True, default=(0.07, 0.01),
              show_default=True, help="Relative accuracy margin (repeatable).")
@click.option("--network", type=click.Choice(["mlp", "cnn", "all"]), default="mlp",
              show_default=True, help="Which digits network to tune.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write each run's CSV log and best configuration here.")
def demo(margins: tuple[float, ...], network: str, seed: int, out_dir: Path | None) -> None:
    """Tune small networks on scikit-learn's digits data (libnumber vs Ristretto).

    Takes about a minute per network on one core. Needs scikit-learn:
    pip install 'npuweave[digits]'.

    \b
    Example:
      npuweave numbers demo --margin 0.07 --network mlp
    """
    from npuweave.numbers import write_config
    from npuweave.numbers.demo import NETWORKS, require_sklearn, run_demo

    for m in margins:  # before scikit-learn's import, which alone takes seconds
        if not 0 <= m < 1:
            raise ConfigError(f"--margin {m} must lie in [0, 1) (a relative accuracy loss, "
                              "e.g. --margin 0.07 for 7%)")
    require_sklearn()
    for name in NETWORKS if network == "all" else [network]:
        model = NETWORKS[name](seed)
        with _progress() as (bar, task):
            rows = run_demo(tuple(margins), seed, out_dir, network=name, model=model,
                            progress=lambda row: bar.update(task, advance=1))
        t = Table(title=f"{model.title}, FPGA formats, WGT-ONLY")
        for col in ("margin", "method", "act / weights", "F32 params /", "iters", "acc", "base"):
            t.add_column(col, no_wrap=True,
                         justify="left" if col in ("method", "act / weights") else "right")
        for r in rows:
            t.add_row(f"{r.margin:g}", r.method, r.formats, f"{r.param_reduction:.2f}x",
                      str(r.result.iterations), f"{r.result.accuracy:.4f}",
                      f"{r.result.baseline_accuracy:.4f}")
            if out_dir is not None:
                write_config(r.result.config, Path(out_dir) / f"{r.stem}.txt")
        console().print(t)


def _load_npy(source: Path) -> np.ndarray:
    """A numeric array from a .npy file; anything else is a one-line ConfigError."""
    if os.path.exists(source) and not os.path.isfile(source):
        raise ConfigError(f"{source}: not a regular file (a pipe, device or directory); give "
                          "a .npy file")
    try:
        with open(source, "rb") as fh:
            # np.load falls back to unpickling when the magic is missing, whose message
            # ("pickled data") would mislead; check the header ourselves first
            if fh.read(6) != b"\x93NUMPY":
                raise ConfigError(f"{source}: not a .npy file (no NumPy header); save the "
                                  "array with numpy.save")
            fh.seek(0)
            _check_npy_header(source, fh)
            fh.seek(0)
            x = np.load(fh, allow_pickle=False)
    except FileNotFoundError:
        raise ConfigError(f"{source}: no such file; check the path") from None
    except (OSError, ValueError, EOFError) as err:
        raise ConfigError(f"cannot read {str(source)!r} as a .npy array: {err}") from None
    if not (np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)):
        raise ConfigError(f"{source}: dtype {x.dtype} is not a real number type; "
                          "quantize takes integer or float arrays")
    return x


MAX_NPY_ELEMENTS = 1 << 28  # 256 Mi values: quantize works on in-memory copies of the array


def _check_npy_header(source: Path, fh) -> None:
    """Refuse a header that claims more values than the limit or than the file holds."""
    try:
        version = np.lib.format.read_magic(fh)
        reader = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                  else np.lib.format.read_array_header_2_0)
        shape, _fortran, dtype = reader(fh, max_header_size=10000)
    except Exception as err:  # numpy raises ValueError, TokenError, SyntaxError...
        raise ConfigError(f"{source}: the .npy header is malformed ({type(err).__name__}); "
                          "save the array again with numpy.save") from None
    count = math.prod(shape)
    if count > MAX_NPY_ELEMENTS:
        raise ConfigError(f"{source}: the header claims {count} values, over the limit "
                          f"{MAX_NPY_ELEMENTS} (npuweave.cli.numbers.MAX_NPY_ELEMENTS); "
                          "quantize a smaller array")
    if dtype.hasobject:
        raise ConfigError(f"{source}: Object arrays (dtype object) cannot be quantized; save "
                          "an integer or float array with numpy.save")
    need = count * dtype.itemsize
    have = os.path.getsize(source) - fh.tell()
    if need > have:
        raise ConfigError(f"{source}: the header claims {count} values of {dtype} "
                          f"({need} bytes) but the file holds {have}; the file is truncated "
                          "or not a numeric .npy array: save it again with numpy.save")


def _import_callable(ref: str):
    module, _, attr = ref.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr) if attr else None
    except (ImportError, AttributeError) as err:
        raise ConfigError(f"--evaluate {ref!r} cannot be imported: {err}") from None
    if not callable(fn):
        raise ConfigError(f"--evaluate {ref!r} must name a callable as module:function, "
                          "e.g. --evaluate mypkg.evalmod:evaluate")
    return fn


class _progress:
    """A rich progress line counting evaluated configurations (total unknown); where stderr
    is not a terminal (a log, CI, a notebook's pipe) a plain line every few seconds."""

    def __enter__(self):
        err = Console(stderr=True)
        if not err.is_terminal:
            self._p = None
            return LineProgress(), "tuning"
        self._p = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                           TextColumn("{task.completed} configs"), TimeElapsedColumn(),
                           console=err, transient=True)
        self._p.__enter__()
        return self._p, self._p.add_task("tuning", total=None)

    def __exit__(self, *exc):
        return self._p.__exit__(*exc) if self._p is not None else None


class LineProgress:
    """``update(task, advance=, description=)`` as rich's, printing ``N configs, <desc>,
    T s`` on stderr at most every ``every_s`` seconds (and for the first configuration)."""

    def __init__(self, every_s: float = 5.0, clock=None, echo=None) -> None:
        import time

        self.clock = clock or time.monotonic
        self.echo = echo or (lambda line: click.echo(line, err=True))
        self.every_s, self.t0, self.count = every_s, self.clock(), 0
        self.last = -math.inf

    def update(self, _task, advance: int = 1, description: str = "") -> None:
        self.count += advance
        now = self.clock()
        if now - self.last >= self.every_s:
            self.last = now
            self.echo(f"tuning: {self.count} configs, {description.strip()}, "
                      f"{now - self.t0:.0f} s")
