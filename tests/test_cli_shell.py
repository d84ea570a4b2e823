"""The CLI shell: help lists every area, user errors exit 2 in one line."""

import subprocess
import sys

from npuweave.cli import main


def test_help_lists_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as exc:  # click exits 0 after help
        assert exc.code in (0, None)
    out = capsys.readouterr().out
    for name in ("profile", "schedule", "ir", "numbers", "compile"):
        assert name in out


def test_unknown_command_exits_2():
    proc = subprocess.run(
        [sys.executable, "-m", "npuweave", "no-such-command"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "No such command" in proc.stderr


def test_usage_errors_are_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "npuweave", "profile", "resnet50", "--batch", "two"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--batch" in proc.stderr
    assert "npuweave profile --help" in proc.stderr


def test_atomic_files_get_normal_permissions(tmp_path):
    import os

    from npuweave.fileio import write_text

    mask = os.umask(0o022)
    try:
        write_text(tmp_path / "a.txt", "x")
    finally:
        os.umask(mask)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
