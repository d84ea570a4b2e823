"""libnumber: number formats, vectorized quantization, the Number ADT, configuration and
descriptor files, and the accuracy-constrained per-layer auto-tuner (thesis chapter III).

Examples
--------
>>> import numpy as np
>>> from npuweave.numbers import FIXED, quantize
>>> quantize(np.array([0.3, 0.8], np.float32), FIXED(4, bias=1)).tolist()
[0.25, 0.75]
"""

from npuweave.numbers.codec import decode, encode
from npuweave.numbers.config import (
    NumberConfig,
    format_spec,
    parse_config,
    parse_format,
    write_config,
)
from npuweave.numbers.format import (
    BINARY,
    EXP,
    FIXED,
    FLOAT,
    FLOAT16,
    FLOAT32,
    Family,
    NumberFormat,
    Specials,
    make_format,
)
from npuweave.numbers.number import (
    Number,
    clear_registry,
    register_formats,
    registered_format,
    result_format,
    set_name,
)
from npuweave.numbers.quantize import (
    ExpDomain,
    QuantizeError,
    Rounding,
    quantization_error,
    quantize,
)

__all__ = [
    "BINARY",
    "EXP",
    "FIXED",
    "FLOAT",
    "FLOAT16",
    "FLOAT32",
    "ExpDomain",
    "Family",
    "Number",
    "NumberConfig",
    "NumberFormat",
    "QuantizeError",
    "Rounding",
    "Specials",
    "clear_registry",
    "decode",
    "encode",
    "format_spec",
    "make_format",
    "parse_config",
    "parse_format",
    "quantization_error",
    "quantize",
    "register_formats",
    "registered_format",
    "result_format",
    "set_name",
    "write_config",
]
