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
