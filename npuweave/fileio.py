"""Atomic file output: write to a temporary file beside the target, then rename.

Every file npuweave writes (CSV, JSON, PNG, ONNX, config files) goes through here, so an
interrupted run never leaves a half-written output behind.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import gzip
import io
import json
import math
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from npuweave.errors import ConfigError, optional_module

#: The path that means "standard output" for every table and JSON writer.
STDOUT = "-"

_TMP_TAG = ".npuweave-tmp-"  # .NAME.npuweave-tmp-PID-RANDOM.tmp: a later run can spot stale ones
_live_temps: set[str] = set()
_prev_sigterm: Any = None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _kind(st: os.stat_result) -> str:
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
        raise ConfigError(f"{given}: cannot write here, it is {_kind(st)}; name a regular file "
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
        _resolve_target(path)
    except ConfigError as err:
        raise ConfigError(f"{option} {err}") from None


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


# --- bounded reading of user files (YAML specs, descriptors) --------------------------------

MAX_INPUT_BYTES = 64 * 2**20  # no spec or descriptor is anywhere near this
YAML_MAX_DEPTH = 64
YAML_MAX_NODES = 200_000  # counted with every alias expanded


def read_user_text(path: str | os.PathLike[str], what: str,
                   max_bytes: int = MAX_INPUT_BYTES) -> str:
    """Read a user's text file: one-line ``ConfigError`` for missing, odd or huge files.

    Examples
    --------
    >>> text = read_user_text("my_npu.yaml", "NPU spec")  # doctest: +SKIP
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise ConfigError(f"{p}: {what} not found; check the path") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{p}: cannot read {what}, it is {_kind(st)}; give a regular file")
    if st.st_size > max_bytes:
        raise ConfigError(f"{p}: {what} is {st.st_size} bytes, over the {max_bytes}-byte "
                          "limit; is this the right file?")
    try:
        return p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read {what} ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not a text file (not UTF-8); a {what} is text") from None


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML safely: plain tags only, no duplicate keys, bounded depth and alias expansion.

    Every problem is a one-line ``ConfigError`` naming ``source`` (and the line).

    Examples
    --------
    >>> load_yaml("a: 1\\nb: [2, 3]\\n", "x.yaml")
    {'a': 1, 'b': [2, 3]}
    """
    import yaml

    loader = None
    try:
        loader = _bounded_loader()(text)  # the reader checks the characters here already
        return loader.get_single_data()
    except _YamlLimitError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except yaml.reader.ReaderError as exc:
        raise ConfigError(f"{source}: not valid YAML (a non-printable character "
                          f"{exc.character!r} at offset {exc.position}); remove it") from None
    except yaml.constructor.ConstructorError as exc:
        raise ConfigError(f"{source}: {_yaml_where(exc)}{exc.problem}; npuweave reads plain "
                          "YAML only (no !!python or custom tags): remove the tag") from None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or type(exc).__name__
        where = _yaml_where(exc)
        at = f" at {where[:-2]}" if where else ""
        raise ConfigError(f"{source}: not valid YAML{at} ({problem}); fix the syntax") from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer of more than 4300 digits
        raise ConfigError(f"{source}: a value cannot be read ({str(exc)[:80]}); write a "
                          "shorter number") from None
    except RecursionError:
        raise ConfigError(f"{source}: YAML nested too deeply (limit {YAML_MAX_DEPTH} "
                          "levels); flatten it") from None
    finally:
        if loader is not None:
            loader.dispose()


def _yaml_where(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return f"line {mark.line + 1}: " if mark is not None else ""


class _YamlLimitError(Exception):
    """A YAML document over a limit or with duplicate keys (turned into ConfigError)."""


@functools.cache
def _bounded_loader() -> Any:
    import yaml
    from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

    class BoundedLoader(yaml.SafeLoader):
        """SafeLoader with a nesting limit, an expanded-size limit and duplicate-key errors."""

        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self._depth += 1
            if self._depth > YAML_MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _YamlLimitError(f"line {mark.line + 1}: nested deeper than "
                                      f"{YAML_MAX_DEPTH} levels; flatten it")
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_yaml_int(self, node: Any) -> Any:
            try:
                return super().construct_yaml_int(node)
            except ValueError:  # Python refuses to read integers of more than 4300 digits
                raise _YamlLimitError(f"line {node.start_mark.line + 1}: an integer of "
                                      f"{len(node.value)} characters; write a shorter "
                                      "number") from None

        def compose_document(self) -> Any:
            node = super().compose_document()
            _expanded_size(node, {})
            return node

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, MappingNode):
                seen: dict[Any, int] = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                            key_node, ScalarNode):
                        continue
                    key = self.construct_object(key_node)
                    line = key_node.start_mark.line + 1
                    if key in seen:
                        raise _YamlLimitError(f"line {line}: duplicate key {key!r} (first "
                                              f"at line {seen[key]}); keep one of them")
                    seen[key] = line
            return super().construct_mapping(node, deep=deep)

    def _expanded_size(node: Node, memo: dict[int, int]) -> int:
        # aliases share nodes: count each use, memoized by node id, so a bomb is caught early
        if id(node) in memo:
            return memo[id(node)]
        size = 1
        if isinstance(node, SequenceNode):
            size += sum(_expanded_size(n, memo) for n in node.value)
        elif isinstance(node, MappingNode):
            size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        if size > YAML_MAX_NODES:
            raise _YamlLimitError(f"line {node.start_mark.line + 1}: expands to more than "
                                  f"{YAML_MAX_NODES} values (anchors and aliases repeat "
                                  "their content); write the values out")
        memo[id(node)] = size
        return size

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    return BoundedLoader
# -- formats: the one JSON writer and the one CSV writer ------------------------------------------

def json_safe(obj: Any) -> Any:
    """``obj`` with every non-finite float (inf, -inf, NaN) replaced by ``None``.

    JSON has no infinity or NaN; Python's ``json`` writes the non-standard ``Infinity`` and
    ``NaN`` that strict readers (JavaScript's ``JSON.parse``, jq, Go, Rust) reject. npuweave
    writes ``null`` instead: a null number in our JSON means "infinite or undefined" (for
    example the arithmetic intensity of a layer without DRAM traffic). Tuples become lists
    and NumPy scalars and arrays become plain numbers and lists.

    Examples
    --------
    >>> json_safe({"a": float("inf"), "b": [1.5, float("nan")], "c": (1, 2)})
    {'a': None, 'b': [1.5, None], 'c': [1, 2]}
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k) if not isinstance(k, str) else k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "tolist") and callable(obj.tolist):  # NumPy scalars and arrays
        return json_safe(obj.tolist())
    return obj


def json_text(obj: Any, indent: int | None = 2, sort_keys: bool = False) -> str:
    """Strict JSON text of ``obj`` (non-finite floats as ``null``), newline-terminated.

    Examples
    --------
    >>> json_text({"x": float("inf")}, indent=None)
    '{"x": null}\\n'
    """
    return json.dumps(json_safe(obj), indent=indent, allow_nan=False, sort_keys=sort_keys) + "\n"


def _is_stdout(path: str | os.PathLike[str]) -> bool:
    return str(path) == STDOUT


def write_json(path: str | os.PathLike[str], obj: Any, indent: int | None = 2) -> None:
    """Write ``json_text(obj)``: to stdout for ``-``, gzip-compressed for a ``.gz`` name,
    else as UTF-8 text, always atomically.

    Examples
    --------
    >>> write_json("run.json.gz", {"ok": True})  # doctest: +SKIP
    """
    text = json_text(obj, indent)
    if _is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
    elif str(path).endswith(".gz"):
        # mtime=0 keeps the bytes reproducible: the same run gives the same file
        write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        write_text(path, text)


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # full precision; inf and nan as Python spells them
    return value


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
             header: bool = True) -> str:
    """CSV text of flat rows: a header, one line per row, LF line ends, ``None`` as empty.

    ``columns`` fixes the column order (default: first appearance over all rows);
    ``header=False`` leaves the header out (rows appended to an existing file).

    Examples
    --------
    >>> csv_text([{"a": 1, "b": 0.5}, {"a": 2, "b": None}])
    'a,b\\n1,0.5\\n2,\\n'
    """
    cols = list(columns) if columns is not None else []
    if columns is None:
        for row in rows:
            cols.extend(k for k in row if k not in cols)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if header:
        writer.writerow(cols)
    for row in rows:
        writer.writerow([_csv_cell(row.get(c)) for c in cols])
    return buf.getvalue()


def write_csv(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]],
              columns: Sequence[str] | None = None) -> None:
    """Write ``csv_text(rows)`` to ``path`` atomically, or to stdout when ``path`` is ``-``.

    Examples
    --------
    >>> write_csv("-", [{"a": 1}])
    a
    1
    """
    text = csv_text(rows, columns)
    if _is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_text(path, text)


def check_parquet(path: str | os.PathLike[str] | None) -> None:
    """Fail early (before any work) when Parquet output is asked for but cannot be written."""
    if path is None:
        return
    if _is_stdout(path):
        raise ConfigError("Parquet is binary and cannot go to stdout ('-'); give a file name")
    optional_module("pandas", "parquet")
    optional_module("pyarrow", "parquet")


def write_parquet(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """Write flat rows as an Apache Parquet file (needs the ``parquet`` extra).

    Examples
    --------
    >>> write_parquet("rows.parquet", [{"a": 1}])  # doctest: +SKIP
    """
    check_parquet(path)
    pd = optional_module("pandas", "parquet")
    buf = io.BytesIO()
    pd.DataFrame(list(rows)).to_parquet(buf, index=False)
    write_bytes(path, buf.getvalue())
