"""``npuweave reproduce scalesim-v3-energy``: SCALE-Sim v3's ViT-base energy statements."""

from __future__ import annotations

import click


@click.command("scalesim-v3-energy")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True),
              default=None, help="Write the rows and the statements as JSON ('-': stdout).")
def reproduce_scalesim_energy(json_path: str | None) -> None:
    """ViT-base on 32x32, 64x64 and 128x128 arrays: speed, energy and EDP beside
    SCALE-Sim v3's paper (arXiv 2504.15377); assumptions in docs/ENERGY.md.

    \b
    Example:
      npuweave reproduce scalesim-v3-energy
    """
    from npuweave import report
    from npuweave.cli._console import console
    from npuweave.experiments.scalesim_energy import reproduce
    from npuweave.fileio import check_output_path, write_json

    check_output_path(json_path, "--json", allow_dash=True)
    rows, claims = reproduce()
    if json_path != "-":
        shown = [{"array": r["array"], "cycles": r["cycles"], "energy mJ": r["energy_j"] * 1e3,
                  "dynamic mJ": (r["energy_j"] - r["static_j"]) * 1e3,
                  "idle PE mJ": r["idle_pe_j"] * 1e3,
                  "static mJ": r["static_j"] * 1e3, "EDP J*s": f"{r['edp_js']:.3e}"}
                 for r in rows]
        console().print(report.rich_table(shown, title="ViT-base, one inference, weight stationary"))
        console().print(report.rich_table(claims, title="SCALE-Sim v3 (theirs) beside npuweave (ours)"))
    if json_path:
        write_json(json_path, {"rows": rows, "statements": claims})
        if json_path != "-":
            click.echo(f"wrote {json_path}")
