"""Atomic file output: write to a temporary file beside the target, then rename.

Symlinks are written through to their target, non-regular targets are refused, the existing
file's mode is kept, SIGTERM removes the temporary file and a later run removes stale ones.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from npuweave.errors import ConfigError

#: The path that means "standard output" for every table and JSON writer.
STDOUT = "-"

_TMP_TAG = ".npuweave-tmp-"  # .NAME.npuweave-tmp-PID-RANDOM.tmp: a later run can spot stale ones
_live_temps: set[str] = set()
_prev_sigterm: Any = None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_kind(st: os.stat_result) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(st.st_mode):
            return name
    return "not a regular file"


def _resolve_target(path: str | os.PathLike[str]) -> tuple[Path, os.stat_result | None]:
    """The file to write: symlinks followed to their target; refuse anything not a regular file."""
    given = Path(path)
    target = Path(os.path.realpath(given))  # write through symlinks (a dangling one is created)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _unwritable(given, exc) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{given}: cannot write here, it is {file_kind(st)}; name a regular file "
                          "(or '-' for standard output where the option allows it)")
    return target, st


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's live process
        return True
    return True


def remove_stale_temps(target: str | os.PathLike[str]) -> list[Path]:
    """Delete temporary files left beside ``target`` by killed npuweave runs.

    A temporary file is stale when the process id in its name is no longer running.

    Examples
    --------
    >>> remove_stale_temps("out.csv")  # doctest: +SKIP
    []
    """
    t = Path(target)
    removed: list[Path] = []
    prefix = f".{t.name}{_TMP_TAG}"
    try:
        entries = list(t.parent.iterdir()) if t.parent.is_dir() else []
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix):].split("-", 1)[0]
        if pid_text.isdigit() and not _pid_alive(int(pid_text)):
            with contextlib.suppress(OSError):
                entry.unlink()
                removed.append(entry)
    return removed


def _on_sigterm(signum: int, frame: Any) -> None:
    for tmp in list(_live_temps):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _live_temps.clear()
    signal.signal(signal.SIGTERM, _prev_sigterm if callable(_prev_sigterm) else signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _guard(tmp: str) -> None:
    """Remember a live temp file; on SIGTERM (main thread only) delete it before dying."""
    global _prev_sigterm
    if not _live_temps and threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError):
            prev = signal.getsignal(signal.SIGTERM)
            # an ignored SIGTERM never interrupts the write: leave that choice alone
            if prev is not _on_sigterm and prev is not signal.SIG_IGN:
                _prev_sigterm = prev
                signal.signal(signal.SIGTERM, _on_sigterm)
    _live_temps.add(tmp)


def _unguard(tmp: str) -> None:
    _live_temps.discard(tmp)
    if not _live_temps and threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError, TypeError):
            if signal.getsignal(signal.SIGTERM) is _on_sigterm:
                signal.signal(signal.SIGTERM, _prev_sigterm if _prev_sigterm is not None
                              else signal.SIG_DFL)


@contextlib.contextmanager
def _stdout(mode: str) -> Iterator[IO[Any]]:
    stream: IO[Any] = sys.stdout.buffer if "b" in mode else sys.stdout
    yield stream
    stream.flush()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success rename it over ``path``.

    ``-`` streams to standard output. A symlink is written through (its target is replaced,
    the link stays); an existing file keeps its permission bits; a file with several hard
    links is rewritten in place once the new content is complete, so every link sees it.
    Directories, pipes and devices are refused with a ``ConfigError``. Temporary files are
    named ``.NAME.npuweave-tmp-PID-XXXX.tmp``; SIGTERM removes them, and the next write to
    the same path removes those a killed run left.

    Examples
    --------
    >>> with atomic_open("out.csv") as fh:  # doctest: +SKIP
    ...     fh.write("a,b\\n")
    """
    if str(path) == "-":
        with _stdout(mode) as stream:
            yield stream
        return
    target, st = _resolve_target(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}{_TMP_TAG}{os.getpid()}-",
                                   suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _unwritable(Path(path), exc) from None
    _guard(tmp)
    try:
        # mkstemp makes 0600: keep the replaced file's bits, else the usual umask ones
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        try:
            if st is not None and st.st_nlink > 1:
                shutil.copyfile(tmp, target)  # keep the inode so every hard link sees it
                os.unlink(tmp)
            else:
                os.replace(tmp, target)
        except OSError as exc:
            raise _unwritable(Path(path), exc) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        _unguard(tmp)


FIGURE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps", ".ps", ".tif", ".tiff",
                   ".webp")


def check_output_path(path: str | os.PathLike[str] | None, option: str,
                      suffixes: tuple[str, ...] | None = None, allow_dash: bool = False) -> None:
    """Refuse an output path before any work starts (wrong suffix, a directory, a pipe...).

    Examples
    --------
    >>> check_output_path("t.xyz", "--timeline", FIGURE_SUFFIXES)
    Traceback (most recent call last):
    ...
    npuweave.errors.ConfigError: --timeline t.xyz: unknown image suffix '.xyz'; use one of .png, .pdf, .svg, .jpg, .jpeg, .eps, .ps, .tif, .tiff, .webp
    """
    if path is None:
        return
    if str(path) == "-":
        if allow_dash:
            return
        raise ConfigError(f"{option} -: this output cannot go to standard output; give a file")
    suffix = Path(path).suffix.lower()
    if suffixes is not None and suffix not in suffixes:
        what = "image suffix" if suffixes == FIGURE_SUFFIXES else "suffix"
        raise ConfigError(f"{option} {path}: unknown {what} {suffix or '(none)'!r}; use one of "
                          f"{', '.join(suffixes)}")
    try:
        target, st = _resolve_target(path)
    except ConfigError as err:
        raise ConfigError(f"{option} {err}") from None
    _check_writable(Path(path), target, st, option)


#: Output suffixes by kind of output, for ``check_outputs`` (tables and JSON take any name).
DATA_SUFFIXES = {"parquet": (".parquet",), "figure": FIGURE_SUFFIXES}


def _check_writable(given: Path, target: Path, st: os.stat_result | None, option: str) -> None:
    """The nearest existing folder must take new files (missing folders are created when
    writing); an existing file must be writable. Tried with a probe file, as permission bits
    say nothing for root or on read-only and special file systems."""
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigError(f"{option} {given}: {str(folder)!r} is not a folder; choose another "
                          "path")
    try:
        fd, probe = tempfile.mkstemp(prefix=".npuweave-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
        if st is not None:
            os.close(os.open(target, os.O_WRONLY))
    except OSError as exc:
        raise ConfigError(f"{option} {given}: cannot write there ({exc.strerror or exc}); "
                          "choose a writable path") from None


def check_output_dir(path: str | os.PathLike[str] | None, option: str) -> None:
    """Refuse, before any work, an output folder that is a file or cannot take new files
    (a missing one is fine where its nearest existing parent can: it is created)."""
    if path is None:
        return
    given = Path(path)
    if given.exists() and not given.is_dir():
        raise ConfigError(f"{option} {given}: exists and is not a folder; choose another path")
    _check_writable(given, Path(os.path.realpath(given)) / "x", None, option)


def check_outputs(*outputs: tuple[str, Any, str | None]) -> None:
    """Check every ``(option, path, kind)`` output of one command before any work: each path
    as ``check_output_path`` does (``kind`` in ``DATA_SUFFIXES`` fixes the suffix; ``None``
    any suffix), and no two options naming one file (the second would silently replace the
    first).

    Examples
    --------
    >>> check_outputs(("--json", "a.json", "json"), ("--trace", "a.json", None))
    Traceback (most recent call last):
    ...
    npuweave.errors.ConfigError: --json and --trace both write a.json; give each output its own file
    """
    seen: dict[str, str] = {}
    for option, path, kind in outputs:
        if path is None:
            continue
        allow_dash = kind in ("json", "csv")
        check_output_path(path, option, DATA_SUFFIXES.get(kind or ""), allow_dash=allow_dash)
        if str(path) == STDOUT:
            key = STDOUT
        else:
            key = os.path.realpath(path)
        if key in seen:
            raise ConfigError(f"{seen[key]} and {option} both write {path}; give each output "
                              "its own file")
        seen[key] = option


def _unwritable(target: Path, exc: OSError) -> ConfigError:
    # the temporary file's name means nothing to the user: name the file they asked for
    return ConfigError(f"{target}: cannot write ({exc.strerror or exc}); choose a writable path")


def write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_open(path, "wb") as fh:
        fh.write(data)




def save_figure(fig: Any, path: str | os.PathLike[str], **kwargs: Any) -> None:
    """Save a matplotlib figure atomically (format from the suffix)."""
    fmt = Path(path).suffix.lstrip(".") or "png"
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format=fmt, **kwargs)


