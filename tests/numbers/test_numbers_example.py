"""The shipped `numbers tune` example (docs/examples/numbers, repeated in README.md) is
complete: its descriptors load, name layers of the NCF zoo model, and its evaluation command
prints an accuracy that falls when the weights get coarser."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from npuweave.numbers.descriptors import load_network, load_platform
from npuweave.workload import load_layers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "numbers"


def test_readme_repeats_the_example_files_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in ("fpga.yaml", "net.yaml", "eval_mlp.py"):
        m = re.search(rf"cat > {re.escape(name)} <<'EOF'\n(.*?)^EOF$", readme, re.S | re.M)
        assert m, f"README has no heredoc for {name}"
        assert m.group(1) == (EXAMPLE / name).read_text(encoding="utf-8"), name


def test_descriptors_load_and_name_ncf_layers():
    net = load_network(EXAMPLE / "net.yaml")
    platform = load_platform(EXAMPLE / "fpga.yaml")
    assert net.layer_name == ("mlp0", "mlp1", "mlp2") and net.cmd_fullset
    assert platform.devices() == ["FPGA"]
    names = {layer.name for layer in load_layers("ncf")}
    assert set(net.layer_name) <= names


def _accuracy(tmp_path: Path, fmt: str) -> float:
    cfg = tmp_path / "cfg.txt"
    cfg.write_text("".join(f"mlp{i}.weight {fmt}\n" for i in range(3)))
    env = {**os.environ, "NUMBER_CONFIG": str(cfg), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(EXAMPLE / "eval_mlp.py")], env=env,
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return float(re.fullmatch(r"Accuracy: (\S+)\n", out).group(1))


def test_evaluation_command_measures_quantization_loss(tmp_path):
    # float32 weights reproduce the float model exactly; 2-bit fixed point cannot
    assert _accuracy(tmp_path, "FLOAT 32") == 1.0
    assert _accuracy(tmp_path, "FIXED 2") < 0.9
