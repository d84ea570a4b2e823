"""The atomic writer never damages what it writes over, and never leaves temporary files."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from npuweave.errors import ConfigError
from npuweave.fileio import atomic_open, check_output_path, remove_stale_temps, write_text

ROOT = Path(__file__).resolve().parents[2]


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_symlink_is_written_through_and_kept(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_text(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new\n"
    assert _temps(tmp_path) == []


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "made.csv")
    write_text(link, "x\n")
    assert link.is_symlink() and (tmp_path / "made.csv").read_text() == "x\n"


def test_existing_mode_is_kept(tmp_path):
    p = tmp_path / "secret.json"
    p.write_text("{}")
    p.chmod(0o600)
    write_text(p, '{"a": 1}')
    assert stat.S_IMODE(p.stat().st_mode) == 0o600 and p.read_text() == '{"a": 1}'


def test_hard_links_all_see_the_new_content(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old")
    os.link(a, b)
    inode = a.stat().st_ino
    write_text(b, "new")
    assert a.read_text() == b.read_text() == "new"
    assert a.stat().st_ino == b.stat().st_ino == inode
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_non_regular_targets_are_refused_in_one_line(tmp_path, kind):
    p = tmp_path / "out.csv"
    os.mkfifo(p) if kind == "fifo" else p.mkdir()
    with pytest.raises(ConfigError) as exc:
        write_text(p, "x")
    msg = str(exc.value)
    assert str(p) in msg and "\n" not in msg
    assert ("named pipe" if kind == "fifo" else "directory") in msg
    assert _temps(tmp_path) == []
    with pytest.raises(ConfigError, match="--csv"):
        check_output_path(p, "--csv")


def test_character_device_is_refused_before_writing():
    # check_output_path never writes, so this is safe even if the check regressed
    with pytest.raises(ConfigError, match="character device"):
        check_output_path("/dev/null", "--csv")


@pytest.mark.skipif(os.geteuid() == 0, reason="as root, a regression would replace the real "
                    "/dev/null (it did once, with the old writer)")
def test_character_device_is_refused_by_the_writer():
    with pytest.raises(ConfigError, match="character device"):
        write_text("/dev/null", "x")


def test_dash_streams_to_stdout(capsys):
    with atomic_open("-") as fh:
        fh.write("a,b\n")
    assert capsys.readouterr().out == "a,b\n"


def test_failure_inside_the_block_keeps_the_old_file(tmp_path):
    p = tmp_path / "keep.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(p) as fh:
        fh.write("half")
        raise RuntimeError("boom")
    assert p.read_text() == "old" and _temps(tmp_path) == []


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_stale_temps_of_dead_runs_are_removed(tmp_path):
    target = tmp_path / "out.csv"
    stale = tmp_path / f".out.csv.npuweave-tmp-{_dead_pid()}-abc123.tmp"
    live = tmp_path / f".out.csv.npuweave-tmp-{os.getpid()}-def456.tmp"
    other = tmp_path / ".other.csv.npuweave-tmp-1-xyz.tmp"
    for p in (stale, live, other):
        p.write_text("partial")
    write_text(target, "done")
    assert not stale.exists() and live.exists() and other.exists()
    assert remove_stale_temps(target) == []


def test_sigterm_during_a_write_removes_the_temp_file(tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        from npuweave.fileio import atomic_open
        with atomic_open({str(tmp_path / "big.bin")!r}, "wb") as fh:
            fh.write(b"x" * 1_000_000)
            print("ready", flush=True)
            time.sleep(60)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env,
                            text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert len(_temps(tmp_path)) == 1  # the write is in flight
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM  # it still dies of the signal
    finally:
        proc.kill()
        proc.wait()
    assert _temps(tmp_path) == [] and not (tmp_path / "big.bin").exists()
