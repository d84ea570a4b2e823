"""``npuweave compile multicore``: a model on a mesh of cores, written as Gemini IR."""

from __future__ import annotations

from pathlib import Path

import click

_EXAMPLE = """
Example:

    npuweave compile multicore resnet34 --npu gemini-like --cores 4 --mesh 2x2 --batch 4
    --dram-bw 16GB/s -o rn34_b4_c4.json --timeline t.png --trace t.json
"""


@click.command(name="multicore", epilog=_EXAMPLE)
@click.argument("model")
@click.option("--npu", "npu_spec", default="gemini-like", show_default=True,
              help="NPU preset or YAML with cores, mesh, l2_bytes and noc_bw.")
@click.option("--cores", type=int, default=None, help="Cores to use (default: the NPU's).")
@click.option("--mesh", default=None, help="Mesh as XxY, e.g. 2x2 (default: the NPU's).")
@click.option("--batch", type=int, default=1, show_default=True, help="Samples per inference.")
@click.option("--dram-bw", default=None, help="DRAM bandwidth, e.g. 16GB/s (default: the NPU's).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Gemini IR JSON to write.")
@click.option("--timeline", type=click.Path(dir_okay=False), help="Also draw the replay (PNG).")
@click.option("--trace", type=click.Path(dir_okay=False), help="Also write a Perfetto trace.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Also write the summary as JSON.")
def multicore(model: str, npu_spec: str, cores: int | None, mesh: str | None, batch: int,
              dram_bw: str | None, output: str, timeline: str | None, trace: str | None,
              json_path: str | None) -> None:
    """Split MODEL's layer groups across the cores of a mesh NPU and write Gemini IR.

    The output follows the published Gemini scheduler IR format, validates clean
    (`npuweave ir validate`) and replays (`npuweave ir simulate`).
    """
    from npuweave.compile import gemini
    from npuweave.compile.gemini.multicore import compile_multicore, multicore_npu, parse_mesh
    from npuweave.compile.gemini.units import parse_bandwidth
    from npuweave.fileio import check_outputs
    from npuweave.hardware import get_npu
    from npuweave.workload import load_layers
    from npuweave.workload.layer import check_batch

    check_batch(batch)
    check_outputs(("-o/--output", output, None), ("--timeline", timeline, "figure"),
                  ("--trace", trace, None), ("--json", json_path, "json"))
    npu = get_npu(npu_spec)
    xy = parse_mesh(mesh) if mesh else (npu.mesh[1], npu.mesh[0])
    n = cores if cores is not None else xy[0] * xy[1]
    bw = parse_bandwidth(dram_bw, "--dram-bw") if dram_bw else None
    npu = multicore_npu(npu, n, xy, bw)
    layers = load_layers(model)
    from rich.console import Console

    with Console(stderr=True).status(f"compiling {model} on {n} cores"):
        ir = compile_multicore(layers, npu, batch=batch)
        result = gemini.simulate(ir, npu.dram_bw, npu.clock_hz,
                                 npu.noc_bw if n > 1 else None, npu.noc_hop_cycles)
    gemini.dump(ir, output)
    _report(ir, result, model, output, json_path)
    if timeline:
        gemini.plot_timeline(ir, result, timeline, title=Path(output).name)
        click.echo(f"wrote {timeline}")
    if trace:
        gemini.write_trace(ir, result, trace)
        click.echo(f"wrote {trace}")


def _report(ir, result, model: str, output: str, json_path: str | None) -> None:
    from npuweave.cli._console import console
    from npuweave.compile import gemini
    from npuweave.fileio import write_json
    from npuweave.report import rich_table

    s = gemini.summarize(ir)
    row = {"model": model, "cores": len(ir.cores), "mesh": f"{ir.xlen}x{ir.ylen}",
           "batch": s.batch, "workloads": s.workloads,
           "dram_load_bytes": s.traffic_bytes("load"), "dram_store_bytes": s.traffic_bytes("store"),
           "mesh_bytes": sum(x.bytes for x in result.mesh), "peak_l2_bytes": s.peak_l2_bytes,
           "makespan_ms": round(result.makespan * 1e3, 4),
           "sum_time_ms": round(result.sum_time * 1e3, 4)}
    console().print(rich_table([row], title=f"{output}: validated, 0 violations"))
    if json_path:
        write_json(json_path, row)
        click.echo(f"wrote {json_path}")
    click.echo(f"wrote {output}")
