"""Bounded reading of user files: size-checked text and a safe YAML loader (plain tags only,
no duplicate keys, bounded depth and alias expansion), every problem a one-line error.
"""

from __future__ import annotations

import functools
import json
import os
import stat
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError
from npuweave.fileio.atomic import file_kind

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
        raise ConfigError(f"{p}: cannot read {what}, it is {file_kind(st)}; give a regular file")
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



# --- strict JSON: what json.loads lets through silently ------------------------------------

def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number; write a finite number (or null)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} is given twice in one object; give each key once")
        out[key] = value
    return out


def load_json(text: str | bytes, source: str) -> Any:
    """Parse JSON strictly: no key given twice in one object (the last silently won), no
    NaN/Infinity, bounded nesting; every problem a one-line ``ConfigError`` naming ``source``.

    Examples
    --------
    >>> load_json('{"a": 1}', "x.json")
    {'a': 1}
    >>> load_json('{"a": 1, "a": 2}', "x.json")
    Traceback (most recent call last):
    ...
    npuweave.errors.ConfigError: x.json: not valid JSON (key 'a' is given twice in one object; give each key once)
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except RecursionError:
        raise ConfigError(f"{source}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: not valid JSON ({str(exc).splitlines()[0]})") from None
