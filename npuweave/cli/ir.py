"""``npuweave ir``: inspect, validate, draw and replay Gemini scheduler IR files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from npuweave.compile import gemini
from npuweave.compile.gemini.units import parse_bandwidth, parse_frequency
from npuweave.compile.gemini.validate import check_docs

_FILE = click.argument("file", type=click.Path(dir_okay=False))
_CLOCK = click.option("--clock", default="1GHz", show_default=True,
                      help="Core clock that turns the IR's time cycles into seconds.")


if TYPE_CHECKING:
    from rich.console import Console


def _console() -> Console:
    from npuweave.cli._console import console  # rich loads only for commands that print tables

    return console()


def Table(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 - stands in for rich's Table
    from rich.table import Table as RichTable

    return RichTable(*args, **kwargs)


def _mib(n: float) -> str:
    return f"{n / 2**20:,.2f} MiB"


@click.group()
def ir() -> None:
    """Read, validate, inspect and simulate Gemini scheduler IR.

    \b
    Example:
      npuweave ir info model_ir.json
    """


@ir.command()
@_FILE
@_CLOCK
def info(file: str, clock: str) -> None:
    """Cores, workloads per type, DRAM traffic, peak L2 use and estimated time.

    \b
    Example:
      npuweave ir info model_ir.json
    """
    hz = parse_frequency(clock, "--clock")
    s = gemini.summarize(gemini.load(file))
    con = _console()
    head = Table(title=Path(file).name, show_header=False)
    head.add_row("cores", f"{len(s.cores)} on a {s.mesh[0]} x {s.mesh[1]} mesh")
    head.add_row("batch", str(s.batch))
    head.add_row("L2 buffer", f"{s.buffersize:,} B ({_mib(s.buffersize)})")
    head.add_row("workloads", str(s.workloads))
    head.add_row("peak L2 use", f"{s.peak_l2_bytes:,} B ({100 * s.peak_l2_bytes / s.buffersize:.1f}%)"
                 if s.buffersize else f"{s.peak_l2_bytes:,} B")
    head.add_row("estimated time", f"{s.time_cycles:,} cycles = {s.time_cycles / hz * 1e3:.3f} ms "
                 f"at {hz / 1e9:g} GHz (busiest core's sum of workload times)")
    con.print(head)
    cores = Table(title="per core")
    for col in ("core", "workloads", "by type", "time (cycles)", "peak L2 (B)", "at workload"):
        cores.add_column(col, justify="right")
    for c in s.cores:
        types = ", ".join(f"{t}: {n}" for t, n in c.by_type)
        cores.add_row(str(c.core), str(c.workloads), types, f"{c.time_cycles:,}",
                      f"{c.peak_l2_bytes:,}", str(c.peak_l2_workload))
    con.print(cores)
    traffic = Table(title="DRAM traffic")
    for col in ("direction", "type", "tensors", "bytes", "MiB"):
        traffic.add_column(col, justify="right")
    for t in s.traffic:
        # the IR's DRAM lists are named from DRAM's side ("out" of DRAM = a load); say the
        # direction in words and name the list, so "(out)" is not read as a core's output
        label = ("DRAM -> core (load; IR list 'out')" if t.direction == "load"
                 else "core -> DRAM (store; IR list 'in')")
        traffic.add_row(label, t.type, str(t.count), f"{t.bytes:,}", f"{t.bytes / 2**20:.2f}")
    con.print(traffic)


@ir.command()
@_FILE
@click.option("--check", "checks", multiple=True, help="Run only this check (repeatable).")
@click.option("--list", "list_checks", is_flag=True, help="List the checks and exit.")
def validate(file: str, checks: tuple[str, ...], list_checks: bool) -> None:
    """Run every consistency check; print each violation with its JSON path (exit 1 if any).

    \b
    Examples:
      npuweave ir validate model_ir.json
      npuweave ir validate --list
    """
    if list_checks:
        for name, doc in check_docs().items():
            click.echo(f"{name:18} {doc}")
        return
    violations = gemini.validate(gemini.load(file), checks or None)
    for v in violations:
        click.echo(str(v))
    if violations:
        click.echo(f"{len(violations)} violation(s) in {file}", err=True)
        sys.exit(1)
    n = len(checks) if checks else len(gemini.CHECKS)
    click.echo(f"{file}: OK ({n} checks, no violations)")


@ir.command()
@_FILE
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="PNG to write.")
@click.option("--trace", type=click.Path(dir_okay=False),
              help="Also write a Perfetto/Chrome trace JSON here.")
@click.option("--dram-bw", default="16GB/s", show_default=True,
              help="DRAM bandwidth of the replay ('inf' for instantaneous transfers).")
@_CLOCK
def timeline(file: str, output: str, trace: str | None, dram_bw: str, clock: str) -> None:
    """Per-core workload timeline and L2 occupancy over workloads.

    \b
    Example:
      npuweave ir timeline model_ir.json -o b1.png --trace b1.json
    """
    from npuweave.fileio import FIGURE_SUFFIXES, check_output_path

    check_output_path(output, "--output", FIGURE_SUFFIXES)
    check_output_path(trace, "--trace")
    model = gemini.load(file)
    result = gemini.simulate(model, _bandwidth(dram_bw), parse_frequency(clock, "--clock"))
    gemini.plot_timeline(model, result, output, title=Path(file).name)
    click.echo(f"wrote {output}")
    if trace:
        gemini.write_trace(model, result, trace)
        click.echo(f"wrote {trace}")


@ir.command()
@_FILE
@click.option("--dram-bw", default="16GB/s", show_default=True,
              help="DRAM bandwidth, e.g. 16GB/s, 900MB/s, 16GiB/s ('inf' for instantaneous).")
@_CLOCK
@click.option("--noc-bw", default=None,
              help="Core-to-core transfer bandwidth, e.g. 32GB/s (default: transfers are free).")
@click.option("--hop-cycles", type=click.IntRange(0, 10**9), default=0, show_default=True,
              help="Cycles per mesh hop of a core-to-core transfer.")
def simulate(file: str, dram_bw: str, clock: str, noc_bw: str | None, hop_cycles: int) -> None:
    """Replay with DRAM transfers and compute overlapped; compare with the sum of time fields.

    \b
    Example:
      npuweave ir simulate rn34_b4_c4.json --dram-bw 16GB/s --noc-bw 32GB/s
    """
    bw = _bandwidth(dram_bw)
    r = gemini.simulate(gemini.load(file), bw, parse_frequency(clock, "--clock"),
                        parse_bandwidth(noc_bw, "--noc-bw") if noc_bw else None, hop_cycles)
    table = Table(title=f"replay of {Path(file).name} at {dram_bw} DRAM, {clock} clock")
    table.add_column("resource")
    table.add_column("busy (ms)", justify="right")
    table.add_column("utilization", justify="right")
    for core, busy in r.core_busy:
        table.add_row(f"core {core}", f"{busy * 1e3:.3f}", _pct(busy, r.makespan))
    table.add_row("DRAM", f"{r.dram_busy * 1e3:.3f}", _pct(r.dram_busy, r.makespan))
    if r.mesh:
        mesh_busy = sum(s.duration for s in r.mesh)
        table.add_row("mesh (all links)", f"{mesh_busy * 1e3:.3f}", _pct(mesh_busy, r.makespan))
    con = _console()
    con.print(table)
    con.print(f"makespan            {r.makespan * 1e3:.3f} ms")
    con.print(f"sum of time fields  {r.sum_time * 1e3:.3f} ms  (makespan / sum = "
              f"{r.makespan / r.sum_time if r.sum_time else float('nan'):.3f})")
    moved = sum(s.bytes for s in r.transfers)
    con.print(f"DRAM bytes moved    {moved:,}")


def _bandwidth(text: str) -> float | None:
    return None if text.strip().lower() in ("inf", "infinite", "none") else parse_bandwidth(text, "--dram-bw")


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"
