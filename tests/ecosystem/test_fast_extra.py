"""numba is the optional ``fast`` extra: imported lazily, guarded, and equal to the reference."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]

# A closed-loop Layerweaver run that the kernel covers (every unit fits the buffer; the
# kernel implements npuweave's idle-time reading).
_PLAN = """
from npuweave.schedule import make_tenant
from npuweave.schedule.plan import plan_using
def run(path):
    a = make_tenant("a", [4.0, 1.0, 3.0], [10, 30, 5], buffer_bytes=40)
    b = make_tenant("b", [1.0, 2.0], [35, 20], buffer_bytes=40)
    return plan_using(path, "layerweaver", [a, b], 40, 10.0, 5, reading="npuweave")
"""


def _python(*parts: str) -> str:
    code = "\n".join(textwrap.dedent(p) for p in parts)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO,
                         capture_output=True, text=True, env={"PYTHONPATH": str(REPO),
                                                              "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_numba_is_not_a_core_dependency():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("numba") for d in meta["dependencies"])
    assert any(d.startswith("numba") for d in meta["optional-dependencies"]["fast"])
    extras = meta["optional-dependencies"]
    assert any(d.startswith("pandas") for d in extras["pandas"])
    assert {d.split(">")[0] for d in extras["parquet"]} == {"pandas", "pyarrow"}


def test_numba_is_imported_lazily():
    out = _python("""
        import sys
        import npuweave, npuweave.cli, npuweave.schedule, npuweave.sim, npuweave.experiments
        from npuweave.schedule import kernel
        kernel.available()
        print("numba" in sys.modules)
    """)
    assert out == "False"


def test_without_numba_the_kernel_runs_as_python_and_matches():
    out = _python("""
        import sys
        sys.modules["numba"] = None  # as if the fast extra were not installed
    """, _PLAN, """
        from npuweave.schedule import kernel
        fast, ref = run("kernel"), run("python")
        print(kernel.available(), fast == ref, len(ref.order))
    """)
    assert out.split()[:2] == ["False", "True"] and int(out.split()[2]) == 5 * 5


def test_with_numba_the_compiled_kernel_matches_the_reference():
    pytest.importorskip("numba")
    out = _python(_PLAN, """
        from npuweave.schedule import kernel, loop
        fast, ref = run("kernel"), run("python")
        print(kernel.available(), type(loop.run_loop).__module__.split(".")[0], fast == ref)
    """)
    assert out == "True numba True"
