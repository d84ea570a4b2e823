"""CLI for workloads and NPUs: ``models``, ``npus``, ``profile``, ``zoo export``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from npuweave.cli import _console
from npuweave.cli._console import console, cost_model_help
from npuweave.cli._suggest import SuggestingGroup


@click.command()
@click.option("--family", type=click.Choice(["zoo", "llm"]), default="zoo", show_default=True,
              help="zoo: the DNN zoo; llm: the decoder-only LLM configs.")
def models(family: str) -> None:
    """List the built-in model zoo with layer counts, GMACs and weight MB (16-bit).

    \b
    Examples:
      npuweave models
      npuweave models --family llm
    """
    from npuweave.workload import load_layers, zoo

    if family == "llm":
        from npuweave.cli.llm import models_table

        console().print(models_table())
        return

    table = Table(title="npuweave model zoo (batch 1)")
    for col in ("model", "aliases", "layers", "weighted", "GMACs", "params (M)", "weights MB@16b"):
        table.add_column(col, justify="left" if col in ("model", "aliases") else "right")
    for name in zoo.names():
        layers = load_layers(name)
        params = sum(layer.weight_elems for layer in layers)
        table.add_row(name, ", ".join(zoo.aliases(name)), str(len(layers)),
                      str(sum(1 for layer in layers if layer.has_weights)),
                      f"{sum(layer.macs for layer in layers) / 1e9:.2f}",
                      f"{params / 1e6:.1f}", f"{params * 2 / 2**20:.1f}")
    console().print(table)


@click.command()
@click.option("--schema", is_flag=True,
              help="Print the JSON Schema of the NPU YAML (for editor completion) and exit.")
def npus(schema: bool) -> None:
    """List the NPU presets with peak TOP/s, DRAM GB/s and buffer sizes.

    \b
    Examples:
      npuweave npus
      npuweave npus --schema > npu.schema.json
    """
    from npuweave.hardware import preset, preset_names

    if schema:
        from npuweave.hardware.schema import shipped_schema_text

        click.echo(shipped_schema_text(), nl=False)
        return

    table = Table(title="npuweave NPU presets")
    for col in ("preset", "array", "clock MHz", "peak TOP/s", "DRAM GB/s", "ridge op/B",
                "weight buf MiB", "act buf MiB", "LMEM MiB/banks", "description"):
        table.add_column(col, justify="left" if col in ("preset", "description") else "right")
    for name in preset_names():
        n = preset(name)
        array = f"{n.arrays * n.cores}x{n.pe_rows}x{n.pe_cols}"
        lmem = f"{n.lmem_bytes / 2**20:g}/{n.lmem_banks}" if n.lmem_bytes else "-"
        table.add_row(name, array, f"{n.clock_hz / 1e6:g}", f"{n.peak_tops:.1f}",
                      f"{n.dram_bw / 1e9:g}", f"{n.ridge_ops_per_byte:.0f}",
                      f"{n.weight_buffer / 2**20:g}", f"{n.act_buffer / 2**20:g}", lmem,
                      n.description)
    console().print(table)


def _load_formats(path: str, layers, model: str, out):
    """Parse a libnumber config file; say which of its names match no layer of the model."""
    from npuweave.numbers import parse_config

    fmt = parse_config(Path(path))
    unknown = sorted({key.rsplit(".", 1)[0] for key in fmt} - {layer.name for layer in layers})
    if unknown:
        more = " ..." if len(unknown) > 5 else ""
        out.print(f"[yellow]note:[/] {path}: {len(unknown)} name(s) match no layer of"
                        f" {model} and are ignored: {', '.join(unknown[:5])}{more}")
    return fmt


@click.command()
@click.argument("model")
@click.option("--npu", "npu_spec", default="memory-centric", show_default=True,
              help="Preset name, NPU YAML file or SCALE-Sim .cfg file.")
@click.option("--batch", type=click.IntRange(min=1), default=None,
              help="Batch size (default: the model's, else 1).")
@click.option("--cost-model", default="systolic-ws", show_default=True,
              help=cost_model_help())
@click.option("--formats", type=click.Path(dir_okay=False), default=None,
              help="libnumber configuration file giving per-layer weight formats.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, allow_dash=True),
              default=None, help="Write the per-layer table as CSV ('-': stdout).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True),
              default=None, help="Write the profile as JSON ('-': stdout).")
@click.option("--parquet", "parquet_path", type=click.Path(dir_okay=False), default=None,
              help="Write the per-layer table as Parquet (needs npuweave[parquet]).")
@click.option("--quiet", is_flag=True, help="Print only the totals.")
def profile(model, npu_spec, batch, cost_model, formats, csv_path, json_path, parquet_path,
            quiet) -> None:
    """Per-layer cost of MODEL (zoo name, .onnx file or SCALE-Sim topology .csv) on an NPU.

    \b
    Examples:
      npuweave profile resnet50 --npu prema --csv rn.csv
      npuweave profile topology.csv --npu scale.cfg --json -
    """
    from npuweave.cost import profile_model, unschedulable
    from npuweave.cost.profiles import COLUMNS
    from npuweave.errors import ModelImportError
    from npuweave.fileio import (
        check_output_path,
        check_parquet,
        write_csv,
        write_json,
        write_parquet,
    )
    from npuweave.hardware import get_npu
    from npuweave.workload import load_graph, lower
    from npuweave.workload.layer import check_batch

    check_output_path(csv_path, "--csv", allow_dash=True)
    check_output_path(json_path, "--json", allow_dash=True)
    check_output_path(parquet_path, "--parquet")
    if batch is not None:
        check_batch(batch)
    if csv_path == "-" and json_path == "-":
        raise click.UsageError("--csv and --json cannot both go to stdout ('-'); give one a file")
    check_parquet(parquet_path)
    out = _console.pick("-" in (csv_path, json_path))
    npu = get_npu(npu_spec)
    from npuweave.workload.llm import llm_layers_for

    llm = llm_layers_for(model, npu.precision_bits)  # None unless MODEL is an LLM config
    fmt: Any
    if llm is not None:
        if batch is not None or formats:
            raise click.UsageError("an LLM phase sets its own batch and formats: write "
                                   f"{model.split(':')[0]}:phase=decode:batch=B:weights=int8")
        layers, fmt, name = llm
        from npuweave.cli.llm import check_phase_fits

        fit_note = check_phase_fits(model, npu, name)
        if fit_note:
            out.print(f"[yellow]note:[/] {fit_note}")
        batch = 1
        src = click.get_current_context().get_parameter_source("cost_model")
        if src == click.core.ParameterSource.DEFAULT:  # LLMs default to double-buffered
            from npuweave.sim.llm.costs import DEFAULT_COST_MODEL

            cost_model = DEFAULT_COST_MODEL
    else:
        graph = load_graph(model)
        batch, name = batch or int(graph.meta.get("batch", 1) or 1), graph.name
        layers = lower(graph)
        if not layers:
            raise ModelImportError(f"{model}: the model has no layers to cost (only "
                                   "pass-through ops such as Identity or Reshape); give a "
                                   "model that computes")
        fmt = _load_formats(formats, layers, graph.name, out) if formats else None
    prof = profile_model(layers, npu, batch=batch, formats=fmt, cost_model=cost_model,
                         name=name)
    energies, note = prof.energies()
    rows = prof.rows(energies)
    if not quiet:
        out.print(_profile_table(rows, f"{name} on {npu.name}, batch {batch}"))
    _print_totals(prof.total, npu, batch, out)
    _print_energy(prof.energy_summary(energies, note), out)
    for name, why in ([] if llm else unschedulable(layers, npu, batch, fmt)):
        out.print(f"[yellow]note:[/] layer {name!r} cannot be scheduled whole: {why}")
    for path, write in ((csv_path, lambda p: write_csv(p, rows, COLUMNS)),
                        (json_path, lambda p: write_json(p, prof.to_dict())),
                        (parquet_path, lambda p: write_parquet(p, rows))):
        if path:
            write(path)
            if path != "-":
                out.print(f"wrote {path}")


def _profile_table(rows: list[dict[str, object]], title: str) -> Table:
    table = Table(title=title)
    for col in ("#", "layer", "kind", "MACs", "weight B", "act B", "compute us", "memory us",
                "op/B", "bound", "energy uJ"):
        table.add_column(col, justify="left" if col in ("layer", "kind", "bound") else "right")
    for i, r in enumerate(rows):
        inten = r["intensity"]
        table.add_row(str(i), str(r["name"]), str(r["kind"]), f"{r['macs']:,}",
                      f"{r['weight_bytes']:,}", f"{r['act_bytes']:,}", f"{r['compute_us']:.2f}",
                      f"{r['memory_us']:.2f}", "inf" if inten == float("inf") else f"{inten:.1f}",
                      _bound_label(r), f"{r['energy_uj']:.2f}")
    return table


def _print_energy(summary: dict, out) -> None:
    """Energy of the model run alone, its split, and the default-table note."""
    if summary["note"]:
        out.print(f"[yellow]note:[/] {summary['note']}")
    total = summary["total_j"]
    if total <= 0:
        return
    split = ", ".join(f"{k} {summary[f'{k}_j'] / total:.0%}"
                      for k in ("compute", "sram", "dram", "static"))
    out.print(f"[bold]energy[/]: {total * 1e3:.3f} mJ ({summary['energy_per_inference_j'] * 1e3:.3f}"
              f" mJ/inference; {split}); average power {summary['avg_power_w']:.2f} W,"
              f" EDP {summary['edp_js']:.3e} J*s")


def _bound_label(row: dict[str, object]) -> str:
    """The bound, naming the vector unit when a layer without MACs (an embedding's gather and
    add, pooling) takes longer to compute than to fetch: it is not bound by the PE array."""
    if row["macs"] == 0 and row["bound"] == "compute":
        return "vector"
    return str(row["bound"])


def _print_totals(total, npu, batch: int, out) -> None:
    lower_bound = max(total.compute_s, total.memory_s)
    if lower_bound <= 0:
        out.print("total: empty model")
        return
    out.print(
        f"[bold]total[/]: {total.macs / 1e9:.3f} GMACs, weights {total.weight_bytes / 2**20:.2f}"
        f" MiB, DRAM {total.dram_bytes / 2**20:.2f} MiB; PE utilization {total.utilization:.1%}")
    out.print(
        f"[bold]time[/]: compute {total.compute_s * 1e3:.3f} ms, memory {total.memory_s * 1e3:.3f}"
        f" ms -> {total.bound}-bound; alone at best max(compute, memory) ="
        f" {lower_bound * 1e3:.3f} ms, {batch / lower_bound:.1f} inferences/s")


@click.group(cls=SuggestingGroup)
def zoo() -> None:
    """Zoo utilities (export a zoo model as an ONNX file).

    \b
    Example:
      npuweave zoo export bert-base bert.onnx
    """


@zoo.command("export")
@click.argument("model")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["onnx", "scalesim"]), default=None,
              help="onnx, or a SCALE-Sim topology CSV [default: scalesim for .csv, else onnx].")
def zoo_export(model: str, path: str, fmt: str | None) -> None:
    """Write zoo MODEL (``bert-base`` or ``bert-base:seq_len=32``) as a file at PATH.

    ONNX: shapes only, no weight data; ``npuweave profile PATH`` reads it back to the same
    layers. SCALE-Sim: one conv-form row per layer with array work (pooling, elementwise and
    embedding layers have no SCALE-Sim form and are listed); ``npuweave profile PATH`` reads
    it back to the same products and array cycles. The format cannot carry the vector-unit
    work fused into a layer (batch norm, activations, pooling, residual adds): the note
    says how much is left out.

    \b
    Examples:
      npuweave zoo export bert-base bert.onnx
      npuweave zoo export resnet50 rn.csv --format scalesim
    """
    from npuweave.fileio import check_output_path
    from npuweave.workload import lower, parse_model_spec
    from npuweave.workload import zoo as zoo_mod

    check_output_path(path, "PATH")
    fmt = fmt or ("scalesim" if path.lower().endswith(".csv") else "onnx")
    name, params = parse_model_spec(model)
    graph = zoo_mod.build(name, **params)
    if fmt == "scalesim":
        from npuweave.workload.scalesim import write_topology

        layers = lower(graph)
        skipped = write_topology(path, layers, graph)
        rows = len(layers) - len(skipped)
        console().print(f"wrote {path} ({graph.name}, {rows} SCALE-Sim layers)")
        fused = [la for la in layers if la.gemm is not None and la.vector_ops]
        if fused:
            ops = sum(la.vector_ops for la in fused)
            console().print(f"[yellow]note:[/] SCALE-Sim rows carry array work only: the "
                            f"array cycles read back exactly, but the {ops:,} vector-unit "
                            f"operations fused into {len(fused)} of them (batch norm, "
                            "activations, pooling, residual adds) are not in the file, so "
                            "'profile' of it shows that much less compute")
        if skipped:
            names = ", ".join(n for n, _ in skipped[:5]) + (" ..." if len(skipped) > 5 else "")
            console().print(f"[yellow]note:[/] {len(skipped)} layer(s) without array work have "
                            f"no SCALE-Sim form and were left out: {names}")
        return
    from npuweave.workload.export import save_onnx

    save_onnx(graph, path)
    console().print(f"wrote {path} ({graph.name}, {len(graph.ops)} ops)")
