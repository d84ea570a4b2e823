"""One rich console for every command: full-width tables even when output is piped."""

from __future__ import annotations

import shutil
from functools import cache

from rich.console import Console


@cache
def console() -> Console:
    """A console as wide as the terminal, or 160 columns when stdout is not a terminal."""
    return Console(width=shutil.get_terminal_size((160, 24)).columns)


@cache
def err_console() -> Console:
    """Like ``console()`` but on stderr: for messages while stdout carries CSV or JSON."""
    return Console(stderr=True, width=shutil.get_terminal_size((160, 24)).columns)


def pick(data_on_stdout: bool) -> Console:
    """The console for human text: stderr when stdout carries data (an output path ``-``)."""
    return err_console() if data_on_stdout else console()


def cost_model_help() -> str:
    """``--cost-model`` help naming every registered cost model (never a stale list)."""
    from npuweave.cost.registry import cost_models

    return "Per-layer cost model: " + " | ".join(cost_models()) + "."
