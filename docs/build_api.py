"""Build the API reference (HTML) from npuweave's docstrings with pdoc; fail on any warning.

    pip install 'npuweave[docs]'
    python docs/build_api.py            # writes build/api/index.html
    python docs/build_api.py OUT_DIR

pdoc renders numpydoc sections; a docstring or annotation it cannot read becomes a warning,
and CI (``.ci/run``) treats any warning as an error so the reference stays complete.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from pathlib import Path

#: The documented packages: every stage of the pipeline plus the shared modules.
MODULES = [
    "npuweave", "npuweave.errors", "npuweave.fileio", "npuweave.workload", "npuweave.hardware",
    "npuweave.cost", "npuweave.schedule", "npuweave.sim", "npuweave.metrics", "npuweave.report",
    "npuweave.experiments", "npuweave.compile", "npuweave.numbers",
    "npuweave.workload.scalesim", "npuweave.hardware.scalesim", "npuweave.hardware.schema",
]


def _load_lazy_names() -> None:
    """Resolve names a package exports lazily (module ``__getattr__``), so pdoc finds them."""
    import importlib
    import pkgutil

    import npuweave

    for name in npuweave.__all__:  # the package itself exports the front door lazily
        getattr(npuweave, name)
    for info in pkgutil.walk_packages(npuweave.__path__, "npuweave."):
        if not info.ispkg:
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            getattr(module, name)


def main(argv: list[str]) -> int:
    try:
        import pdoc
        import pdoc.render
    except ImportError:
        print("error: pdoc is not installed; install it with: pip install 'npuweave[docs]'",
              file=sys.stderr)
        return 2
    out = Path(argv[0] if argv else "build/api").resolve()
    # document this checkout's sources (not an installed copy), from a neutral folder so pdoc
    # does not wonder which 'npuweave' is meant
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    os.chdir(tempfile.mkdtemp(prefix="npuweave-api-"))
    _load_lazy_names()
    pdoc.render.configure(docformat="numpy", search=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*MODULES, output_directory=out)
    for w in caught:
        print(f"warning: {w.filename}:{w.lineno}: {w.message}", file=sys.stderr)
    pages = len(list(out.rglob("*.html")))
    print(f"API reference: {pages} pages in {out}/ ({len(caught)} warnings)")
    return 1 if caught or pages < len(MODULES) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
