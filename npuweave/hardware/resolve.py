"""``get_npu``: one NPU from whatever names it: a preset, a YAML file, a SCALE-Sim ``.cfg``.

Its own module because it sits above both readers: ``loader`` (YAML and presets) and
``scalesim`` (``.cfg``, which builds on ``loader``'s validation).
"""

from __future__ import annotations

from pathlib import Path

from npuweave.hardware.loader import load_npu, preset
from npuweave.hardware.npu import NPU
from npuweave.hardware.scalesim import load_scalesim_cfg


def get_npu(spec: str | Path | NPU) -> NPU:
    """Resolve a preset name, a YAML path, a SCALE-Sim ``.cfg`` path, or an ``NPU``."""
    if isinstance(spec, NPU):
        return spec
    s = str(spec)
    if s.lower().endswith(".cfg"):
        return load_scalesim_cfg(s)
    if s.endswith((".yaml", ".yml")) or Path(s).is_file():
        return load_npu(s)
    return preset(s)
