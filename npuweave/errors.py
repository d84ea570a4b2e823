"""The error tree every part of npuweave raises for bad user input.

A user error names the object (file, field, layer, node) and the bad value, and says what
to do. The CLI prints ``str(err)`` on one line and exits with status 2; nothing else is
caught there, so a traceback always means a bug in npuweave.
"""

from __future__ import annotations


class NpuweaveError(Exception):
    """Base class of every user-facing npuweave error."""


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


def unknown_name(kind: str, name: str, valid: list[str] | tuple[str, ...]) -> UnknownNameError:
    """Build the standard 'unknown X' error that lists the valid names."""
    return UnknownNameError(f"unknown {kind} {name!r}; choose one of: {', '.join(sorted(valid))}")
