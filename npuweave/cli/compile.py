"""``npuweave compile``: layer-group compilation into local memory.

``npuweave compile groups MODEL --npu lmem-16m [--method greedy|dp] [--batch N]
[--json groups.json] [--png lmem.png]`` prints the groups, the totals against running layer
by layer, and writes the stable JSON (docs/LAYERGROUP.md) and the LMEM allocation picture.
"""

from __future__ import annotations

from pathlib import Path

import click

from npuweave.compile.layergroup.model import GroupPlan, GroupStatus


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:,.2f}"


def _group_table(plan: GroupPlan):  # -> rich.table.Table
    from rich.table import Table

    table = Table(title=f"Layer groups: {plan.model} on {plan.npu} (batch {plan.batch}, "
                        f"{plan.method})")
    for col in ("#", "layers", "first .. last", "N x H", "LMEM MiB", "DRAM MB", "saved MB",
                "cycles"):
        table.add_column(col, justify="left" if col == "first .. last" else "right")
    for k, g in enumerate(plan.groups):
        span = g.layers[0] if len(g.layers) == 1 else f"{g.layers[0]} .. {g.layers[-1]}"
        slices = (f"{g.n_slices} x {g.h_slices}" if g.status is GroupStatus.GROUPED
                  else "[yellow]ungrouped[/]")
        table.add_row(str(k), str(len(g.layers)), span, slices, f"{g.lmem_peak / 2**20:.2f}",
                      _mb(g.dram_bytes), _mb(g.dram_saved),
                      f"{round(g.seconds * plan.clock_hz):,}")
    return table


def _totals_table(plan: GroupPlan):
    from rich.table import Table

    table = Table(title="Totals")
    for col in ("", "layer groups", "layer by layer", "ratio"):
        table.add_column(col, justify="right")
    for label, got, base in (("DRAM MB", plan.dram_bytes, plan.baseline_dram_bytes),
                             ("cycles", plan.cycles, plan.baseline_cycles)):
        ratio = f"{got / base:.3f}" if base else "-"
        fmt = _mb if label.startswith("DRAM") else (lambda v: f"{v:,}")
        table.add_row(label, fmt(got), fmt(base), ratio)
    return table


@click.group(name="compile")
def compile_() -> None:
    """Layer-group compilation into local memory.

    \b
    Example:
      npuweave compile groups resnet50 --npu lmem-16m --method dp --batch 8 --json groups.json
    """


@compile_.command(name="groups", short_help="Partition a model into LMEM layer groups.")
@click.argument("model")
@click.option("--npu", "npu_spec", default="lmem-16m", show_default=True,
              help="NPU preset name or YAML file (needs lmem_bytes and lmem_banks).")
@click.option("--method", type=click.Choice(["dp", "greedy"]), default="dp", show_default=True,
              help="Group search: dynamic programming or the tail-to-head greedy.")
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True,
              help="Samples per inference (>= 1).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True),
              default=None, help="Write the plan as JSON (format in docs/LAYERGROUP.md; '-': stdout).")
@click.option("--png", "png_path", type=click.Path(dir_okay=False), default=None,
              help="Write each group's LMEM allocation (time x address) as one PNG.")
def groups(model: str, npu_spec: str, method: str, batch: int, json_path: str | None,
           png_path: str | None) -> None:
    """Partition MODEL (zoo name or .onnx) into layer groups that run out of LMEM.

    \b
    Example:
      npuweave compile groups resnet50 --npu lmem-16m --method dp --batch 8 \\
          --json groups.json --png lmem.png
    """
    from npuweave.cli._console import console as shared_console
    from npuweave.compile.layergroup import compile_groups, plan_to_dict
    from npuweave.fileio import FIGURE_SUFFIXES, check_output_path, write_json
    from npuweave.hardware import get_npu
    from npuweave.workload import load_layers
    from npuweave.workload.layer import check_batch

    check_output_path(json_path, "--json", allow_dash=True)
    check_output_path(png_path, "--png", FIGURE_SUFFIXES)
    check_batch(batch)

    npu = get_npu(npu_spec)
    name = Path(model).stem if model.endswith(".onnx") else model
    from rich.console import Console

    from npuweave.cli._console import pick

    with Console(stderr=True).status(f"searching layer groups ({method}) ..."):
        plan = compile_groups(load_layers(model), npu, batch=batch, method=method, model=name)
    # full width when piped, like every other command; on stderr when stdout carries the JSON
    console = shared_console() if json_path != "-" else pick(True)
    console.print(_group_table(plan))
    console.print(_totals_table(plan))
    for g in plan.ungrouped:
        console.print(f"[yellow]ungrouped[/] {g.layers[0]}: {g.reason}")
    if json_path:
        write_json(json_path, plan_to_dict(plan))
        if json_path != "-":
            console.print(f"wrote {json_path}")
    if png_path:
        from npuweave.compile.layergroup.plot import plot_plan

        plot_plan(plan, png_path)
        console.print(f"wrote {png_path}")


def _add_multicore() -> None:
    from npuweave.cli.compile_multicore import multicore

    compile_.add_command(multicore)


_add_multicore()
