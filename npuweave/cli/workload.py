"""CLI for workloads and NPUs: ``models``, ``npus``, ``profile``, ``zoo export``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import click
from rich.table import Table

from npuweave.cli._console import console


@click.command()
def models() -> None:
    """List the built-in model zoo with layer counts, GMACs and weight MB (16-bit).

    \b
    Example:
      npuweave models
    """
    from npuweave.workload import load_layers, zoo

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
def npus() -> None:
    """List the NPU presets with peak TOP/s, DRAM GB/s and buffer sizes.

    \b
    Example:
      npuweave npus
    """
    from npuweave.hardware import preset, preset_names

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


def profile_rows(layers, costs) -> list[dict[str, object]]:
    """One plain dict per layer: what the table, CSV and JSON show."""
    rows = []
    for layer, c in zip(layers, costs, strict=True):
        rows.append({
            "name": layer.name, "kind": str(layer.kind), "macs": c.macs,
            "weight_bytes": c.weight_bytes, "act_bytes": c.act_bytes, "dram_bytes": c.dram_bytes,
            "compute_us": c.compute_s * 1e6, "memory_us": c.memory_s * 1e6,
            "intensity": c.intensity, "bound": c.bound, "utilization": c.utilization,
        })
    return rows


def _rows_csv(rows: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["name"])
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _load_formats(path: str, layers, model: str):
    """Parse a libnumber config file; say which of its names match no layer of the model."""
    from npuweave.numbers import parse_config

    fmt = parse_config(Path(path))
    unknown = sorted({key.rsplit(".", 1)[0] for key in fmt} - {layer.name for layer in layers})
    if unknown:
        more = " ..." if len(unknown) > 5 else ""
        console().print(f"[yellow]note:[/] {path}: {len(unknown)} name(s) match no layer of"
                        f" {model} and are ignored: {', '.join(unknown[:5])}{more}")
    return fmt


@click.command()
@click.argument("model")
@click.option("--npu", "npu_spec", default="memory-centric", show_default=True,
              help="Preset name or NPU YAML file.")
@click.option("--batch", type=click.IntRange(min=1), default=None,
              help="Batch size (default: the model's, else 1).")
@click.option("--cost-model", default="systolic-ws", show_default=True,
              help="systolic-ws | systolic-ws-db | prema | roofline")
@click.option("--formats", type=click.Path(dir_okay=False), default=None,
              help="libnumber configuration file giving per-layer weight formats.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None)
@click.option("--quiet", is_flag=True, help="Print only the totals.")
def profile(model, npu_spec, batch, cost_model, formats, csv_path, json_path, quiet) -> None:
    """Per-layer cost of MODEL (zoo name or .onnx file) on an NPU.

    \b
    Examples:
      npuweave profile resnet50 --npu memory-centric --batch 1 --csv rn.csv
      npuweave profile bert-base:seq_len=32 --npu prema --json bb.json
    """
    from npuweave.cost import profile as run_profile
    from npuweave.cost import unschedulable
    from npuweave.errors import ModelImportError
    from npuweave.fileio import check_output_path, write_json, write_text
    from npuweave.hardware import get_npu
    from npuweave.workload import load_graph, lower
    from npuweave.workload.layer import check_batch

    check_output_path(csv_path, "--csv")
    check_output_path(json_path, "--json")
    if batch is not None:
        check_batch(batch)
    npu = get_npu(npu_spec)
    graph = load_graph(model)
    batch = batch or int(graph.meta.get("batch", 1) or 1)
    layers = lower(graph)
    if not layers:
        raise ModelImportError(f"{model}: the model has no layers to cost (only pass-through "
                               "ops such as Identity or Reshape); give a model that computes")
    fmt = _load_formats(formats, layers, graph.name) if formats else None
    costs = run_profile(layers, npu, batch=batch, formats=fmt, model=cost_model)
    rows = profile_rows(layers, costs)
    total = costs[0]
    for cost in costs[1:]:
        total = total + cost
    if not quiet:
        console().print(_profile_table(rows, f"{graph.name} on {npu.name}, batch {batch}"))
    _print_totals(total, npu, batch)
    for name, why in unschedulable(layers, npu, batch, fmt):
        console().print(f"[yellow]note:[/] layer {name!r} cannot be scheduled whole: {why}")
    if csv_path:
        write_text(csv_path, _rows_csv(rows))
        console().print(f"wrote {csv_path}")
    if json_path:
        write_json(json_path, {"model": graph.name, "npu": npu.to_dict(), "batch": batch,
                               "cost_model": cost_model, "layers": rows,
                               "total": total.to_dict()})
        console().print(f"wrote {json_path}")


def _profile_table(rows: list[dict[str, object]], title: str) -> Table:
    table = Table(title=title)
    for col in ("#", "layer", "kind", "MACs", "weight B", "act B", "compute us", "memory us",
                "op/B", "bound"):
        table.add_column(col, justify="left" if col in ("layer", "kind", "bound") else "right")
    for i, r in enumerate(rows):
        inten = r["intensity"]
        table.add_row(str(i), str(r["name"]), str(r["kind"]), f"{r['macs']:,}",
                      f"{r['weight_bytes']:,}", f"{r['act_bytes']:,}", f"{r['compute_us']:.2f}",
                      f"{r['memory_us']:.2f}", "inf" if inten == float("inf") else f"{inten:.1f}",
                      str(r["bound"]))
    return table


def _print_totals(total, npu, batch: int) -> None:
    lower_bound = max(total.compute_s, total.memory_s)
    if lower_bound <= 0:
        console().print("total: empty model")
        return
    console().print(
        f"[bold]total[/]: {total.macs / 1e9:.3f} GMACs, weights {total.weight_bytes / 2**20:.2f}"
        f" MiB, DRAM {total.dram_bytes / 2**20:.2f} MiB; PE utilization {total.utilization:.1%}")
    console().print(
        f"[bold]time[/]: compute {total.compute_s * 1e3:.3f} ms, memory {total.memory_s * 1e3:.3f}"
        f" ms -> {total.bound}-bound; alone at best max(compute, memory) ="
        f" {lower_bound * 1e3:.3f} ms, {batch / lower_bound:.1f} inferences/s")


@click.group()
def zoo() -> None:
    """Zoo utilities (export a zoo model as an ONNX file).

    \b
    Example:
      npuweave zoo export bert-base bert.onnx
    """


@zoo.command("export")
@click.argument("model")
@click.argument("path", type=click.Path(dir_okay=False))
def zoo_export(model: str, path: str) -> None:
    """Write zoo MODEL (``bert-base`` or ``bert-base:seq_len=32``) as an ONNX file at PATH.

    Shapes only, no weight data; ``npuweave profile PATH`` reads it back to the same layers.

    \b
    Example:
      npuweave zoo export bert-base:seq_len=32 bert.onnx
    """
    from npuweave.fileio import check_output_path
    from npuweave.workload import parse_model_spec
    from npuweave.workload import zoo as zoo_mod
    from npuweave.workload.export import save_onnx

    check_output_path(path, "PATH")
    name, params = parse_model_spec(model)
    graph = zoo_mod.build(name, **params)
    save_onnx(graph, path)
    console().print(f"wrote {path} ({graph.name}, {len(graph.ops)} ops)")
