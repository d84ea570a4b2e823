"""The error tree every part of npuweave raises for bad user input.

A user error names the object (file, field, layer, node) and the bad value, and says what
to do. The CLI prints ``str(err)`` on one line and exits with status 2; nothing else is
caught there, so a traceback always means a bug in npuweave.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable
from types import ModuleType

#: DEL and the characters besides the C0 controls that end a line for ``str.splitlines``
_LINE_BREAKS = frozenset("\x7f\x85\u2028\u2029")


def one_line(text: str) -> str:
    """``text`` with control and line-break characters escaped as Python writes them
    (``\\n``, ``\\x85``), so a message quoting user input (a YAML key, a file name) stays
    one line.

    Examples
    --------
    >>> one_line("field 'a\\nb': bad")
    "field 'a\\\\nb': bad"
    """
    if not any(c < " " or c in _LINE_BREAKS for c in text):
        return text
    return "".join(repr(c)[1:-1] if c < " " or c in _LINE_BREAKS else c for c in text)


class NpuweaveError(Exception):
    """Base class of every user-facing npuweave error.

    The message is kept on one line: control characters quoted from the input (a name read
    from a file, a YAML key) are escaped (``one_line``).
    """

    def __init__(self, message: object = "", *rest: object) -> None:
        if isinstance(message, str):
            message = one_line(message)
        super().__init__(message, *rest)


class ConfigError(NpuweaveError):
    """A configuration (YAML spec, CLI option, config file) is malformed or out of range."""


class ModelImportError(NpuweaveError):
    """A model file cannot be imported (not ONNX, unsupported ops, missing shapes)."""


class UnknownNameError(NpuweaveError):
    """A name (model, preset, scheduler, format) is not registered; the message lists valid ones."""


class InfeasibleError(NpuweaveError):
    """The request cannot be carried out on the given hardware (e.g. a tile larger than a buffer)."""


class IRError(NpuweaveError):
    """A scheduler-IR file cannot be read (not JSON, missing required keys)."""


class MissingDependencyError(NpuweaveError):
    """An optional dependency (an install extra such as ``pandas``) is not installed."""


def did_you_mean(name: str, valid: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest valid names, or ``""`` when none is close.

    Matching ignores case (``difflib.get_close_matches``, cutoff 0.6).

    Examples
    --------
    >>> did_you_mean("resnet5", ["resnet50", "bert-base"])
    " (did you mean 'resnet50'?)"
    >>> did_you_mean("zzz", ["resnet50"])
    ''
    """
    choices = list(valid)
    folded = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(str(name).lower(), list(folded), n=3, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(folded[c]) for c in close) + "?)"


def unknown_name(kind: str, name: str, valid: list[str] | tuple[str, ...]) -> UnknownNameError:
    """Build the standard 'unknown X' error: close matches first, then every valid name."""
    hint = did_you_mean(name, valid)
    return UnknownNameError(f"unknown {kind} {name!r}{hint}; choose one of: "
                            f"{', '.join(sorted(valid))}")


def optional_module(module: str, extra: str) -> ModuleType:
    """Import an optional dependency, or raise one line saying which extra to install.

    Examples
    --------
    >>> optional_module("json", "pandas").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(
            f"{module} is not installed; install it with: pip install 'npuweave[{extra}]'"
        ) from None
