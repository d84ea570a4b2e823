"""NPU specifications: the frozen ``NPU`` record, YAML loading with validation, presets."""

from npuweave.hardware.loader import (
    load_npu,
    npu_from_dict,
    parse_quantity,
    preset,
    preset_names,
)
from npuweave.hardware.npu import NPU, toy_npu
from npuweave.hardware.resolve import get_npu

__all__ = ["NPU", "get_npu", "load_npu", "npu_from_dict", "parse_quantity", "preset", "preset_names",
           "toy_npu"]
