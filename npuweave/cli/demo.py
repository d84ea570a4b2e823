"""``npuweave demo``: the main job on the built-in zoo and presets."""

from __future__ import annotations

import click


@click.command()
@click.option("--out", default="npuweave-demo", show_default=True, help="Output folder.")
def demo(out: str) -> None:
    """Profile ResNet-50 and BERT-base on the memory-centric NPU."""
    from npuweave.cli.workload import profile

    for model in ("resnet50", "bert-base"):
        profile.main(args=[model, "--npu", "memory-centric", "--quiet"], standalone_mode=False)
