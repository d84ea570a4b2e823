"""The NPU of a sweep point: its ``npu`` preset or file with the point's ``npu.<field>``
overrides, built once per distinct setting (every kind of point uses it)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any


@cache
def _npu_for(name: str, overrides: tuple[tuple[str, Any], ...]) -> Any:
    from npuweave.hardware import get_npu
    from npuweave.hardware.loader import npu_from_dict

    npu = get_npu(name)
    if not overrides:
        return npu
    raw = {k: (list(v) if isinstance(v, tuple) else v) for k, v in npu.to_dict().items()}
    raw.update(dict(overrides))
    return npu_from_dict(raw, f"npu {name!r} with {dict(overrides)}")


def npu_of(params: Mapping[str, Any]) -> Any:
    """The point's NPU: its ``npu`` preset or file with every ``npu.<field>`` override."""
    over = tuple(sorted((k[4:], v) for k, v in params.items() if k.startswith("npu.")))
    return _npu_for(params["npu"], over)
