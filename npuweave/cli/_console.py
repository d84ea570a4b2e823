"""One rich console for every command: full-width tables even when output is piped."""

from __future__ import annotations

import shutil
from functools import cache

from rich.console import Console


@cache
def console() -> Console:
    """A console as wide as the terminal, or 160 columns when stdout is not a terminal."""
    return Console(width=shutil.get_terminal_size((160, 24)).columns)
