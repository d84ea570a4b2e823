"""numba's on-disk cache of npuweave's kernels, kept in step with their sources.

numba keys a cached function on its own file only. The one decision loop
(``npuweave.schedule.loop``) copies in steps from other modules (``loop_steps``, ``kernel``,
``aimt_kernel``, ``buffer``), so after an edit of one of those its cached machine code would
still hold the old step. ``jit.compile`` calls ``fresh_cache`` first.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

#: The file, next to this module's cached bytecode, that holds ``fresh_cache``'s digest.
STAMP = "npuweave-kernels.stamp"


def fresh_cache(root: Path | None = None) -> bool:
    """Drop numba's on-disk cache of every npuweave kernel when any kernel source changed;
    True when it did.

    numba keys a cached function on its own file only: a loop whose inlined steps live in
    other modules (``schedule/loop.py`` copies in ``loop_steps``, ``kernel``,
    ``aimt_kernel``, ``buffer``) would otherwise keep the machine code of the steps as they
    were when it was compiled. One digest covers the source of every module under ``root``
    (the package) that defines kernels; when it differs from the one stamped beside the
    cache, every ``.nbi``/``.nbc`` file of the package goes, and the kernels compile afresh.
    An installed release never sees a change; a working tree pays one compile after an edit.
    Where the package's folders are not writable numba caches elsewhere, and nothing is done.
    """
    base = Path(__file__).resolve().parents[1] if root is None else root
    defines = re.compile(r"^@(jit\.)?kernel\b|^@_jit\b|^_PLAIN\[", re.M)
    sources = sorted(p for p in base.rglob("*.py") if defines.search(p.read_text("utf-8")))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    stamp = base / "__pycache__" / STAMP
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    try:
        stamp.parent.mkdir(exist_ok=True)
        for cached in (*base.rglob("*.nbi"), *base.rglob("*.nbc")):
            cached.unlink()
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba keeps its cache in the user's folder
        return False
    return True
