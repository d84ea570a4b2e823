"""Shared helpers of the ecosystem tests: run the CLI in-process, parse JSON strictly."""

from __future__ import annotations

import json
from typing import Any

from npuweave.cli import main


def run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    """Run ``npuweave ARGV``; return (exit code, stdout, stderr)."""
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def _reject(token: str) -> Any:
    raise ValueError(f"non-standard JSON constant {token!r}")


def strict_loads(text: str) -> Any:
    """``json.loads`` that rejects ``Infinity``, ``-Infinity`` and ``NaN`` as strict parsers do."""
    return json.loads(text, parse_constant=_reject)
