"""Commands that need an extra say so in one line on the plain install (no traceback).

The plain install is simulated by making the optional packages unimportable
(``sys.modules[name] = None``) in a fresh interpreter, so this runs wherever the extras are
installed too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = ("sklearn", "pandas", "pyarrow", "numba", "dask", "distributed", "mlperf_loadgen")
_RUN = ("import sys\n"
        f"for m in {EXTRAS!r}:\n"
        "    sys.modules[m] = None\n"
        "from npuweave.cli import main\n"
        "main(sys.argv[1:])\n")


def plain(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _RUN, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(ROOT),
                                                       "PATH": "/usr/bin:/bin",
                                                       "MPLBACKEND": "Agg"}, check=False)


@pytest.mark.parametrize(("args", "extra"), [
    (["numbers", "demo"], "digits"),
    (["loadgen", "--scenario", "SingleStream", "--models", "ncf", "--min-duration", "0.01s",
      "--out", "lg"], "loadgen"),
])
def test_a_command_needing_an_extra_names_it_in_one_line(args, extra, tmp_path):
    done = plain(args, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert f"pip install 'npuweave[{extra}]'" in lines[0]
    assert done.stdout == ""          # nothing started before the check
    assert not (tmp_path / "lg").exists()


def test_the_named_extras_exist():
    text = (ROOT / "pyproject.toml").read_text()
    for extra in ("digits", "loadgen"):
        assert f"\n{extra} = [" in text
