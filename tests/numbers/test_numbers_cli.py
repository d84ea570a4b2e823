"""``npuweave numbers``: quantize, tune, info, demo; user errors exit 2 in one line."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from npuweave.cli.numbers import numbers
from npuweave.numbers import parse_config


def run(args):
    return CliRunner().invoke(numbers, args, catch_exceptions=False)


def test_quantize_prints_stats_and_writes(tmp_path):
    src, out = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(src, np.array([0.3, -0.7, 5.0], np.float32))
    res = run(["quantize", str(src), "-f", "FIXED 4 1", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "max_abs_error" in res.output and "saturated" in res.output
    assert np.load(out).tolist() == [0.25, -0.75, 0.875]


def test_info_shows_the_tuple():
    res = run(["info", "EXP", "8"])
    assert "(1, 7, 0, 63)" in res.output


def _write_descriptors(tmp_path):
    (tmp_path / "fpga.yaml").write_text(
        'supported_formats:\n  FPGA: ["FLOAT 32", "FLOAT 16", "FIXED 2-16", "EXP 2-6"]\n')
    (tmp_path / "net.yaml").write_text(textwrap.dedent("""\
        platform: FPGA
        layer_name: [fc1, fc2]
        wgt_size: [100, 50]
        act_size: [10, 5]
        layerwise_opt: WGT-ONLY
    """))
    (tmp_path / "myeval.py").write_text(textwrap.dedent("""\
        def evaluate(cfg, subset):
            return 0.9 if all(f.bits >= 4 for f in cfg.values()) else 0.3
    """))


@pytest.mark.parametrize("method", ["libnumber", "ristretto", "stripes"])
def test_tune_writes_config_and_log(tmp_path, monkeypatch, method):
    _write_descriptors(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out, log = tmp_path / "opt_conf.txt", tmp_path / "log.csv"
    res = run(["tune", "--network", str(tmp_path / "net.yaml"), "--platform",
               str(tmp_path / "fpga.yaml"), "--evaluate", "myeval:evaluate", "-o", str(out),
               "--log", str(log), "--baseline", method])
    assert res.exit_code == 0, res.output
    cfg = parse_config(out, register=False)
    assert min(f.bits for f in cfg.values()) >= 4
    assert log.read_text().startswith("iteration,phase,subset,accuracy,objective")


def test_user_errors_exit_2_in_one_line(tmp_path):
    (tmp_path / "net.yaml").write_text("platform: FPGA\nlayer_name: [a]\nerr_margin: 3\n")
    (tmp_path / "p.yaml").write_text("supported_formats: {FPGA: [FIXED 8]}\n")
    for args in (["numbers", "info", "FLAOT", "8"],
                 ["numbers", "quantize", str(tmp_path / "none.npy"), "-f", "FIXED 8"],
                 ["numbers", "tune", "-n", str(tmp_path / "net.yaml"), "-p",
                  str(tmp_path / "p.yaml")]):
        proc = subprocess.run([sys.executable, "-m", "npuweave", *args], capture_output=True,
                              text=True)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
        assert "Traceback" not in proc.stderr


def _one_line_exit_2(*args):
    proc = subprocess.run([sys.executable, "-m", "npuweave", "numbers", *args],
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    return proc.stderr


def test_quantize_bad_arrays_and_formats_name_the_problem(tmp_path):
    (tmp_path / "text.npy").write_text("hello")
    np.save(tmp_path / "obj.npy", np.array([{}, None], dtype=object), allow_pickle=True)
    np.save(tmp_path / "cplx.npy", np.array([1 + 2j]))
    np.save(tmp_path / "ok.npy", np.zeros(3, np.float32))
    assert "not a .npy file" in _one_line_exit_2("quantize", str(tmp_path / "text.npy"),
                                                 "-f", "FIXED 8")
    assert "Object arrays" in _one_line_exit_2("quantize", str(tmp_path / "obj.npy"),
                                               "-f", "FIXED 8")
    assert "complex128" in _one_line_exit_2("quantize", str(tmp_path / "cplx.npy"),
                                            "-f", "FIXED 8")
    err = _one_line_exit_2("quantize", str(tmp_path / "ok.npy"), "-f", "FIXED -3")
    assert "--format 'FIXED -3'" in err and "-3" in err


def test_tune_bad_descriptors_and_budget_exit_2(tmp_path):
    _write_descriptors(tmp_path)
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    (tmp_path / "syntax.yaml").write_text("platform: [FPGA\n")
    net, plat = str(tmp_path / "net.yaml"), str(tmp_path / "fpga.yaml")
    assert "expected a mapping" in _one_line_exit_2("tune", "-n", str(tmp_path / "list.yaml"),
                                                    "-p", plat)
    assert "syntax.yaml: not valid YAML at line 2" in _one_line_exit_2(
        "tune", "-n", str(tmp_path / "syntax.yaml"), "-p", plat)
    (tmp_path / "bare.yaml").write_text("err_margin: 0.1\n")
    err = _one_line_exit_2("tune", "-n", str(tmp_path / "bare.yaml"), "-p", plat)
    assert "'platform'" in err and "'layer_name'" in err  # every missing field at once
    assert "max-evaluations" in _one_line_exit_2("tune", "-n", net, "-p", plat,
                                                 "--max-evaluations", "0")


def test_tune_progress_without_a_terminal_prints_a_line_every_few_seconds():
    from npuweave.cli.numbers import LineProgress

    t = iter([0.0, 0.5, 1.0, 6.0, 7.0, 12.0])
    lines: list[str] = []
    p = LineProgress(every_s=5.0, clock=lambda: next(t), echo=lines.append)
    for i in range(5):  # configurations finish at 0.5, 1, 6, 7 and 12 s
        p.update("tuning", advance=1, description=f"search acc 0.9{i}")
    assert lines == ["tuning: 1 configs, search acc 0.90, 0 s",
                     "tuning: 3 configs, search acc 0.92, 6 s",
                     "tuning: 5 configs, search acc 0.94, 12 s"]


def test_help_lists_every_choice():
    """profile/schedule/serve/loadgen --help name every cost model; sweep's every kind."""
    from npuweave.cli import cli
    from npuweave.cost.registry import cost_models
    from npuweave.experiments.sweep.kinds import KINDS

    for cmd in ("profile", "schedule", "serve", "loadgen"):
        out = CliRunner().invoke(cli, [cmd, "--help"], terminal_width=200).output
        missing = [m for m in cost_models() if m not in out]
        assert not missing, f"{cmd} --help omits {missing}"
    out = CliRunner().invoke(cli, ["sweep", "--help"], terminal_width=200).output
    assert all(k in out.split("kind:")[1].splitlines()[0] for k in KINDS), out


def test_demo_checks_its_margins_before_importing_scikit_learn(monkeypatch):
    """A bad --margin is refused before scikit-learn's import (seconds of CPU, which made the
    hostile case the slowest in-process one, 9.7 s under load against a 30 s bound): with
    scikit-learn unimportable, the error is still the margin's, not the missing extra's."""
    from npuweave.errors import ConfigError

    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn -> ImportError
    with pytest.raises(ConfigError, match="--margin 1.5 must lie in"):
        run(["demo", "--margin", "1.5"])
