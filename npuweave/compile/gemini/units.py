"""Parse quantities with units, as users type them: ``16GB/s``, ``800 MHz``, ``1.5e9``."""

from __future__ import annotations

import re

from npuweave.errors import ConfigError

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
           "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_NUMBER = r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*"
_RATE = re.compile(_NUMBER + r"(|k|K|M|G|T|Ki|Mi|Gi|Ti)(B/s|Bps|B)?\s*$")
_FREQ = re.compile(_NUMBER + r"(|k|K|M|G|T)(Hz)?\s*$", re.IGNORECASE)


def parse_bandwidth(text: str) -> float:
    """Bytes per second from ``"16GB/s"`` (decimal prefixes), ``"16GiB/s"`` or a plain number.

    Examples
    --------
    >>> parse_bandwidth("16GB/s"), parse_bandwidth("1 KiB/s"), parse_bandwidth("2e9")
    (16000000000.0, 1024.0, 2000000000.0)
    """
    m = _RATE.match(text)
    if m is None or (m.group(2) and not m.group(3)):
        raise ConfigError(f"bandwidth {text!r} not understood; write e.g. 16GB/s, 900MB/s, "
                          "16GiB/s or a number of bytes per second")
    value = float(m.group(1)) * _PREFIX[m.group(2)]
    if value <= 0:
        raise ConfigError(f"bandwidth {text!r} must be > 0")
    return value


def parse_frequency(text: str) -> float:
    """Hertz from ``"1GHz"``, ``"800 MHz"`` or a plain number.

    Examples
    --------
    >>> parse_frequency("1GHz"), parse_frequency("800MHz")
    (1000000000.0, 800000000.0)
    """
    m = _FREQ.match(text)
    if m is None:
        raise ConfigError(f"frequency {text!r} not understood; write e.g. 1GHz, 800MHz or a "
                          "number of hertz")
    prefix = m.group(2)
    scale = _PREFIX["k" if prefix.lower() == "k" else prefix.upper()]
    value = float(m.group(1)) * scale
    if value <= 0:
        raise ConfigError(f"frequency {text!r} must be > 0")
    return value
