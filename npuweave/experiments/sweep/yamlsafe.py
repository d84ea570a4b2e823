"""Read a sweep spec file: YAML (or JSON) text -> plain Python data, one-line errors.

Goes through the package's bounded reader and YAML loader (``npuweave.fileio``): a missing,
non-regular, binary or oversized file, a syntax error, a tag, a duplicate key, deep nesting or
an alias bomb is a one-line ``ConfigError`` naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Spec files are short; a bigger one is a mistake (or an attack), not a sweep.
MAX_SPEC_BYTES = 1 << 20


def read_yaml(path: str | Path) -> Any:
    """Parse ``path`` as YAML (JSON is YAML too); name the file in every error."""
    from npuweave.fileio import load_yaml, read_user_text

    return load_yaml(read_user_text(path, "sweep spec", MAX_SPEC_BYTES), str(path))
