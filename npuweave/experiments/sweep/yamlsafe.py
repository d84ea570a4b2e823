"""Read a sweep spec file: YAML (or JSON) text -> plain Python data, one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from npuweave.errors import ConfigError

#: Spec files are short; a bigger one is a mistake (or an attack), not a sweep.
MAX_SPEC_BYTES = 1 << 20


def read_yaml(path: str | Path) -> Any:
    """Parse ``path`` as YAML (JSON is YAML too); name the file in every error."""
    p = Path(path)
    if not p.is_file():
        what = "does not exist" if not p.exists() else "is not a regular file"
        raise ConfigError(f"{p}: {what}; give the path of a sweep spec (YAML)")
    if p.stat().st_size > MAX_SPEC_BYTES:
        raise ConfigError(f"{p}: {p.stat().st_size:,} bytes is too large for a sweep spec "
                          f"(limit {MAX_SPEC_BYTES:,}); list axes, not points, in the file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not a text file (not UTF-8); a sweep spec is YAML") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{p}: not valid YAML{where}; fix the syntax") from None
    except RecursionError:
        raise ConfigError(f"{p}: YAML nested too deeply; a sweep spec is a flat mapping") \
            from None
